/**
 * An RPC-mode agent (upstream pi with its rpc-demo extension) in the real VS Code: the agent's select
 * becomes a quick pick, its confirm a modal dialog, its notify a notification — and the answers reach the
 * agent (it reacts with the notification that matches the answer). Then the chat: rpc-demo's widget shows
 * above the composer and its title as the view's description, `/rpc-prefill` (set_editor_text) fills the
 * composer, and a follow-up typed while a long tool call streams is queued at the agent (the count shows)
 * and reaches the model as a later user message. Last, the fake RPC agent's notify plants a command link and
 * an icon: the notification (and its status entry) shows them as text, with no link to click. Screenshots in
 * test-artifacts/.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { PI_RPC, piPackageDir } from '../rpc/agents';
import { repoRoot } from '../support/paths';
import { until } from '../support/wait';
import { openChat, turnIdle, waitText } from './chatUi';
import { askAgent, runCommand, statusBarItem, withWorkbench } from './runner';
import { focusedRow } from './waits';

async function pickQuickItem(page: Page, label: string): Promise<string[]> {
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ timeout: 30_000 });
  // A row's own label, without a separator's text the list may render in it (the palette's "similar commands").
  const labels = await rows.evaluateAll((els) =>
    els.map((e) => {
      const row = e.cloneNode(true) as HTMLElement;
      for (const s of row.querySelectorAll('.quick-input-list-separator, .quick-input-list-separator-border, .monaco-action-bar')) s.remove();
      return row.textContent?.trim() ?? '';
    }),
  );
  await page.locator('.quick-input-widget input').fill(label);
  await focusedRow(page, label);
  await page.keyboard.press('Enter');
  return labels;
}

/**
 * Waits for a notification: as a toast, or (toasts are not always raised in a headless window) in the center;
 * `check` runs on it while it shows.
 */
async function expectNotification(page: Page, text: RegExp, check?: (item: Locator) => Promise<void>): Promise<void> {
  const toast = page.locator('.notification-toast', { hasText: text }).first();
  if (
    await toast.waitFor({ timeout: 5_000 }).then(
      () => true,
      () => false,
    )
  )
    return check?.(toast);
  await runCommand(page, 'Notifications: Show Notifications');
  const item = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  await item.waitFor({ timeout: 25_000 });
  await check?.(item);
  await page.keyboard.press('Escape');
}

test('pi RPC extension UI: select → quick pick, confirm → modal, answers reach the agent', { timeout: 300_000 }, async () => {
  assert.ok(PI_RPC.installed(), 'pi is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'vscode-rpc-'));
  const workspace = path.join(scratch, 'workspace');
  fs.mkdirSync(workspace);
  try {
    const ext = path.join(piPackageDir(), 'examples', 'extensions', 'rpc-demo.ts');
    const cfg = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--no-session', '-e', ext] });
    const agent = { name: 'pi (RPC, demo model)', command: cfg.command, args: cfg.args, env: cfg.env, protocol: 'rpc', inheritEnv: false };
    const planted = 'Done. [Open the report](command:workbench.action.terminal.new) $(shield) verified';
    const fake = { name: 'fake-rpc-notify', command: process.execPath, args: [path.join(repoRoot, 'out/test/fixtures/rpcFakeAgent.js'), 'upstream'], env: { FAKE_NOTIFY: planted }, protocol: 'rpc' };
    await withWorkbench({ workspace, userSettings: { 'agentHost.agents': [agent, fake], 'agentHost.defaultAgent': agent.name }, timeoutMs: 240_000 }, async (page, info) => {
      await statusBarItem(page, 'agentHost.status', 60_000);
      // A dangerous shell command makes rpc-demo ask with select(["Allow", "Block"]).
      await askAgent(page, `SCENARIO: shell ${JSON.stringify({ command: `rm -rf ${path.join(workspace, 'nothing-here')}` })}`);
      await page.locator('.quick-input-widget', { hasText: 'Dangerous command' }).waitFor({ timeout: 60_000 });
      await info.screenshot('rpc-select-quick-pick');
      const labels = await pickQuickItem(page, 'Allow');
      assert.deepEqual(labels, ['Allow', 'Block']);
      await expectNotification(page, /Command allowed/);
      // The turn ran the command and the model saw its result.
      await until(() => model.requests.some((r) => r.decision === 'final'), { what: 'the final model request (the turn finishing after Allow)', timeoutMs: 30_000, intervalMs: 200 });

      // new_session makes rpc-demo confirm("Clear session?"): a modal; "No" → the agent notifies "Clear cancelled".
      await runCommand(page, 'Atrium: Agent Commands');
      await pickQuickItem(page, 'New session');
      const dialog = page.locator('.monaco-dialog-box', { hasText: 'Clear session?' });
      await dialog.waitFor({ timeout: 30_000 });
      await info.screenshot('rpc-confirm-modal');
      await dialog.locator('.monaco-button', { hasText: /^No$/ }).click();
      await expectNotification(page, /Clear cancelled/);

      // The chat: rpc-demo's setWidget lines above the composer, its setTitle as the view's description.
      const frame = await openChat(page);
      await waitText(frame, '[data-testid="widgets"] .widget', 'RPC Extension UI Demo', 30_000);
      assert.match(await frame.locator('[data-testid="widgets"]').innerText(), /--- RPC Extension UI Demo ---\s+Loaded and ready\./);
      await page
        // (The sidebar's title while the chat is its only open view; the chat's own header beside the Permission Rules view.)
        .locator('.part.sidebar :is(.composite.title, .pane-header)', { hasText: /pi RPC Demo/i })
        .first()
        .waitFor({ timeout: 10_000 });

      // `/rpc-prefill` → set_editor_text → the composer holds the agent's text.
      const input = frame.locator('.composer textarea');
      await input.fill('/rpc-prefill');
      // The command menu offers it; Escape closes the menu, so that Enter sends instead of picking.
      await frame.locator('.menu:not([hidden]) .menu-item', { hasText: '/rpc-prefill' }).first().waitFor({ timeout: 10_000 });
      await input.press('Escape');
      await frame.locator('.menu').waitFor({ state: 'hidden', timeout: 5_000 });
      await input.press('Enter');
      const prefill = 'This text was set by the rpc-demo extension.';
      await frame.waitForFunction((t) => (document.querySelector('.composer textarea') as HTMLTextAreaElement | null)?.value === t, prefill, { timeout: 30_000 });
      await turnIdle(frame, 30_000);
      await info.screenshot('rpc-chat-prefill');

      // A long tool call; while it runs, Enter sends a follow-up to the agent's own queue.
      const before = model.requests.length;
      await input.fill(`SCENARIO: shell ${JSON.stringify({ command: 'sleep 4' })}`);
      await input.press('Enter');
      await frame.locator('[data-testid="follow-up"]').waitFor({ state: 'visible', timeout: 30_000 });
      await waitText(frame, '.tool-title', 'sleep 4', 30_000); // the tool runs: the agent is streaming
      const marker = 'FOLLOWUP-7d3f: and what next?';
      await input.fill(marker);
      await input.press('Enter');
      await waitText(frame, '[data-testid="agent-queue"]', /1/, 10_000);
      await info.screenshot('rpc-chat-follow-up-queued');
      await turnIdle(frame, 60_000);
      const bodies = model.requests.slice(before).map((r) => JSON.stringify(r.body ?? ''));
      const shellAt = bodies.findIndex((b) => b.includes('sleep 4'));
      const followAt = bodies.findIndex((b) => b.includes('FOLLOWUP-7d3f'));
      assert.ok(shellAt >= 0, 'the shell prompt did not reach the model');
      assert.ok(followAt > shellAt, `the follow-up did not reach the model after the shell turn (at ${followAt})`);
      await frame.locator('[data-testid="agent-queue"]').waitFor({ state: 'hidden', timeout: 10_000 });
      await info.screenshot('rpc-chat-follow-up-done');

      // The fake agent's notify at its start plants a command link and an icon: both stay text (inertMarkup).
      await runCommand(page, 'Atrium: Select Agent');
      await pickQuickItem(page, fake.name);
      await expectNotification(page, /Open the report/, async (item) => {
        const message = item.locator('.notification-list-item-message');
        await info.screenshot('rpc-notify-planted-link');
        assert.equal(await message.locator('a').count(), 0, 'the notification has a link');
        assert.equal(await message.locator('.codicon').count(), 0, 'the notification has an icon');
        assert.equal((await message.textContent())?.trim(), 'Done. [Open the report] (command:workbench.action.terminal.new) $ (shield) verified');
      });
      // Its status entry too: the status bar would render the icon.
      const status = await statusBarItem(page, 'agentHost.rpcStatus', 10_000);
      assert.equal(await status.locator('.codicon').count(), 0, 'the agent status has an icon');
      assert.match((await status.textContent()) ?? '', /\$ \(shield\) verified/);
    });
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
