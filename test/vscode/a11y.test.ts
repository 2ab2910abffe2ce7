/// <reference lib="dom" />
/**
 * Accessibility of the chat webview in a real VS Code (code-server + Chromium), with a real agent (opencode)
 * against the scripted model and permissions answered in the chat (`agentHost.permissions.mode: inline`).
 *
 * 1. Keyboard only — after the page loads, nothing but page.keyboard: Ctrl+Alt+I reaches the composer, Enter
 *    sends, Ctrl+Up reaches the permission card, Tab + Enter answer it (the file is written), Up/Down/Home/End
 *    move between entries and tool cards, Enter opens a tool card, Escape returns to the composer and stops a
 *    turn, `/` and `@` open the composer's menus where the arrows and Enter pick. Each step is asserted on the
 *    webview's DOM: document.activeElement, aria-expanded, aria-activedescendant / aria-selected, the live
 *    regions' text.
 * 2. axe (test/vscode/a11yAxe.ts) at each state — empty, a pending permission card, an open tool card, a
 *    running turn, the slash menu, the @ menu — in the light, dark and high-contrast themes: no serious or
 *    critical violation. Screenshots: test-artifacts/a11y-<state>-<theme>.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { AxeReport, summarize } from './a11yAxe';
import { chatFrame, turnIdle, waitText } from './chatUi';
import { withWorkbench } from './runner';

interface Focus {
  /** The webview's document has the focus (not only remembers an active element). */
  hasFocus: boolean;
  tag: string;
  className: string;
  /** data-option of a permission button. */
  option: string | null;
  text: string;
  /** The transcript entry holding the focus (its data-key), and whether the focus is on the entry itself. */
  entry: string | null;
  onEntry: boolean;
}

/** What has the keyboard focus in the chat webview. */
function focusIn(frame: Frame): Promise<Focus> {
  return frame.evaluate(() => {
    const a = document.activeElement as HTMLElement | null;
    const entry = a?.closest<HTMLElement>('.entries > .entry') ?? null;
    return {
      hasFocus: document.hasFocus(),
      tag: a?.tagName.toLowerCase() ?? '',
      className: typeof a?.className === 'string' ? a.className : '',
      option: a?.getAttribute('data-option') ?? null,
      text: (a?.textContent ?? '').trim().slice(0, 80),
      entry: entry?.dataset.key ?? null,
      onEntry: !!entry && entry === a,
    };
  });
}

/** Waits until the focus satisfies `ok`; the failure says where it was instead. */
async function expectFocus(frame: Frame, ok: (f: Focus) => boolean, what: string, timeoutMs = 10_000): Promise<Focus> {
  let last: Focus | undefined;
  return until(
    async () => {
      last = await focusIn(frame);
      return last.hasFocus && ok(last) ? last : undefined;
    },
    { what: () => `the focus on ${what} (it is on ${JSON.stringify(last)})`, timeoutMs, intervalMs: 100 },
  );
}

const onComposer = (f: Focus) => f.tag === 'textarea' && f.className.includes('input');

/** Keys of the transcript's entries in the DOM, in order. */
const entryKeys = (frame: Frame) => frame.evaluate(() => [...document.querySelectorAll<HTMLElement>('.entries > .entry')].map((e) => e.dataset.key ?? ''));

/** Waits until the live region `role` (status: polite, alert: assertive) says something matching `re`. */
async function announced(frame: Frame, role: 'status' | 'alert', re: RegExp, timeoutMs = 30_000): Promise<string> {
  let text = '';
  await until(
    async () => {
      text = await frame.evaluate((r) => document.querySelector(`#app > .sr-only[role="${r}"]`)?.textContent ?? '', role);
      return re.test(text);
    },
    { what: () => `the ${role} live region to announce ${re} (it says ${JSON.stringify(text)})`, timeoutMs },
  );
  return text;
}

/** Ctrl+Up from the composer to the pending permission card, Tab to its first option (Allow), Enter. */
async function answerByKeyboard(page: Page, frame: Frame, step: (s: string) => void): Promise<void> {
  await expectFocus(frame, onComposer, 'the composer');
  await page.keyboard.press('Control+ArrowUp');
  const card = await expectFocus(frame, (f) => f.onEntry && f.className.includes('permission') && f.className.includes('state-pending'), 'the pending permission card (Ctrl+Up)');
  await page.keyboard.press('Tab');
  const allow = await expectFocus(frame, (f) => f.entry === card.entry && f.tag === 'vscode-button' && f.option !== null, 'the first option of the card (Tab)');
  assert.match(allow.text, /allow/i, `the first option is not an Allow: ${allow.text}`);
  await page.keyboard.press('Enter');
  // The card re-renders as answered; the focus stays on it.
  await expectFocus(frame, (f) => f.onEntry && f.entry === card.entry && f.className.includes('state-answered'), 'the answered card', 30_000);
  step(`permission ${card.entry}: Ctrl+Up, Tab to "${allow.text}", Enter — answered, the focus stayed on the card`);
}

test('the chat webview: keyboard only, and no serious or critical axe violation in light, dark and high contrast', { timeout: 600_000 }, async () => {
  const agent = agentById('opencode');
  assert.ok(agent, 'no opencode in the agent catalog');
  assert.ok(agent.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
  for (const f of ['dist/extension.js', 'dist/webview/chat.js']) assert.ok(fs.existsSync(path.join(repoRoot, f)), `${f} is missing: npm run build`);
  const t0 = Date.now();
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('a11y');
  const steps: string[] = [];
  const step = (s: string) => {
    steps.push(s);
    console.log(`[a11y] ${s}`);
  };
  let ok = false;
  try {
    const spec = await agent.prepare({ scratch: path.join(scratch, 'agent'), modelUrl: model.url, workspace });
    const config = { name: 'opencode (demo model)', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
    const report = await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [config],
          'agentHost.defaultAgent': config.name,
          'agentHost.permissions.mode': 'inline',
          'workbench.colorTheme': 'Default Light Modern',
        },
        viewport: { width: 1280, height: 860 },
        timeoutMs: 480_000,
      },
      async (page, info) => {
        const axe = new AxeReport(page, info, (l) => console.log(`[a11y] ${l}`));
        await page.locator('.activitybar [aria-label^="Atrium"]').first().waitFor({ state: 'visible', timeout: 60_000 });

        // 1. The composer, from anywhere, by its documented shortcut.
        await page.keyboard.press('Control+Alt+KeyI');
        const frame = await chatFrame(page, 60_000);
        await expectFocus(frame, onComposer, 'the composer (Ctrl+Alt+I)', 30_000);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        step('Ctrl+Alt+I: the chat view opened with the focus in the composer');
        await axe.scan(frame, 'empty');
        await expectFocus(frame, onComposer, 'the composer, after the scans');

        // 2. Type and send; the permission card is announced, reached and answered by keyboard.
        const prompt = `SCENARIO: write ${JSON.stringify({ path: 'hello.txt', content: 'Written by keyboard' })}`;
        await page.keyboard.type(prompt);
        assert.equal(await frame.locator('.composer textarea').inputValue(), prompt);
        await page.keyboard.press('Enter');
        await waitText(frame, '.msg.user', 'SCENARIO: write');
        assert.equal(await frame.locator('.composer textarea').inputValue(), '', 'Enter did not send the draft');
        await frame.locator('.permission.state-pending').waitFor({ timeout: 90_000 });
        // The card names the file relative to the workspace (opencode's title is its absolute path).
        const permTitle = (await frame.locator('.permission.state-pending .perm-title').textContent()) ?? '';
        assert.ok(permTitle.includes('hello.txt') && !permTitle.includes(workspace), `the permission card shows an absolute path: "${permTitle}"`);
        const alert = await announced(frame, 'alert', /Permission requested: .*Ctrl\+Up/);
        step(`sent with Enter; the permission card was announced: "${alert}"`);
        await axe.scan(frame, 'permission');
        await answerByKeyboard(page, frame, step);
        const target = path.join(workspace, 'hello.txt');
        await until(() => fs.existsSync(target) && fs.readFileSync(target, 'utf8').includes('Written by keyboard'), { what: 'hello.txt written after the keyboard answer', timeoutMs: 60_000 });
        await turnIdle(frame);
        await waitText(frame, '.msg.agent', /Done/);
        step(`the file was written and the turn went on: "${await announced(frame, 'status', /answered/)}"`);

        // 3. Tool cards: Up/Down from the answered card to a tool card, Enter opens it.
        let focus = await focusIn(frame);
        for (let i = 0; i < 10 && !focus.entry?.startsWith('tool_call:'); i++) {
          await page.keyboard.press('ArrowUp');
          focus = await expectFocus(frame, (f) => f.onEntry, 'an entry (ArrowUp)');
        }
        assert.ok(focus.entry?.startsWith('tool_call:'), `ArrowUp never reached a tool card: ${JSON.stringify(focus)}`);
        const tool = frame.locator(`.entries > .entry[data-key="${focus.entry}"]`);
        assert.equal(await tool.locator('.tool-head').getAttribute('aria-expanded'), 'false');
        await page.keyboard.press('Enter');
        await tool.locator('.tool-head[aria-expanded="true"]').waitFor({ timeout: 5000 });
        await tool.locator('.tool-body:not([hidden])').waitFor({ timeout: 5000 });
        await expectFocus(frame, (f) => f.onEntry && f.entry === focus.entry, 'the opened tool card');
        step(`ArrowUp reached ${focus.entry}; Enter opened it (aria-expanded=true), the focus stayed on it`);
        await axe.scan(frame, 'tool-card');
        // A box that may scroll (its output, raw input) is a Tab stop of its own, and the arrows stay in it.
        const box = tool.locator('.tool-body pre.scrollbox').first();
        assert.equal(await box.getAttribute('tabindex'), '0', 'the tool card has no scrollable box with a Tab stop');
        await box.focus();
        await page.keyboard.press('ArrowDown');
        assert.equal(await frame.evaluate(() => document.activeElement?.matches('.tool-body pre.scrollbox') ?? false), true, 'ArrowDown left the scrollable box');
        await info.screenshot('a11y-scrollbox-focused');
        step('a scrollable box in the card takes the focus, and ArrowDown stays in it');

        // 4. A running turn: Escape to the composer, send, allow by keyboard; Escape stops it.
        await page.keyboard.press('Escape');
        await expectFocus(frame, onComposer, 'the composer (Escape)');
        await page.keyboard.type(`SCENARIO: shell ${JSON.stringify({ command: 'sleep 45' })}`);
        await page.keyboard.press('Enter');
        await frame.locator('.permission.state-pending').waitFor({ timeout: 90_000 });
        // The card's "always" names the exact rule it makes, as the modal does.
        const shellButtons = (await frame.locator('.permission.state-pending [data-action="answer-permission"]').allTextContents()).map((t) => t.trim());
        step(`the shell card's buttons: ${shellButtons.join(' | ')}`);
        assert.ok(shellButtons.includes('Always allow `sleep 45`'), `the card's "Always allow" does not name its rule: ${shellButtons.join(' | ')}`);
        await info.screenshot('a11y-rule-card');
        await answerByKeyboard(page, frame, step);
        await frame.locator('.tool.status-in_progress').waitFor({ timeout: 30_000 });
        await axe.scan(frame, 'running');
        await page.keyboard.press('Escape');
        await expectFocus(frame, onComposer, 'the composer (Escape)');
        await page.keyboard.press('Escape');
        await turnIdle(frame, 30_000);
        step('Escape returned to the composer, a second Escape stopped the running turn');

        // 5. Between the tool cards: Ctrl+Up enters at the newest entry; Up walks every entry in order; End, Home.
        const keys = await entryKeys(frame);
        await page.keyboard.press('Control+ArrowUp');
        focus = await expectFocus(frame, (f) => f.onEntry && f.entry === keys.at(-1), 'the newest entry (Ctrl+Up)');
        const walked = [focus.entry!];
        for (let i = keys.length - 2; i >= 0; i--) {
          await page.keyboard.press('ArrowUp');
          focus = await expectFocus(frame, (f) => f.onEntry && f.entry === keys[i], `entry ${keys[i]} (ArrowUp)`);
          walked.unshift(focus.entry!);
        }
        assert.deepEqual(walked, keys);
        const tools = keys.filter((k) => k.startsWith('tool_call:'));
        assert.ok(tools.length >= 2, `expected two tool cards, got ${JSON.stringify(keys)}`);
        await page.keyboard.press('End');
        await expectFocus(frame, (f) => f.onEntry && f.entry === keys.at(-1), 'the last entry (End)');
        await page.keyboard.press('Home');
        await expectFocus(frame, (f) => f.onEntry && f.entry === keys[0], 'the first entry (Home)');
        for (const k of keys.slice(1, keys.indexOf(tools[1]!) + 1)) {
          await page.keyboard.press('ArrowDown');
          await expectFocus(frame, (f) => f.onEntry && f.entry === k, `entry ${k} (ArrowDown)`);
        }
        step(`Up walked all ${keys.length} entries (${tools.length} tool cards), End/Home/Down moved to ${tools[1]}`);

        // 6. The slash menu: "/" opens it, ArrowDown moves the active option, Enter picks it.
        await page.keyboard.press('Escape');
        await expectFocus(frame, onComposer, 'the composer (Escape)');
        await page.keyboard.type('/');
        const input = frame.locator('.composer textarea');
        const options = frame.locator('#composer-menu:not([hidden]) [role="option"]');
        await options.first().waitFor({ timeout: 15_000 });
        const labels = (await options.locator('.menu-label').allTextContents()).map((t) => t.trim());
        assert.ok(labels.length >= 2 && labels.every((l) => l.startsWith('/')), `slash menu: ${JSON.stringify(labels)}`);
        assert.equal(await input.getAttribute('aria-activedescendant'), 'menu-item-0');
        await axe.scan(frame, 'slash-menu');
        await page.keyboard.press('ArrowDown');
        await frame.locator('#menu-item-1[aria-selected="true"]').waitFor({ timeout: 5000 });
        assert.equal(await input.getAttribute('aria-activedescendant'), 'menu-item-1');
        assert.equal(await frame.locator('#menu-item-0').getAttribute('aria-selected'), 'false');
        await page.keyboard.press('Enter');
        await until(async () => (await input.inputValue()) === `${labels[1]} `, { what: `the composer to hold "${labels[1]} "`, timeoutMs: 5000 });
        assert.equal(await frame.locator('#composer-menu').isHidden(), true, 'the menu stayed open');
        assert.equal(await input.getAttribute('aria-activedescendant'), null);
        await expectFocus(frame, onComposer, 'the composer after picking');
        step(`"/" opened ${labels.length} commands; ArrowDown + Enter picked ${labels[1]}`);

        // 7. The @ menu: a workspace file, picked with the arrows and Enter, becomes a chip.
        // Backspace, not Ctrl+A: VS Code also runs its Select All in the webview, a round trip later.
        for (let n = (await input.inputValue()).length; n > 0; n--) await page.keyboard.press('Backspace');
        assert.equal(await input.inputValue(), '');
        await page.keyboard.type('@READ');
        const readme = frame.locator('#composer-menu:not([hidden]) [role="option"]', { hasText: 'README.md' }).first();
        await readme.waitFor({ timeout: 15_000 });
        await axe.scan(frame, 'mention-menu');
        const readmeId = await readme.getAttribute('id');
        for (let i = 0; i < 10 && (await input.getAttribute('aria-activedescendant')) !== readmeId; i++) await page.keyboard.press('ArrowDown');
        assert.equal(await input.getAttribute('aria-activedescendant'), readmeId, 'ArrowDown never reached README.md');
        await page.keyboard.press('Enter');
        await frame.locator('.composer [data-testid="chip"]', { hasText: 'README.md' }).waitFor({ timeout: 10_000 });
        await expectFocus(frame, onComposer, 'the composer after the chip');
        step('"@READ" + ArrowDown + Enter attached README.md as a chip');
        return axe;
      },
    );
    for (const line of summarize(report.findings.filter((x) => !report.blocking().includes(x)))) console.log(`[a11y] (not blocking) ${line}`);
    const blocking = report.blocking();
    assert.equal(blocking.length, 0, `axe found serious or critical violations in the chat webview:\n${summarize(blocking).join('\n')}`);
    step(`axe: ${report.screenshots.length} scans (6 states × 3 themes), no serious or critical violation; ${report.ms} ms in scans; the whole test ${Math.round((Date.now() - t0) / 1000)} s`);
    ok = true;
  } finally {
    await model.close();
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
});
