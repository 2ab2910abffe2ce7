/**
 * Workspace trust and the silent-agent report in a real VS Code (code-server + Chromium), one window:
 * 1. The folder opens in Restricted Mode with an agent configured (the hostile ACP agent, which writes a
 *    marker file the moment it runs): the extension is active, the status bar says Restricted Mode, the chat
 *    view explains why no agent runs and offers "Manage Workspace Trust"; Start and Ask the Agent refuse;
 *    no agent process ever started (no marker).
 * 2. The chat's button opens the trust editor; trusting the folder turns the view into the chat without a
 *    reload, and the agent warm starts.
 * 3. A turn the agent accepts and then answers nothing (`SILENT`): with agentHost.silenceWarningSeconds 2
 *    the status bar says "no output for N s", counting up, and the chat shows the same with Cancel; the status
 *    bar's Cancel ends the turn; a second silent turn is ended by the chat's Cancel.
 * Screenshots: test-artifacts/trust-*.png, silence-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { hostileAgent, repoRoot, scratchWorkspace } from '../support/paths';
import { stillAbsent, until } from '../support/wait';
import { chatFrame, send, turnIdle } from './chatUi';
import { agentHostLog, runCommand, statusBarItem, withWorkbench } from './runner';
import { frameWhere, settled } from './waits';

/** The chat webview's frame while it shows the Restricted Mode page. */
function restrictedFrame(page: Page, timeoutMs = 60_000): Promise<Frame> {
  return frameWhere(page, () => document.body?.dataset.view === 'restricted', 'the chat view showing the Restricted Mode page', timeoutMs);
}

/** A notification's text, read in the notification center (toasts are not always raised in a headless window). */
async function notificationWith(page: Page, text: string): Promise<string> {
  await runCommand(page, 'Notifications: Show Notifications');
  const item = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  const shown = await item.waitFor({ timeout: 10_000 }).then(
    async () => ((await item.textContent()) ?? '').trim(),
    () => '',
  );
  await page.keyboard.press('Escape');
  return shown;
}

test('Restricted Mode runs no agent and the chat explains; trusting the folder brings the chat back; a silent agent is reported and cancelled', { timeout: 240_000 }, async () => {
  for (const f of ['dist/extension.js', 'dist/webview/chat.js', 'out/test/fixtures/hostileAgent.js']) assert.ok(fs.existsSync(path.join(repoRoot, f)), `${f} is missing: npm run build`);
  const { scratch, workspace } = scratchWorkspace('trust');
  const marker = path.join(scratch, 'agent-started');
  // Sandboxed like every agent by default: its start marker is outside the workspace, so that folder is allowed.
  const agent = { name: 'hostile (silent)', command: process.execPath, args: [hostileAgent, 'answer'], env: { HOSTILE_STARTED: marker }, sandbox: { allowWrite: [scratch] } };
  const step = (s: string) => console.log(`[trust] ${s}`);
  let ok = false;
  try {
    await withWorkbench(
      {
        workspace,
        workspaceTrust: true,
        userSettings: {
          'agentHost.agents': [agent],
          'agentHost.defaultAgent': agent.name,
          'agentHost.silenceWarningSeconds': 2,
          'workbench.colorTheme': 'Default Light Modern',
        },
        timeoutMs: 200_000,
        viewport: { width: 1280, height: 800 },
      },
      async (page, info) => {
        // 1. Restricted Mode: active, says so, starts nothing.
        const item = await statusBarItem(page, 'agentHost.status', 60_000);
        await page.waitForFunction(() => /Restricted Mode/.test(document.querySelector('.statusbar-item[id$=".agentHost.status"]')?.textContent ?? ''), undefined, { timeout: 30_000 });
        step(`status bar: "${((await item.textContent()) ?? '').trim()}"`);
        await page.locator('.activitybar [aria-label^="Atrium"]').first().click();
        const restricted = await restrictedFrame(page);
        const panel = restricted.locator('[data-testid="restricted"]');
        const text = ((await panel.textContent()) ?? '').trim();
        assert.match(text, /This workspace is in Restricted Mode; Atrium runs agents only in trusted workspaces\./);
        const button = restricted.locator('[data-testid="manage-trust"]');
        assert.match(((await button.textContent()) ?? '').trim(), /Manage Workspace Trust/);
        assert.equal(await restricted.locator('.composer').count(), 0, 'the chat composer shows in Restricted Mode');
        step(`chat view: "${text}" with the button "${((await button.textContent()) ?? '').trim()}"`);
        await settled(panel, 'the Restricted Mode page');
        await info.screenshot('trust-restricted-chat');

        await runCommand(page, 'Atrium: Start Agent');
        const refused = await notificationWith(page, 'Restricted Mode');
        assert.match(refused, /runs agents only in trusted workspaces/, 'Start did not refuse with the reason');
        step(`Start Agent refused: "${refused}"`);
        await runCommand(page, 'Atrium: Ask the Agent');
        // The palette closes as the command runs; the refusal comes before any prompt box would, but it is the
        // same notification as Start's (nothing new to wait for): no prompt box may show for 1 s.
        const promptBox = page.locator('.quick-input-widget .quick-input-message', { hasText: /Ask the agent/i });
        await until(async () => !(await page.locator('.quick-input-widget').isVisible()) || (await promptBox.isVisible()), { what: 'the palette to close', timeoutMs: 10_000 });
        await stillAbsent(() => promptBox.isVisible(), 1000, 'the prompt box of Ask the Agent');
        await page.keyboard.press('Escape');
        assert.equal(fs.existsSync(marker), false, 'an agent process was started in Restricted Mode');
        assert.doesNotMatch(agentHostLog(info.scratch), /Agent "hostile \(silent\)" ready/);
        step('no agent process started (no marker file, no agent in the log)');

        // 2. The chat's button opens the trust editor; trusting turns the view into the chat, no reload.
        await button.click();
        const trustEditor = page.locator('.workspace-trust-editor');
        await trustEditor.waitFor({ state: 'visible', timeout: 30_000 });
        const trustButtons = trustEditor.locator('.workspace-trust-buttons-row .monaco-button');
        await trustButtons
          .filter({ hasText: /^Trust/ })
          .first()
          .waitFor({ state: 'visible', timeout: 30_000 });
        const labels = (await trustButtons.allTextContents()).map((l) => l.trim());
        const trustIndex = labels.findIndex((l) => /^Trust\b/.test(l));
        assert.ok(trustIndex >= 0, `no Trust button in the trust editor: [${labels.join(' | ')}]`);
        await trustButtons.nth(trustIndex).click();
        step(`trust editor: [${labels.join(' | ')}] → ${labels[trustIndex]}`);
        const frame = await chatFrame(page, 60_000);
        await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
        assert.ok(fs.existsSync(marker), 'the agent did not start once trusted');
        await page.waitForFunction(() => !/Restricted Mode/.test(document.querySelector('.statusbar-item[id$=".agentHost.status"]')?.textContent ?? ''), undefined, { timeout: 10_000 });
        const activations = agentHostLog(info.scratch).match(/Atrium activated/g)?.length ?? 0;
        assert.equal(activations, 1, 'the extension host restarted when the folder was trusted');
        step('trusted: the view is the chat (same window, one activation), the agent warm started, the status bar shows it');
        await runCommand(page, 'View: Close All Editors');

        // 3. A silent turn: the status bar and the chat say so; the status bar's Cancel ends it.
        await send(frame, 'SILENT');
        await page.waitForFunction(() => /no output for \d+ s/.test(document.querySelector('.statusbar-item[id$=".agentHost.status"]')?.textContent ?? ''), undefined, { timeout: 15_000 });
        const silence = frame.locator('[data-testid="silence"]');
        await silence.waitFor({ state: 'visible', timeout: 5000 });
        const first = ((await item.textContent()) ?? '').trim();
        const seconds = (s: string) => Number(/no output for (\d+) s/.exec(s)?.[1]);
        let later = first;
        // The count goes up within the 2.2 s the check always allowed it (it ticks once a second).
        await until(
          async () => {
            later = ((await item.textContent()) ?? '').trim();
            return seconds(later) > seconds(first);
          },
          {
            what: () => `the count to go up: "${first}" then "${later}"`,
            timeoutMs: 2200,
            intervalMs: 200,
          },
        );
        assert.ok(await item.locator('.codicon-warning').count(), 'no warning icon in the status bar');
        const chatNotice = ((await silence.textContent()) ?? '').trim();
        assert.match(chatNotice, /No output from the agent for \d+ s/);
        assert.match(chatNotice, /Cancel/);
        step(`silent turn: status bar "${first}" → "${later}"; chat "${chatNotice}"`);
        await info.screenshot('silence-status-and-chat');

        await item.click();
        const cancelRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Cancel the Turn' }).first();
        await cancelRow.waitFor({ timeout: 10_000 });
        const title = (
          (await page
            .locator('.quick-input-widget .quick-input-title')
            .textContent()
            .catch(() => '')) ?? ''
        ).trim();
        await settled(page.locator('.quick-input-widget'), "the status bar's quick pick");
        await info.screenshot('silence-quick-pick');
        await cancelRow.click();
        await turnIdle(frame, 15_000);
        await silence.waitFor({ state: 'hidden', timeout: 5000 });
        await page.waitForFunction(() => !/no output/.test(document.querySelector('.statusbar-item[id$=".agentHost.status"]')?.textContent ?? ''), undefined, { timeout: 5000 });
        step(`status bar click: "${title}" → Cancel the Turn: the turn ended, both notices gone`);

        // The chat's own Cancel, on a second silent turn.
        await send(frame, 'SILENT');
        await silence.waitFor({ state: 'visible', timeout: 15_000 });
        await silence.locator('[data-testid="silence-cancel"]').click();
        await turnIdle(frame, 15_000);
        step('chat Cancel: the second silent turn ended');
      },
    );
    ok = true;
  } finally {
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
});
