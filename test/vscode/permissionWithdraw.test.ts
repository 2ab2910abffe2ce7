/**
 * A withdrawn permission request leaves nothing to click that could still allow it, in a real VS Code
 * (code-server + Chromium) with the intruder agent (test/fixtures/intruderAgent.ts), which asks in the name
 * of a session the host never opened:
 * - inline mode (the card in the chat): Stop withdraws the card at once — no buttons left — and the agent
 *   is answered `cancelled`;
 * - modal mode: the modal blocks the window, so Stop cannot be pressed while it is up; when the request is
 *   withdrawn anyway (here by the permission time-out) VS Code offers no way to close a modal from an
 *   extension, so a late "Allow" is discarded (the agent keeps its `cancelled`) and a notification says so.
 * Screenshots: test-artifacts/permission-withdrawn-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle } from './chatUi';
import { runCommand, withWorkbench } from './runner';

const intruder = path.join(repoRoot, 'out', 'test', 'fixtures', 'intruderAgent.js');

function plan(id: string) {
  return [
    {
      permission: {
        sessionId: 'a-session-the-host-never-opened',
        toolCall: { toolCallId: id, title: `Delete the build folder (${id})`, kind: 'delete', rawInput: { command: 'rm -rf build' } },
        options: [
          { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        ],
      },
    },
  ];
}

const answers = (log: string) =>
  fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { step: string; answer: { result?: { outcome?: { outcome: string; optionId?: string } } } })
    : [];

test('a withdrawn permission request cannot be allowed late: inline card withdrawn on Stop; a modal answered after its time-out is discarded', { timeout: 420_000 }, async () => {
  fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'withdraw-'));
  const workspace = path.join(scratch, 'workspace');
  fs.mkdirSync(workspace);
  const inlineLog = path.join(scratch, 'inline.ndjson');
  const modalLog = path.join(scratch, 'modal.ndjson');
  // The fixture logs beside the workspace: that folder is allowed by name in its sandbox.
  const agent = (name: string, log: string, id: string) => ({
    name,
    command: process.execPath,
    args: [intruder],
    env: { INTRUDER_PLAN: JSON.stringify(plan(id)), INTRUDER_LOG: log },
    sandbox: { allowWrite: [path.dirname(log)] },
  });
  try {
    // Inline mode: the card in the chat, Stop in the chat.
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': [agent('intruder', inlineLog, 'inline-1')], 'agentHost.permissions.mode': 'inline', 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 180_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
        await send(frame, 'go');
        const card = frame.locator('.entry.permission', { hasText: 'inline-1' });
        await card.locator('[data-action="answer-permission"]').first().waitFor({ timeout: 30_000 });
        await info.screenshot('permission-withdrawn-01-inline-asked');
        await frame.locator('[data-testid="stop"]').click();
        await frame.locator('.entry.permission.state-cancelled', { hasText: 'inline-1' }).waitFor({ timeout: 15_000 });
        assert.equal(await card.locator('[data-action="answer-permission"]').count(), 0, 'answer buttons are left after Stop');
        await turnIdle(frame, 30_000);
        await info.screenshot('permission-withdrawn-02-inline-stopped');
        const got = answers(inlineLog).filter((a) => a.step === 'permission');
        assert.equal(got.length, 1);
        assert.deepEqual(got[0]!.answer.result?.outcome, { outcome: 'cancelled' });
      },
    );

    // Modal mode with a 3 s time-out: the modal outlives its request; a late "Allow" is discarded.
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [agent('intruder', modalLog, 'modal-1')],
          'agentHost.permissions.mode': 'modal',
          'agentHost.permissions.timeoutSeconds': 3,
          'workbench.colorTheme': 'Default Light Modern',
        },
        timeoutMs: 180_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
        await send(frame, 'go');
        const box = page.locator('.monaco-dialog-box');
        await box.waitFor({ state: 'visible', timeout: 30_000 });
        // The request times out while the modal is up: the agent is answered cancelled at once.
        await until(() => answers(modalLog).some((a) => a.step === 'permission'), { what: 'the timed-out permission answered to the agent', timeoutMs: 15_000 });
        assert.deepEqual(answers(modalLog).find((a) => a.step === 'permission')?.answer.result?.outcome, { outcome: 'cancelled' });
        await box
          .locator('.dialog-buttons .monaco-button', { hasText: /^Allow once/ })
          .first()
          .click();
        await box.waitFor({ state: 'hidden', timeout: 10_000 });
        // The notification (toast, or in the notification centre when toasts are held back).
        await runCommand(page, 'Notifications: Show Notifications');
        await page
          .locator('.notification-list-item', { hasText: /withdrawn before you answered/ })
          .first()
          .waitFor({ timeout: 15_000 });
        await info.screenshot('permission-withdrawn-03-modal-late');
        // Nothing more reached the agent, and no rule was planted.
        assert.equal(answers(modalLog).filter((a) => a.step === 'permission').length, 1);
        await turnIdle(frame, 30_000);
        const rules = path.join(workspace, '.vscode', 'settings.json');
        assert.ok(!fs.existsSync(rules) || !fs.readFileSync(rules, 'utf8').includes('rm -rf'), 'a rule was recorded');
      },
    );
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
