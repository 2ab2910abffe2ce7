/**
 * The chat against hostile markdown in a real VS Code (code-server + Chromium): the hostile ACP agent
 * (test/fixtures/hostileAgent.ts `answer`) answers with raw HTML that hides a command inside a code block,
 * hiding markup of every kind, a remote image and a link to a file outside the workspace. Asserted on the
 * webview's DOM (what survives sanitizing), on the clipboard (Copy), on the Run modal's text and on what the
 * real terminal ran (files it wrote), on the link modal, and with `agentHost.chat.runCodeBlocks` off.
 * Screenshots: test-artifacts/chat-security-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { hostileAgent, repoRoot, scratchWorkspace } from '../support/paths';
import { chatFrame, send, turnIdle, waitText } from './chatUi';
import { stillAbsent, until } from '../support/wait';
import { withWorkbench } from './runner';
import { settled } from './waits';

/** The command the agent hides; it would write pwned.txt. */
const HIDDEN = '; echo PWNED > pwned.txt';
const FENCED = `echo RAN-FENCED > ran-fenced.txt<span hidden>${HIDDEN}</span>`;
const CLEAN = 'echo RAN-OK > ran.txt';

/** Tags our markdown renderer may produce (webview-ui/src/markdown.ts MARKDOWN_TAGS). */
const MARKDOWN_TAGS = [
  'P',
  'BR',
  'HR',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'STRONG',
  'EM',
  'DEL',
  'CODE',
  'PRE',
  'SPAN',
  'A',
  'UL',
  'OL',
  'LI',
  'BLOCKQUOTE',
  'TABLE',
  'THEAD',
  'TBODY',
  'TR',
  'TH',
  'TD',
];

async function dialog(page: Page): Promise<{ message: string; detail: string; buttons: string[] }> {
  const box = page.locator('.monaco-dialog-box');
  await box.waitFor({ state: 'visible', timeout: 30_000 });
  return {
    message: ((await box.locator('.dialog-message-text').first().textContent()) ?? '').trim(),
    detail:
      (await box
        .locator('.dialog-message-detail')
        .first()
        .textContent()
        .catch(() => '')) ?? '',
    buttons: (await box.locator('.dialog-buttons .monaco-button').allTextContents()).map((l) => l.trim()),
  };
}

async function press(page: Page, label: string): Promise<void> {
  const box = page.locator('.monaco-dialog-box');
  await box
    .locator('.dialog-buttons .monaco-button', { hasText: new RegExp(`^${label}$`) })
    .first()
    .click();
  await box.waitFor({ state: 'hidden', timeout: 10_000 });
}

async function palette(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(title);
  await page
    .locator('.quick-input-widget .monaco-list-row', { hasText: title.replace(/^[^:]+: /, '') })
    .first()
    .waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** The clipboard once it holds something other than `before` (polled: a page predicate's promise is not awaited). */
async function clipboardOtherThan(page: Page, before: string, timeoutMs = 15_000): Promise<string> {
  let text = before;
  await until(
    async () => {
      text = await page.evaluate(() => navigator.clipboard.readText());
      return text !== before;
    },
    { what: 'the clipboard to change', timeoutMs, intervalMs: 200 },
  );
  return text;
}

/** The text of a notification containing `text`: its toast, or (toasts are not always raised in a headless window) the center's item; '' if none. */
async function notification(page: Page, text: string, shot: () => Promise<unknown>): Promise<string> {
  const toast = page.locator('.notification-toast', { hasText: text }).first();
  if (
    await toast.waitFor({ timeout: 3000 }).then(
      () => true,
      () => false,
    )
  ) {
    await shot();
    return ((await toast.textContent()) ?? '').trim();
  }
  await palette(page, 'Notifications: Show Notifications');
  const item = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  const found = await item.waitFor({ timeout: 3000 }).then(
    () => true,
    () => false,
  );
  const shown = found ? ((await item.textContent()) ?? '').trim() : '';
  if (found) await shot();
  await page.keyboard.press('Escape');
  return shown;
}

/** The text of `file` once it exists and is not empty. */
function untilFile(file: string, timeoutMs = 30_000): Promise<string> {
  return until(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''), { what: `${path.basename(file)} to appear`, timeoutMs, intervalMs: 200 });
}

test('the chat renders hostile markdown inert, and Copy / Run / links use only what the user sees', { timeout: 300_000 }, async () => {
  for (const f of ['dist/extension.js', 'dist/webview/chat.js', 'out/test/fixtures/hostileAgent.js']) assert.ok(fs.existsSync(path.join(repoRoot, f)), `${f} is missing: npm run build`);
  const { scratch, workspace } = scratchWorkspace('chat-security');
  const outsideFile = path.join(scratch, 'outside', 'credentials');
  fs.mkdirSync(path.dirname(outsideFile), { recursive: true });
  fs.writeFileSync(outsideFile, '[default]\naws_access_key_id = AKIA-TEST\naws_secret_access_key = OUTSIDE-SECRET\n');
  const agent = { name: 'hostile markdown', command: process.execPath, args: [hostileAgent, 'answer'], env: {} };
  const md = [
    'RAW-PRE-START',
    '',
    `<pre><code class="language-bash">echo RAN-RAW > ran-raw.txt<span hidden>${HIDDEN}</span></code></pre>`,
    '',
    '```bash',
    FENCED,
    '```',
    '',
    '```bash',
    CLEAN,
    '```',
    '',
    'Inline <span hidden>HIDDEN-INLINE</span> and <span style="display:none">STYLE-HIDDEN</span> and <kbd>K</kbd>.',
    '',
    '<details><summary>more</summary>DETAILS-BODY</details>',
    '',
    '<div class="x" onclick="alert(1)">RAW-DIV</div>',
    '',
    '<table><tr><td>RAW-TABLE</td></tr></table>',
    '',
    'An image: <img src="https://example.com/track.png" alt="tracker">',
    '',
    '![remote image](https://example.com/pixel.png)',
    '',
    '| col A | col B |',
    '|---|---|',
    '| MD-CELL | 2 |',
    '',
    `See [the credentials](${outsideFile}#L3).`,
    '',
    // Link schemes that would run something in VS Code or the page.
    '[CMD-LINK](command:workbench.action.files.newUntitledFile) [JS-LINK](javascript:window.__pwned=1) [DATA-LINK](data:text/html,x) [VSCODE-LINK](vscode://file/etc/hostname)',
    '',
    'HOSTILE-MD-END',
  ].join('\n');
  const steps: string[] = [];
  let ok = false;
  try {
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name, 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 240_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(info.url).origin });
        // The view opens through its command (a click on the activity bar toggles the side bar: a second click
        // while the webview is slow to load on a busy machine would close it again).
        await page.locator('.activitybar [aria-label^="Atrium"]').first().waitFor({ state: 'visible', timeout: 60_000 });
        await palette(page, 'Atrium: Focus Chat Input');
        const frame = await chatFrame(page, 90_000);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await send(frame, `ANSWER ${JSON.stringify({ text: md })}`);
        await waitText(frame, '.msg.agent', 'HOSTILE-MD-END');
        await turnIdle(frame);

        // 1. What survives sanitizing: only markdown's own elements; every raw tag is text.
        const dom = await frame.evaluate(() => {
          const body = [...document.querySelectorAll('.msg.agent .md')].at(-1)!;
          // Ours: code-block actions, and the streamed renderer's wrappers (an agent's class never survives sanitizing).
          const ours = (el: Element) => !!el.closest('.code-actions') || el.classList.contains('codeblock') || el.classList.contains('md-part') || el.classList.contains('md-tail');
          const els = [...body.querySelectorAll('*')].filter((el) => !ours(el));
          return {
            tags: [...new Set(els.map((el) => el.tagName))].sort(),
            // Ours too: a code block's <pre> is a Tab stop (it may scroll sideways); tabindex elsewhere is not.
            attrs: [...new Set(els.flatMap((el) => [...el.attributes].map((a) => a.name).filter((a) => !(a === 'tabindex' && el.matches('.codeblock > pre.scrollbox')))))].sort(),
            hidden: body.querySelectorAll('[hidden], [style], details, img, kbd, div:not(.codeblock):not(.code-actions):not(.md-part):not(.md-tail)').length,
            text: body.textContent ?? '',
            pres: body.querySelectorAll('pre').length,
            blocks: [...body.querySelectorAll('.codeblock')].map((b) => ({ code: (b.querySelector('pre code') as HTMLElement).innerText, run: !!b.querySelector('[data-action="run"]') })),
            tables: [...body.querySelectorAll('table')].map((t) => t.textContent),
            links: [...body.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), text: a.textContent, image: !!a.querySelector('.codicon-file-media') })),
          };
        });
        steps.push(`DOM: tags ${dom.tags.join(',')}; attributes ${dom.attrs.join(',')}`);
        const stray = dom.tags.filter((t) => !MARKDOWN_TAGS.includes(t));
        assert.deepEqual(stray, [], `elements outside the markdown allowlist survived: ${stray.join(', ')}`);
        assert.deepEqual(
          dom.attrs.filter((a) => !['href', 'title', 'class', 'rel', 'start', 'align'].includes(a)),
          [],
        );
        assert.equal(dom.hidden, 0, 'hiding markup, images or raw elements survived');
        for (const literal of [
          '<pre><code class="language-bash">echo RAN-RAW > ran-raw.txt<span hidden>',
          '<span hidden>HIDDEN-INLINE</span>',
          '<span style="display:none">STYLE-HIDDEN</span>',
          '<details><summary>more</summary>DETAILS-BODY</details>',
          '<div class="x" onclick="alert(1)">RAW-DIV</div>',
          '<table><tr><td>RAW-TABLE</td></tr></table>',
          '<img src="https://example.com/track.png" alt="tracker">',
        ]) {
          assert.ok(dom.text.includes(literal), `raw HTML is not shown as text: ${literal}`);
        }
        assert.deepEqual(dom.tables.length, 1, 'only the markdown table is a table');
        assert.match(dom.tables[0] ?? '', /MD-CELL/);
        assert.ok(
          dom.links.some((l) => l.href === 'https://example.com/pixel.png' && l.text === 'remote image' && l.image),
          `the markdown image is not a placeholder link with an image icon: ${JSON.stringify(dom.links)}`,
        );
        // The raw <pre> is text without actions; the two fenced blocks have them, showing exactly their source.
        assert.equal(dom.pres, 2);
        assert.deepEqual(dom.blocks, [
          { code: FENCED, run: true },
          { code: CLEAN, run: true },
        ]);
        steps.push('raw HTML shown as text; only the two fenced blocks have actions, showing exactly their source');
        await frame.locator('.msg.agent').last().scrollIntoViewIfNeeded();
        await info.screenshot('chat-security-rendered');

        const blocks = frame.locator('.msg.agent').last().locator('.codeblock');
        // 2. Copy gives the visible text, exactly.
        await page.evaluate(() => navigator.clipboard.writeText('CLIPBOARD-BEFORE'));
        await blocks.nth(0).locator('[data-action="copy"]').click();
        const copied = await clipboardOtherThan(page, 'CLIPBOARD-BEFORE');
        assert.equal(copied, FENCED);
        assert.equal(copied, dom.blocks[0]!.code, 'Copy differs from what the block shows');
        steps.push(`Copy: ${JSON.stringify(copied)}`);

        // 3. Run asks in a modal with the exact text; Cancel sends nothing.
        await blocks.nth(0).locator('[data-action="run"]').click();
        const asked = await dialog(page);
        assert.equal(asked.detail, FENCED, 'the Run modal does not show exactly the visible text');
        assert.ok(asked.buttons.includes('Run'), `buttons: ${asked.buttons.join(' | ')}`);
        await press(page, 'Cancel');
        steps.push(`Run modal: "${asked.message}" / ${JSON.stringify(asked.detail)} → Cancel`);

        // 4. Run on the clean block: the modal shows it, Run sends it, the real terminal runs exactly that.
        await blocks.nth(1).locator('[data-action="run"]').click();
        const runAsked = await dialog(page);
        assert.equal(runAsked.detail, CLEAN);
        await settled(page.locator('.monaco-dialog-box'), 'the Run dialog');
        await info.screenshot('chat-security-run-modal');
        await press(page, 'Run');
        assert.equal((await untilFile(path.join(workspace, 'ran.txt'))).trim(), 'RAN-OK');
        // The terminal runs in order: the cancelled block and the hidden command never reached it.
        for (const f of ['pwned.txt', 'ran-fenced.txt', 'ran-raw.txt']) assert.equal(fs.existsSync(path.join(workspace, f)), false, `${f} was written`);
        // What the terminal shows, through its own Select All + Copy: the shown command, nothing else of ours.
        await page.evaluate(() => navigator.clipboard.writeText('CLIPBOARD-BEFORE'));
        await page.locator('.terminal-wrapper').first().click();
        await palette(page, 'Terminal: Select All');
        await page.keyboard.press('Control+Shift+C');
        const terminalText = await clipboardOtherThan(page, 'CLIPBOARD-BEFORE');
        assert.match(terminalText, /echo RAN-OK > ran\.txt/);
        assert.doesNotMatch(terminalText, /PWNED|RAN-FENCED|RAN-RAW|span/, `the terminal received more than the shown command: ${terminalText}`);
        steps.push(
          `terminal text: ${JSON.stringify(
            terminalText
              .replace(/\s+$/, '')
              .split('\n')
              .filter((l) => l.includes('echo')),
          )}`,
        );
        steps.push('Run: the terminal ran exactly the shown command (ran.txt); nothing hidden or cancelled ran');
        await info.screenshot('chat-security-terminal');

        // 5. A link to a file outside the workspace asks first, with the full path.
        const link = frame.locator('.msg.agent').last().locator('a', { hasText: 'the credentials' });
        await link.click();
        const linkAsked = await dialog(page);
        assert.equal(linkAsked.detail.trim(), outsideFile);
        assert.match(linkAsked.message, /outside the workspace/);
        await settled(page.locator('.monaco-dialog-box'), 'the link dialog');
        await info.screenshot('chat-security-link-modal');
        await press(page, 'Cancel');
        const tab = page.locator('.tabs-container .tab', { hasText: 'credentials' });
        assert.equal(await tab.count(), 0, 'the outside file opened without asking');
        await link.click();
        await dialog(page);
        await press(page, 'Open');
        await tab.first().waitFor({ timeout: 15_000 });
        steps.push(`outside link: modal with ${linkAsked.detail.trim()}; Cancel kept it closed, Open opened it`);

        // 5b. command:, javascript:, data: and vscode: links are plain text; a forged one clicked in the page
        //     (as if the sanitizer had let it through) reaches the extension, which opens nothing.
        for (const name of ['CMD-LINK', 'JS-LINK', 'DATA-LINK', 'VSCODE-LINK']) {
          assert.ok(dom.text.includes(name), `${name} lost its text`);
          assert.equal(
            dom.links.some((l) => l.text === name),
            false,
            `${name} is still a link: ${JSON.stringify(dom.links)}`,
          );
        }
        const untitled = page.locator('.tabs-container .tab', { hasText: /^Untitled-/ });
        const tabsBefore = await page.locator('.tabs-container .tab').count();
        for (const href of ['command:workbench.action.files.newUntitledFile', 'vscode://file/etc/hostname', 'javascript:window.__pwned=2']) {
          await frame.evaluate((h) => {
            const a = document.createElement('a');
            a.setAttribute('href', h);
            a.textContent = 'FORGED';
            [...document.querySelectorAll('.msg.agent .md')].at(-1)!.append(a);
            a.click();
            a.remove();
          }, href);
        }
        // Nothing may appear: watched for 2 s (an opened editor would show within a frame or two).
        await stillAbsent(async () => (await untitled.count()) > 0, 2000, 'an Untitled editor opened by a command: link');
        assert.equal(await page.locator('.tabs-container .tab').count(), tabsBefore, 'a forged link opened an editor');
        assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined, 'a javascript: link ran');
        steps.push('command:/javascript:/data:/vscode: links are text; forged ones clicked opened nothing');

        // 6. agentHost.chat.runCodeBlocks off (workspace setting): Run refuses with a message, no modal, nothing runs.
        fs.rmSync(path.join(workspace, 'ran.txt'));
        fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
        fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), '{ "agentHost.chat.runCodeBlocks": false }\n');
        const deadline = Date.now() + 45_000;
        let refused = '';
        // The settings file is picked up asynchronously: until it is, Run still asks (cancelled here).
        while (!refused) {
          if (Date.now() > deadline) throw new Error('Run did not refuse with agentHost.chat.runCodeBlocks off');
          if (await page.locator('.monaco-dialog-box').isVisible()) await press(page, 'Cancel');
          await blocks.nth(1).locator('[data-action="run"]').click();
          const modal = await page
            .locator('.monaco-dialog-box')
            .waitFor({ state: 'visible', timeout: 4000 })
            .then(
              () => true,
              () => false,
            );
          if (modal) {
            await press(page, 'Cancel');
            continue;
          }
          refused = await notification(page, 'agentHost.chat.runCodeBlocks', () => info.screenshot('chat-security-run-off'));
        }
        assert.equal(await page.locator('.monaco-dialog-box').isVisible(), false);
        assert.equal(fs.existsSync(path.join(workspace, 'ran.txt')), false, 'Run ran with runCodeBlocks off');
        steps.push(`runCodeBlocks off: "${refused}"`);
      },
    );
    ok = true;
  } finally {
    for (const s of steps) console.log(`[chat-security] ${s}`);
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
});
