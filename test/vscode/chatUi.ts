/// <reference lib="dom" />
/**
 * The sidebar chat in a real VS Code (code-server + Chromium), driven with Playwright against a real agent:
 * open the view, send a prompt, watch the tool card, approve in the workbench's modal dialog, see the file
 * and the final answer; markdown with highlighted code; hostile markdown that must stay inert; stop a running
 * turn with a message queued behind it; the mode picker; hide/show and window reload keep the transcript.
 * Every state is saved as a screenshot in the light and the dark theme (test-artifacts/chat-*-{light,dark}.png).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { domFigures, feedLong, reopen, scrollThrough } from './chatLong';
import { stillAbsent, until } from '../support/wait';
import { reloadWindow, withWorkbench, type WorkbenchInfo, type WorkbenchOptions } from './runner';
import { focusedRow, frameWhere, settled, showExplorer } from './waits';

export interface ChatUiOptions extends WorkbenchOptions {
  /** Log one line per step. */
  log?: (line: string) => void;
  /** The scripted model's requests so far (to check what reached the agent's model). */
  modelRequests?: () => { body: unknown }[];
  /** Name of a configured test/vscode/chatLongAgent agent: the flows end with a 2,000-message transcript there. */
  longAgent?: string;
}

/** The body of the model request whose text contains `marker` (the newest), as JSON text. */
function requestWith(opts: ChatUiOptions, marker: string): string | undefined {
  return (opts.modelRequests?.() ?? [])
    .map((r) => JSON.stringify(r.body))
    .filter((b) => b.includes(marker))
    .at(-1);
}

/** Labels in the theme picker. */
const THEMES = { light: 'Light Modern', dark: 'Dark Modern' } as const;

export interface ChatUiResult {
  screenshots: string[];
  steps: string[];
  modes: string[];
}

/** Finds the chat webview's inner frame (webviews nest two iframes deep). */
export async function chatFrame(page: Page, timeoutMs = 30_000): Promise<Frame> {
  return frameWhere(page, () => document.body?.dataset.ready === 'true' && !!document.querySelector('.composer textarea'), 'the chat webview (a frame with .composer textarea)', timeoutMs);
}

/** Switches the colour theme through the theme picker (what a person does); the dialog, if any, stays. */
async function setTheme(page: Page, theme: keyof typeof THEMES): Promise<void> {
  const dark = theme === 'dark';
  const isOn = () => page.evaluate((d) => document.querySelector('.monaco-workbench')?.classList.contains(d ? 'vs-dark' : 'vs') === true, dark);
  if (await isOn()) return;
  // Ctrl+K Ctrl+T opens the theme picker (the palette would also offer "Browse Color Themes in Marketplace").
  await page
    .locator('.part.editor')
    .click({ position: { x: 400, y: 300 } })
    .catch(() => undefined);
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+T');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: THEMES[theme] }).first().waitFor({ timeout: 15_000 });
  await input.fill(THEMES[theme]);
  await focusedRow(page, THEMES[theme]);
  await page.keyboard.press('Enter');
  await page.waitForFunction((d) => document.querySelector('.monaco-workbench')?.classList.contains(d ? 'vs-dark' : 'vs') === true, dark, { timeout: 10_000 });
  // The webviews get the new theme a moment later: every one that shows a theme shows this one.
  await until(
    async () => {
      for (const f of page.frames()) {
        if (f === page.mainFrame()) continue;
        const shown = await f.evaluate(() => document.body?.dataset.vscodeThemeName ?? null).catch(() => null);
        if (shown !== null && shown !== THEMES[theme]) return false;
      }
      return true;
    },
    { what: `the webviews in the ${THEMES[theme]} theme`, timeoutMs: 10_000 },
  );
}

export async function openChat(page: Page): Promise<Frame> {
  const item = page.locator('.activitybar [aria-label^="Atrium"]').first();
  await item.waitFor({ state: 'visible', timeout: 60_000 });
  const expanded = await item.getAttribute('aria-expanded').catch(() => null);
  const checked = await item.getAttribute('aria-checked').catch(() => null);
  const sideBarShown = () =>
    page
      .locator('.part.sidebar')
      .isVisible()
      .catch(() => false);
  // After a reload the container can be "active" with the side bar collapsed: a click shows it. A click on
  // the active container with the side bar shown would hide it, so look before clicking.
  if ((expanded !== 'true' && checked !== 'true') || !(await sideBarShown())) await item.click();
  return chatFrame(page, 30_000).catch(async () => {
    if (!(await sideBarShown())) await item.click();
    return chatFrame(page, 60_000);
  });
}

export async function send(frame: Frame, text: string): Promise<void> {
  const input = frame.locator('.composer textarea');
  await input.fill(text);
  await input.press('Enter');
}

export async function waitText(frame: Frame, selector: string, text: string | RegExp, timeoutMs = 90_000): Promise<void> {
  await frame.locator(selector, { hasText: text }).first().waitFor({ state: 'visible', timeout: timeoutMs });
}

async function clickDialog(page: Page, patterns: RegExp[], timeoutMs = 90_000): Promise<string> {
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: timeoutMs });
  const buttons = dialog.locator('.dialog-buttons .monaco-button');
  const labels = (await buttons.allTextContents()).map((l) => l.trim());
  const index = patterns.map((re) => labels.findIndex((l) => re.test(l))).find((i) => i >= 0);
  if (index === undefined) throw new Error(`no matching button in the dialog: [${labels.join(' | ')}]`);
  await buttons.nth(index).click();
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
  return labels[index]!;
}

/** Chooses `value` in the header picker `testid` and waits until the host's state says so. */
export async function pick(frame: Frame, testid: string, value: string): Promise<void> {
  await frame.locator(`[data-testid="${testid}"]`).evaluate((el, v) => {
    (el as HTMLElement & { value: string }).value = v;
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
  await pickerShows(frame, testid, value);
}

/** Waits until the header picker `testid` shows `value` as current. */
export async function pickerShows(frame: Frame, testid: string, value: string, timeout = 30_000): Promise<void> {
  await frame.waitForFunction(([id, v]) => (document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null)?.dataset.current === v, [testid, value] as const, { timeout });
}

const ALLOW = [/^allow once$/i, /^allow$/i, /allow/i, /^yes$/i];

export async function turnIdle(frame: Frame, timeoutMs = 90_000): Promise<void> {
  await frame.waitForFunction(() => document.body.dataset.turn === 'idle', undefined, { timeout: timeoutMs });
}

export async function runChatUi(opts: ChatUiOptions): Promise<ChatUiResult> {
  const log = opts.log ?? ((l: string) => console.log(`[chat-ui] ${l}`));
  const result: ChatUiResult = { screenshots: [], steps: [], modes: [] };
  const step = (s: string) => {
    result.steps.push(s);
    log(s);
  };
  await withWorkbench({ viewport: { width: 1280, height: 860 }, ...opts }, async (page, info) => {
    /** Screenshots the current state in both themes (back to light afterwards); a modal dialog blocks the theme picker. */
    const shot = async (name: string, themes: readonly ('light' | 'dark')[] = ['light', 'dark']) => {
      for (const theme of themes) {
        await setTheme(page, theme);
        result.screenshots.push(await info.screenshot(`chat-${name}-${theme}`));
      }
      await setTheme(page, 'light');
    };
    try {
      await flows(page, info, shot);
    } catch (error) {
      await info.screenshot('chat-failure').catch(() => undefined);
      const dump = await chatFrame(page, 2000)
        .then((f) =>
          f.evaluate(() =>
            [...document.querySelectorAll('.entries > .entry')]
              .slice(-8)
              .map((e) => `${e.className}: ${(e.textContent ?? '').slice(0, 120)}`)
              .join('\n'),
          ),
        )
        .catch(() => '(no chat frame)');
      log(`failed; last entries:\n${dump}`);
      throw error;
    }
  });
  return result;

  async function flows(page: Page, info: WorkbenchInfo, shot: (name: string, themes?: readonly ('light' | 'dark')[]) => Promise<void>): Promise<void> {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(info.url).origin });
    // 1. The view opens from the activity bar and connects to the agent.
    let frame = await openChat(page);
    await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
    step('view open, agent ready');
    await shot('01-empty');

    // 2. A turn with a tool call: card, modal permission, file written, final answer.
    const target = path.join(opts.workspace, 'hello.txt');
    await send(frame, `SCENARIO: write ${JSON.stringify({ path: 'hello.txt', content: 'Hello from the chat view' })}`);
    await waitText(frame, '.msg.user', 'SCENARIO: write');
    await page.locator('.monaco-dialog-box').waitFor({ state: 'visible', timeout: 90_000 });
    await frame.locator('.tool').first().waitFor({ timeout: 10_000 });
    await frame.locator('.permission.state-pending').first().waitFor({ timeout: 10_000 });
    await settled(page.locator('.monaco-dialog-box'), 'the permission dialog');
    await shot('02-permission', ['light']);
    step(`permission dialog answered: ${await clickDialog(page, ALLOW)}`);
    await turnIdle(frame);
    await waitText(frame, '.msg.agent', /Done/);
    await frame.locator('.tool.status-completed').first().waitFor({ timeout: 30_000 });
    if (!fs.existsSync(target) || !fs.readFileSync(target, 'utf8').includes('Hello from the chat view')) throw new Error('hello.txt was not written');
    // Expand the tool card: raw input / diff content.
    await frame.locator('.tool .tool-head').first().click();
    await frame.locator('.tool-body:not([hidden])').first().waitFor({ timeout: 5000 });
    step('tool card completed, file written, final answer shown');
    await shot('03-tool-done');

    // 3. Streamed markdown with highlighted code blocks and their actions.
    const md = [
      '## Result',
      '',
      'Some **bold** text, `inline code` and a list:',
      '',
      '- first item',
      '- second item',
      '',
      '```ts',
      'export function greet(name: string): string {',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source shown in the chat, not a template
      '  return `Hello, ${name}!`; // a comment',
      '}',
      '```',
      '',
      '```bash',
      'npm test -- --grep chat',
      '```',
    ].join('\n');
    await send(frame, `SCENARIO: answer ${JSON.stringify({ text: md })}`);
    await waitText(frame, '.msg.agent h2', 'Result');
    await turnIdle(frame);
    const code = frame.locator('.msg.agent .codeblock').last();
    await code.waitFor();
    // Highlighting comes when a block is seen (webview-ui/src/highlight.ts): on screen, within a few frames.
    await frame
      .locator('.msg.agent .codeblock code span[class^="hljs-"]')
      .first()
      .waitFor({ timeout: 10_000 })
      .catch(() => {
        throw new Error('code blocks are not highlighted');
      });
    const hl = await frame.locator('.msg.agent .codeblock code span[class^="hljs-"]').count();
    if ((await frame.locator('.msg.agent .codeblock [data-action="run"]').count()) < 1) throw new Error('no Run action on the shell block');
    if ((await frame.locator('.msg.agent .codeblock [data-action="copy"]').count()) < 2) throw new Error('no Copy action on code blocks');
    step(`markdown rendered (${hl} highlighted tokens, code actions present)`);
    await shot('04-markdown');

    // 3b. Code block actions: Insert at cursor puts the block into the editor; Copy puts it on the clipboard
    // (pasted into the same editor); the file is saved and read back from disk.
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 15_000 });
    await page.keyboard.type('hello.txt');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'hello.txt' }).first().waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
    const editor = page.locator('.part.editor .monaco-editor').first();
    await editor.waitFor({ timeout: 15_000 });
    // The editor mounts after its tab: keys go to it once it has the focus and shows the file.
    await page.locator('.part.editor .monaco-editor.focused .view-lines', { hasText: 'Hello from the chat view' }).waitFor({ timeout: 15_000 });
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    const blocks = frame.locator('.msg.agent').last().locator('.codeblock');
    await blocks.nth(0).locator('[data-action="insert"]').click();
    const editorShows = (text: string) =>
      page.waitForFunction((t) => (document.querySelector('.part.editor .monaco-editor .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ').includes(t), text, { timeout: 15_000 });
    await editorShows('export function greet');
    await blocks.nth(1).locator('[data-action="copy"]').click();
    // Polled from here: waitForFunction would take the predicate's promise itself for a truthy answer.
    await until(() => page.evaluate(() => navigator.clipboard.readText()).then((t) => t.includes('npm test -- --grep chat')), {
      what: 'the copied block on the clipboard',
      timeoutMs: 15_000,
      intervalMs: 300,
    });
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+V');
    await editorShows('npm test -- --grep chat');
    await page.keyboard.press('Control+S');
    let saved = '';
    await until(
      () => {
        saved = fs.readFileSync(target, 'utf8');
        return saved.includes('export function greet') && saved.includes('npm test -- --grep chat');
      },
      { what: () => `hello.txt saved with the inserted and the pasted block (it holds ${JSON.stringify(saved)})`, timeoutMs: 15_000, intervalMs: 200 },
    );
    if (!saved.includes('export function greet(name: string)') || !saved.includes('npm test -- --grep chat')) throw new Error(`Insert / Copy did not reach the file: ${JSON.stringify(saved)}`);
    step('code block Insert at cursor and Copy reached the editor and the saved file');
    // A whole agent message: Copy as Markdown puts its source on the clipboard (not the page's text).
    const answer = frame.locator('.msg.agent').last();
    await answer.hover();
    await answer.locator(':scope > [data-action="copy-message"]').click();
    await until(() => page.evaluate(() => navigator.clipboard.readText()).then((t) => t === md), { what: 'the message as markdown on the clipboard', timeoutMs: 15_000, intervalMs: 300 });
    step('Copy as Markdown put the message source on the clipboard');

    // 3c. The `/` menu lists the agent's commands (available_commands_update); `@` finds a workspace file whose
    // chip goes with the prompt as a resource_link the agent passes on to its model.
    const input = frame.locator('.composer textarea');
    await input.click();
    await input.fill('');
    await input.pressSequentially('/');
    await frame.locator('.menu:not([hidden]) .menu-item').first().waitFor({ timeout: 15_000 });
    const commands = (await frame.locator('.menu .menu-item .menu-label').allTextContents()).map((t) => t.trim());
    if (!commands.length || !commands.every((c) => c.startsWith('/'))) throw new Error(`slash menu: ${JSON.stringify(commands)}`);
    await input.press('Enter');
    const picked = await input.inputValue();
    if (picked !== `${commands[0]} `) throw new Error(`picking ${commands[0]} left ${JSON.stringify(picked)}`);
    result.screenshots.push(await info.screenshot('chat-10-slash-light'));
    step(`slash menu: ${commands.length} commands (${commands.slice(0, 4).join(', ')}…); Enter inserted ${picked.trim()}`);
    await input.fill('');
    await input.pressSequentially('@READ');
    await frame.locator('.menu:not([hidden]) .menu-item', { hasText: 'README.md' }).first().waitFor({ timeout: 15_000 });
    result.screenshots.push(await info.screenshot('chat-11-mention-light'));
    await frame.locator('.menu .menu-item', { hasText: 'README.md' }).first().dispatchEvent('mousedown');
    await frame.locator('.composer [data-testid="chip"]', { hasText: 'README.md' }).waitFor({ timeout: 10_000 });
    await input.pressSequentially(`SCENARIO: answer ${JSON.stringify({ text: 'MENTION-OK' })}`);
    await input.press('Enter');
    await waitText(frame, '.msg.agent', 'MENTION-OK');
    await turnIdle(frame);
    await frame.locator('.msg.user').last().locator('.chip', { hasText: 'README.md' }).waitFor({ timeout: 5000 });
    if (opts.modelRequests) {
      const body = requestWith(opts, 'MENTION-OK');
      if (!body?.includes('README.md')) throw new Error('the mentioned file did not reach the model request');
    }
    step('@ mention: README.md chip sent with the prompt and reached the model request');

    // 4. Hostile markdown stays inert.
    const hostile = [
      '<script>window.__pwned = "script"</script>',
      '<img src=x onerror="window.__pwned = \'img\'">',
      "[click me](javascript:window.__pwned='link')",
      '<a href="javascript:window.__pwned=\'a\'">raw link</a>',
      '<iframe src="javascript:parent.__pwned=\'iframe\'"></iframe>',
      '<div onmouseover="window.__pwned=\'hover\'">hover me</div>',
      'HOSTILE-END',
    ].join('\n\n');
    await send(frame, `SCENARIO: answer ${JSON.stringify({ text: hostile })}`);
    await waitText(frame, '.msg.agent', 'HOSTILE-END');
    await turnIdle(frame);
    const last = frame.locator('.msg.agent').last();
    for (const a of await last.locator('a').all()) await a.click().catch(() => undefined);
    await last
      .locator('text=hover me')
      .hover()
      .catch(() => undefined);
    // Nothing announces that a handler will never run: give the clicks and the hover half a second.
    await stillAbsent(() => frame.evaluate(() => (window as unknown as { __pwned?: string }).__pwned ?? null), 500, 'a hostile handler setting window.__pwned');
    const inert = await frame.evaluate(() => {
      const root = [...document.querySelectorAll('.msg.agent')].at(-1)!;
      return {
        pwned: (window as unknown as { __pwned?: string }).__pwned ?? null,
        scripts: root.querySelectorAll('script').length,
        handlers: [...root.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => a.name.startsWith('on'))).length,
        jsLinks: [...root.querySelectorAll('[href],[src]')].filter((el) => /javascript:/i.test(el.getAttribute('href') ?? el.getAttribute('src') ?? '')).length,
        iframes: root.querySelectorAll('iframe').length,
        // Raw HTML is shown as text (webview-ui/src/markdown.ts): none of the agent's tags became elements.
        // (.md-part / .md-tail: the streamed renderer's own wrappers; an agent's class never survives sanitizing.)
        rawElements: root.querySelectorAll('.md img, .md iframe, .md div:not(.codeblock):not(.code-actions):not(.md-part):not(.md-tail)').length,
        shownAsText: (root.textContent ?? '').includes('<div onmouseover='),
      };
    });
    if (inert.pwned !== null || inert.scripts || inert.handlers || inert.jsLinks || inert.iframes || inert.rawElements || !inert.shownAsText) {
      throw new Error(`hostile markdown was not inert: ${JSON.stringify(inert)}`);
    }
    step(`hostile markdown inert: ${JSON.stringify(inert)}`);
    await shot('05-hostile');

    // 5. A long turn: queue a message behind it, then Stop; the queued message is sent at turn end.
    // (The modal dialog blocks the theme picker: this second permission is the dark theme's shot of one.)
    await setTheme(page, 'dark');
    await send(frame, `SCENARIO: shell ${JSON.stringify({ command: 'sleep 60' })}`);
    await page.locator('.monaco-dialog-box').waitFor({ state: 'visible', timeout: 90_000 });
    await frame.locator('.permission.state-pending').first().waitFor({ timeout: 10_000 });
    await settled(page.locator('.monaco-dialog-box'), 'the permission dialog');
    result.screenshots.push(await info.screenshot('chat-02-permission-dark'));
    step(`shell permission answered: ${await clickDialog(page, ALLOW)}`);
    await setTheme(page, 'light');
    await frame.locator('[data-testid="stop"]:not([hidden])').waitFor({ timeout: 30_000 });
    // Two queued messages; the first is removed before it is sent.
    await send(frame, `SCENARIO: answer ${JSON.stringify({ text: 'REMOVED-QUEUED must never be sent.' })}`);
    await send(frame, `SCENARIO: answer ${JSON.stringify({ text: 'The queued message arrived.' })}`);
    await frame.waitForFunction(() => document.querySelectorAll('[data-testid="queued"]').length === 2, undefined, { timeout: 10_000 });
    await frame.locator('[data-testid="queued"]', { hasText: 'REMOVED-QUEUED' }).locator('button').click();
    await frame.waitForFunction(
      () => {
        const q = [...document.querySelectorAll('[data-testid="queued"]')];
        return q.length === 1 && !q[0]!.textContent!.includes('REMOVED-QUEUED');
      },
      undefined,
      { timeout: 10_000 },
    );
    await frame
      .locator('.tool.status-in_progress, .tool.status-pending')
      .first()
      .waitFor({ timeout: 30_000 })
      .catch(() => undefined);
    step('message queued while the agent works');
    await shot('06-running-queued');
    await frame.locator('[data-testid="stop"]').click();
    // Stop leaves a trace: the command it cut says cancelled (opencode calls it completed after the cancel), then a Stopped line.
    await frame.locator('.entry.notice.stopped', { hasText: 'Stopped' }).waitFor({ timeout: 30_000 });
    await waitText(frame, '.msg.agent', 'The queued message arrived.', 60_000);
    await turnIdle(frame);
    const cut = await frame.locator('.entry.tool', { hasText: 'sleep 60' }).evaluateAll((els) => els.map((e) => [e.classList.contains('status-cancelled'), e.querySelector('.status')?.textContent]));
    if (JSON.stringify(cut) !== '[[true,"cancelled"]]') throw new Error(`the stopped command's card: ${JSON.stringify(cut)}`);
    const order = await frame.evaluate(() =>
      [...document.querySelectorAll('.entries > .entry')].map((e) => (e.matches('.notice.stopped') ? 'stopped' : e.matches('.tool') && e.textContent?.includes('sleep 60') ? 'cut' : '')),
    );
    if (!(order.indexOf('cut') >= 0 && order.indexOf('cut') < order.indexOf('stopped'))) throw new Error(`the Stopped line is not after the cut command: ${order.join(',')}`);
    step('stop left a trace: the cut command cancelled, a Stopped line');
    if (await frame.locator('[data-testid="queued"]').count()) throw new Error('the queue did not empty');
    if (await frame.locator('.msg', { hasText: 'REMOVED-QUEUED' }).count()) throw new Error('the removed queued message was sent');
    if (requestWith(opts, 'REMOVED-QUEUED')) throw new Error('the removed queued message reached the model');
    step('turn stopped; queued message sent and answered, the removed one never sent');
    await shot('07-after-stop');

    // 6. Modes: switch the agent's mode from the header picker; the session model's state comes back into the
    // picker, and the next turn runs in that mode (opencode's plan mode puts its reminder into the model request).
    const modePicker = frame.locator('[data-testid="mode"], [data-category="mode"]').first();
    if (await modePicker.count()) {
      const m = await modePicker.evaluate((el) => ({
        id: el.getAttribute('data-testid')!,
        current: (el as HTMLElement & { value: string }).value,
        values: [...el.querySelectorAll('vscode-option')].map((o) => o.getAttribute('value') ?? ''),
      }));
      result.modes = m.values;
      const other = m.values.includes('plan') && m.current !== 'plan' ? 'plan' : m.values.find((v) => v !== m.current);
      if (!other) throw new Error(`the mode picker offers only ${m.current}`);
      await pick(frame, m.id, other);
      await shot('08-mode');
      await send(frame, `SCENARIO: answer ${JSON.stringify({ text: 'MODE-CHECK done.' })}`);
      await waitText(frame, '.msg.agent', 'MODE-CHECK done.');
      await turnIdle(frame);
      if (other === 'plan' && opts.modelRequests) {
        const body = requestWith(opts, 'MODE-CHECK');
        if (!body || !/plan mode/i.test(body)) throw new Error('after switching to plan, the model request carries no plan-mode instructions');
        const before = requestWith(opts, 'MENTION-OK') ?? '';
        if (/plan mode is active/i.test(before)) throw new Error('plan-mode instructions were there before the switch too');
      }
      step(`${m.id}: ${m.current} → ${other} (of ${m.values.join(', ')}); the next turn ran in ${other}`);
      await pick(frame, m.id, m.current);
    } else throw new Error('the agent offers no mode picker');

    // 7. Hide and show the view, then reload the window: the transcript comes back.
    const entriesBefore = await frame.locator('.entries > .entry').count();
    await showExplorer(page, frame);
    frame = await openChat(page);
    const afterShow = await frame.locator('.entries > .entry').count();
    if (afterShow < entriesBefore) throw new Error(`hiding the view lost entries: ${entriesBefore} → ${afterShow}`);
    step(`hide/show kept ${afterShow} entries`);
    await reloadWindow(page);
    frame = await openChat(page);
    await waitText(frame, '.msg.agent', 'The queued message arrived.', 30_000);
    step(`window reload restored ${await frame.locator('.entries > .entry').count()} entries`);
    await shot('09-after-reload');
    // The next prompt reattaches the same agent session (resume → load → new), says which in the
    // transcript, and the model sees the conversation from before the reload.
    await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
    await send(frame, 'RELOAD-CHECK: what did I ask before?\nSCENARIO: answer {"text": "RELOAD-CHECK done."}');
    await waitText(frame, '.msg.agent', 'RELOAD-CHECK done.');
    await turnIdle(frame);
    const reattached = (await frame.locator('.entry.notice .notice-title').allTextContents()).find((t) => /resumed|loaded|Could not reattach/.test(t));
    if (!reattached || /Could not reattach/.test(reattached)) throw new Error(`after the reload the session was not reattached: ${reattached ?? 'no notice'}`);
    if (opts.modelRequests) {
      const body = requestWith(opts, 'RELOAD-CHECK');
      if (!body?.includes('Hello from the chat view')) throw new Error('after the reload the model did not see the conversation from before');
    }
    step(`after the reload: ${reattached.split(':')[0]}; the model saw the earlier turns`);
    await shot('10-reattached', ['light']);

    // 8. Another agent from the picker (legacy session/set_mode), then 2,000 messages and 500 tool calls:
    // the DOM holds a bounded window, at the bottom and after scrolling to the very top.
    if (opts.longAgent) {
      await pick(frame, 'agent', opts.longAgent);
      // Known gap: until the new agent's first turn the header keeps the previous session's pickers.
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      await send(frame, 'hello long agent');
      await waitText(frame, '.msg.agent', 'You said: hello long agent', 60_000);
      await frame.locator('[data-testid="mode"]').waitFor({ timeout: 60_000 });
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      await pick(frame, 'mode', 'code');
      step('long agent: mode ask → code (current_mode_update)');
      const ms = await feedLong(frame, 2000, 500);
      const bottom = await domFigures(frame);
      if (bottom.total < 2500) throw new Error(`only ${bottom.total} entities reached the page`);
      if (bottom.disorder) throw new Error(`the DOM's entries out of order (bottom): ${bottom.disorder}`);
      if (bottom.domEntries > 360) throw new Error(`${bottom.domEntries} entries in the DOM at the bottom`);
      // Shown again, the view gets only the newest entities; scrolling up asks the extension for the rest.
      frame = (await reopen(page, 'LONG-END 2000 messages')).frame;
      const reopened = await domFigures(frame);
      if (reopened.total !== bottom.total || reopened.held > 240) throw new Error(`shown again, the page holds ${reopened.held} of ${reopened.total} entities (before: ${bottom.total})`);
      const up = await scrollThrough(frame, 'up');
      const top = await domFigures(frame);
      if (top.held !== bottom.total) throw new Error(`at the top the page holds ${top.held} of ${bottom.total} entities`);
      const first = await frame.locator('.entries > .entry').first().textContent();
      if (top.disorder) throw new Error(`the DOM's entries out of order (top): ${top.disorder}`);
      if (top.domEntries > 360) throw new Error(`${top.domEntries} entries in the DOM at the top`);
      if (!/SCENARIO: write/.test(first ?? '')) throw new Error(`the top is not the transcript's start: ${first}`);
      result.screenshots.push(await info.screenshot('chat-12-long-top-light'));
      const down = await scrollThrough(frame, 'down');
      const back = await domFigures(frame);
      if (back.disorder) throw new Error(`the DOM's entries out of order (back): ${back.disorder}`);
      if (back.domEntries > 360) throw new Error(`${back.domEntries} entries in the DOM back at the bottom`);
      await waitText(frame, '.msg.agent', 'LONG-END 2000 messages', 5000);
      step(
        `long transcript: ${bottom.total} entities streamed in ${ms} ms; DOM entries ${bottom.domEntries} / ${top.domEntries} / ${back.domEntries} (bottom / top / bottom); scroll up ${up.ms} ms p95 ${up.p95} ms, down ${down.ms} ms p95 ${down.p95} ms`,
      );
    }
  }
}
