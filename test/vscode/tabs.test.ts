/**
 * Several conversations at once in a real VS Code (code-server + Chromium), with real agents on the
 * scripted model and permissions answered in the chat (inline mode): a turn in tab 1 (opencode) asks for
 * permission while tab 2 is shown → tab 1 is badged; tab 2 runs codex; back in tab 1 the card is answered
 * and its command runs for seconds while tab 2 completes a whole turn meanwhile (asserted on the files:
 * tab 2's answer arrives before tab 1's command has written its file); tab 1 finishing in the background
 * is badged; closing tab 2 stops its agent. Screenshots: test-artifacts/tabs-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/model/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { openChat, pick, send, turnIdle, waitText } from './chatUi';
import { runCommand, withWorkbench } from './runner';

const tab = (frame: Frame, id: string) => frame.locator(`[data-testid="tab-${id}"]`);

test('conversations in tabs: two agents at once, a background permission badged and answered after switching, close stops the agent', { timeout: 600_000 }, async () => {
  const opencode = agentById('opencode')!;
  const codex = agentById('codex')!;
  assert.ok(opencode.installed() && codex.installed(), 'opencode and codex must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('tabs');
  const one = path.join(workspace, 'one.txt');
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
        // Tab 1 asks for permission; tab 2 is opened before anyone answers.
        await send(frame, `SCENARIO: shell ${JSON.stringify({ command: 'sleep 8 && echo ONE > one.txt' })}`);
        await frame.locator('.entry.permission [data-action="answer-permission"]').first().waitFor({ timeout: 90_000 });
        await runCommand(page, 'Agent Host: New Chat Tab');
        await tab(frame, 't2').waitFor({ timeout: 15_000 });
        await frame.waitForFunction(() => document.querySelectorAll('.entries > .entry').length === 0, undefined, { timeout: 15_000 });
        await frame.locator('[data-testid="tab-t1"].attention-permission').waitFor({ timeout: 15_000 });
        await pick(frame, 'agent', 'codex');
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await send(frame, 'TAB-TWO first\nSCENARIO: answer {"text": "Two answered."}');
        await waitText(frame, '.msg.agent', 'Two answered.');
        await turnIdle(frame);
        await info.screenshot('tabs-01-background-permission');

        // Back to tab 1: its card is still answerable; its command then runs for seconds.
        await tab(frame, 't1').click();
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

        // Tab 2 completes a whole turn while tab 1's command still runs.
        await tab(frame, 't2').click();
        await send(frame, 'TAB-TWO again\nSCENARIO: answer {"text": "Two again."}');
        await waitText(frame, '.msg.agent', 'Two again.');
        const oneExistedWhenTwoAnswered = fs.existsSync(one);
        assert.equal(await frame.locator('.msg.agent', { hasText: 'Two answered.' }).count(), 1, "tab 2's transcript shows its first turn twice");
        await turnIdle(frame);
        assert.equal(oneExistedWhenTwoAnswered, false, "tab 1's command had already finished: the turns did not overlap");
        // Tab 1 ends in the background: badged as done.
        await frame.locator('[data-testid="tab-t1"].attention-done').waitFor({ timeout: 90_000 });
        assert.equal(fs.readFileSync(one, 'utf8').trim(), 'ONE');
        await info.screenshot('tabs-02-background-done');
        await tab(frame, 't1').click();
        await waitText(frame, '.msg.agent', /Done/);
        assert.equal(await frame.locator('.msg', { hasText: 'Two answered.' }).count(), 0, "tab 2's transcript shows in tab 1");

        // The model saw each conversation on its own.
        const bodies = model.requests.map((r) => JSON.stringify(r.body ?? null));
        assert.ok(!bodies.some((b) => b.includes('TAB-TWO') && b.includes('echo ONE')), 'one request mixed both conversations');

        // Closing tab 2 stops its agent; tab 1 stays.
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
