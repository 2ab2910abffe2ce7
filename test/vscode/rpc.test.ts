/**
 * An RPC-mode agent (upstream pi with its rpc-demo extension) in the real VS Code: the agent's select
 * becomes a quick pick, its confirm a modal dialog, its notify a notification — and the answers reach the
 * agent (it reacts with the notification that matches the answer). Screenshots in test-artifacts/.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { startScriptedModel } from '../model/scriptedModel';
import { PI_RPC, piPackageDir } from '../rpc/agents';
import { repoRoot } from '../support/paths';
import { askAgent, runCommand, statusBarItem, withWorkbench } from './runner';

async function pickQuickItem(page: Page, label: string): Promise<string[]> {
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ timeout: 30_000 });
  const labels = (await rows.allTextContents()).map((l) => l.trim());
  await page.locator('.quick-input-widget input').fill(label);
  await page.waitForTimeout(300);
  await page.keyboard.press('Enter');
  return labels;
}

/** Waits for a notification: as a toast, or (toasts are not always raised in a headless window) in the center. */
async function expectNotification(page: Page, text: RegExp): Promise<void> {
  const toast = page.locator('.notification-toast', { hasText: text }).first();
  if (await toast.waitFor({ timeout: 5_000 }).then(() => true, () => false)) return;
  await runCommand(page, 'Notifications: Show Notifications');
  await page.locator('.notifications-center .notification-list-item', { hasText: text }).first().waitFor({ timeout: 25_000 });
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
    await withWorkbench(
      { workspace, userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name }, timeoutMs: 240_000 },
      async (page, info) => {
        await statusBarItem(page, 'agentHost.status', 60_000);
        // A dangerous shell command makes rpc-demo ask with select(["Allow", "Block"]).
        await askAgent(page, `SCENARIO: shell ${JSON.stringify({ command: `rm -rf ${path.join(workspace, 'nothing-here')}` })}`);
        await page.locator('.quick-input-widget', { hasText: 'Dangerous command' }).waitFor({ timeout: 60_000 });
        await info.screenshot('rpc-select-quick-pick');
        const labels = await pickQuickItem(page, 'Allow');
        assert.deepEqual(labels, ['Allow', 'Block']);
        await expectNotification(page, /Command allowed/);
        // The turn ran the command and the model saw its result.
        const deadline = Date.now() + 30_000;
        while (!model.requests.some((r) => r.decision === 'final') && Date.now() < deadline) await page.waitForTimeout(200);
        assert.ok(model.requests.some((r) => r.decision === 'final'), 'the turn did not finish after Allow');

        // new_session makes rpc-demo confirm("Clear session?"): a modal; "No" → the agent notifies "Clear cancelled".
        await runCommand(page, 'Agent Host: Agent Commands');
        await pickQuickItem(page, 'New session');
        const dialog = page.locator('.monaco-dialog-box', { hasText: 'Clear session?' });
        await dialog.waitFor({ timeout: 30_000 });
        await info.screenshot('rpc-confirm-modal');
        await dialog.locator('.monaco-button', { hasText: /^No$/ }).click();
        await expectNotification(page, /Clear cancelled/);
      },
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
