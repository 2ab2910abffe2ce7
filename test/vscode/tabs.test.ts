/**
 * Several conversations at once in a real VS Code (code-server + Chromium), with real agents on the
 * scripted model and permissions answered in the chat (inline mode): a turn in tab 1 (opencode) asks for
 * permission while tab 2 is shown → tab 1 is badged; tab 2 runs codex; back in tab 1 the card is answered
 * and its command runs for seconds while tab 2 completes a whole turn meanwhile, writing two.txt (asserted on
 * the files: tab 2's answer arrives before tab 1's command has written its file); each turn's summary counts
 * its own file only; tab 1 finishing in the background is badged; the first steps show in the first tab only;
 * four tabs keep readable titles (no scrolled strip, tooltips with the whole title); closing tab 2 stops its
 * agent. Screenshots: test-artifacts/tabs-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, pick, send, turnIdle, waitText } from './chatUi';
import { runCommand, withWorkbench, type WorkbenchInfo } from './runner';

const tab = (frame: Frame, id: string) => frame.locator(`[data-testid="tab-${id}"]`);

/**
 * Four tabs in the side bar: no strip to scroll (every tab in view), each title shown whole or for at least
 * 16 characters, each tooltip holding the whole title. Tabs 3 and 4 are opened and named by a first prompt.
 */
async function fourTabsReadable(page: Page, frame: Frame, info: WorkbenchInfo): Promise<void> {
  for (const [id, words] of [
    ['t3', 'TAB-THREE review the parser module'],
    ['t4', 'TAB-FOUR rename the lexer tokens'],
  ] as const) {
    await runCommand(page, 'Atrium: New Chat Tab');
    await tab(frame, id).waitFor({ timeout: 15_000 });
    await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
    await send(frame, `${words}\nSCENARIO: answer {"text": "${id} answered."}`);
    await waitText(frame, '.msg.agent', `${id} answered.`);
    await turnIdle(frame);
    await tab(frame, id).locator('.tab-title', { hasText: words }).waitFor({ timeout: 15_000 });
  }
  const strip = await frame.evaluate(() => {
    const tabs = document.querySelector('.tabs')!;
    const box = tabs.getBoundingClientRect();
    return {
      scrolls: tabs.scrollWidth > tabs.clientWidth + 1,
      width: Math.round(box.width),
      tabs: [...tabs.querySelectorAll<HTMLElement>('[role="tab"]')].map((t) => {
        const title = t.querySelector<HTMLElement>('.tab-title')!;
        const r = t.getBoundingClientRect();
        const text = title.textContent ?? '';
        return {
          text,
          tooltip: t.title,
          shownChars: title.scrollWidth > title.clientWidth ? Math.floor((title.clientWidth / title.scrollWidth) * text.length) : text.length,
          inView: r.left >= box.left - 1 && r.right <= box.right + 1,
        };
      }),
    };
  });
  assert.equal(strip.tabs.length, 4);
  assert.equal(strip.scrolls, false, `the tab strip scrolls: ${JSON.stringify(strip)}`);
  for (const t of strip.tabs) {
    assert.ok(t.inView, `tab "${t.text}" is out of view: ${JSON.stringify(strip)}`);
    assert.ok(t.shownChars >= Math.min(16, t.text.length), `tab "${t.text}" shows ${t.shownChars} characters in ${strip.width} px`);
    assert.ok(t.tooltip.includes(t.text), `tab "${t.text}": its tooltip is "${t.tooltip}"`);
  }
  await page.mouse.move(800, 600); // no hovered tab showing its ×
  await info.screenshot('tabs-04-four-tabs');
  await tab(frame, 't1').click();
  await waitText(frame, '.msg.agent', /Done/);
}

test('conversations in tabs: two agents at once, a background permission badged and answered after switching, close stops the agent', { timeout: 600_000 }, async () => {
  const opencode = agentById('opencode')!;
  const codex = agentById('codex')!;
  assert.ok(opencode.installed() && codex.installed(), 'opencode and codex must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('tabs');
  const one = path.join(workspace, 'one.txt');
  const two = path.join(workspace, 'two.txt');
  try {
    const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    const cx = await codex.prepare({ scratch: path.join(scratch, 'codex'), modelUrl: model.url, workspace });
    const agents = [
      { name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false },
      { name: 'codex', command: cx.command, args: cx.args, env: cx.env, inheritEnv: false },
    ];
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'opencode', 'agentHost.permissions.mode': 'inline', 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 540_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const firstSteps = frame.locator('[data-testid="first-steps"]');
        await firstSteps.waitFor({ timeout: 15_000 });
        // Tab 1 asks for permission; tab 2 is opened before anyone answers.
        await send(frame, `SCENARIO: shell ${JSON.stringify({ command: 'sleep 12 && echo ONE > one.txt' })}`);
        await frame.locator('.entry.permission [data-action="answer-permission"]').first().waitFor({ timeout: 90_000 });
        await runCommand(page, 'Atrium: New Chat Tab');
        await tab(frame, 't2').waitFor({ timeout: 15_000 });
        await frame.waitForFunction(() => document.querySelectorAll('.entries > .entry').length === 0, undefined, { timeout: 15_000 });
        // The first steps are the first tab's: a second empty tab shows only its greeting.
        await frame.locator('.transcript > .empty').waitFor({ timeout: 15_000 });
        assert.equal(await firstSteps.isVisible(), false, 'the first steps show in a second tab');
        await frame.locator('[data-testid="tab-t1"].attention-permission').waitFor({ timeout: 15_000 });
        await pick(frame, 'agent', 'codex');
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await send(frame, 'TAB-TWO first\nSCENARIO: answer {"text": "Two answered."}');
        await waitText(frame, '.msg.agent', 'Two answered.');
        await turnIdle(frame);
        await info.screenshot('tabs-01-background-permission');

        // The header's model picker is the shown tab's agent's: codex's here, opencode's back in tab 1.
        const modelShown = (pattern: RegExp, what: string) =>
          until(async () => (pattern.test((await frame.locator('vscode-single-select.picker[aria-label="Model"]').getAttribute('data-current')) ?? '') ? true : undefined), {
            what,
            timeoutMs: 15_000,
          });
        await modelShown(/^gpt-/, "codex's model in tab 2's header");
        // Back to tab 1: its card is still answerable; its command then runs for seconds.
        await tab(frame, 't1').click();
        await modelShown(/^scripted\//, "opencode's model in tab 1's header");
        const card = frame.locator('.entry.permission [data-action="answer-permission"]', { hasText: /Allow once/ }).first();
        await card.waitFor({ timeout: 15_000 });
        // A compound line can never become a rule: the card offers no "Always allow" for it.
        const labels = (await frame.locator('.entry.permission [data-action="answer-permission"]').allTextContents()).map((t) => t.trim());
        assert.ok(labels.includes('Allow once') && !labels.some((l) => l.startsWith('Always allow')), `the card of a compound line: ${labels.join(' | ')}`);
        assert.equal(await frame.locator('[data-testid="tab-t1"].attention-permission').count(), 0, 'the badge stays on the shown tab');
        await card.click();
        await frame
          .locator('.entry.tool.status-in_progress, .entry.tool .status-in_progress, [data-status="in_progress"]')
          .first()
          .waitFor({ timeout: 30_000 })
          .catch(() => undefined);

        // Tab 2 completes a whole turn, writing two.txt (codex asks first), while tab 1's command still runs.
        await tab(frame, 't2').click();
        await send(frame, `TAB-TWO again\nSCENARIO: write ${JSON.stringify({ path: two, content: 'TWO\n' })}`);
        const allow = frame.locator('.entry.permission [data-action="answer-permission"]', { hasText: /Allow once/ }).first();
        const wrote = frame.locator('.msg.agent', { hasText: /Done: wrote/ }).first();
        await Promise.race([allow.waitFor({ timeout: 90_000 }).then(() => allow.click()), wrote.waitFor({ timeout: 90_000 })]);
        await wrote.waitFor({ timeout: 90_000 });
        const oneExistedWhenTwoAnswered = fs.existsSync(one);
        assert.equal(await frame.locator('.msg.agent', { hasText: 'Two answered.' }).count(), 1, "tab 2's transcript shows its first turn twice");
        await turnIdle(frame);
        assert.equal(oneExistedWhenTwoAnswered, false, "tab 1's command had already finished: the turns did not overlap");
        assert.equal(fs.readFileSync(two, 'utf8'), 'TWO\n');
        // Each tab's turn summary counts its own file only (two.txt was written while tab 1's turn ran).
        const summary = frame.locator('.entry.notice.changes .notice-title').last();
        await summary.waitFor({ timeout: 30_000 });
        assert.match((await summary.textContent()) ?? '', /^1 file changed\s*\+1\s*−0$/, "tab 2's summary");
        // Tab 1 ends in the background: badged as done.
        await frame.locator('[data-testid="tab-t1"].attention-done').waitFor({ timeout: 90_000 });
        assert.equal(fs.readFileSync(one, 'utf8').trim(), 'ONE');
        await info.screenshot('tabs-02-background-done');
        await tab(frame, 't1').click();
        // (tab 2's "Done: wrote" and its summary match too until tab 1's transcript replaces them)
        await until(async () => ((await frame.locator('.msg', { hasText: 'Two answered.' }).count()) === 0 ? true : undefined), { what: "tab 1's transcript without tab 2's", timeoutMs: 15_000 });
        await waitText(frame, '.msg.agent', /Done/);
        await summary.waitFor({ timeout: 30_000 });
        assert.match((await summary.textContent()) ?? '', /^1 file changed\s*\+1\s*−0$/, "tab 1's summary counts tab 2's two.txt");

        // The model saw each conversation on its own.
        const bodies = model.requests.map((r) => JSON.stringify(r.body ?? null));
        assert.ok(!bodies.some((b) => b.includes('TAB-TWO') && b.includes('echo ONE')), 'one request mixed both conversations');

        await fourTabsReadable(page, frame, info);

        // Closing tab 2 (its × shows on hover) stops its agent; tab 1 stays.
        await tab(frame, 't2').hover();
        await frame.locator('[data-testid="close-t2"]').click();
        await frame.waitForFunction(() => !document.querySelector('[data-testid="tab-t2"]'), undefined, { timeout: 15_000 });
        await info.screenshot('tabs-03-closed');
        assert.equal(await frame.locator('[data-testid="tab-t1"]').getAttribute('aria-selected'), 'true');
      },
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
