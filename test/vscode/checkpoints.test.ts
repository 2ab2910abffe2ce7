/**
 * Checkpoints in the real VS Code with pi (RPC) on the scripted model: a prompt whose shell command modifies,
 * creates and deletes files; the user message's "Restore checkpoint" → the quick pick's three choices →
 * "Files and conversation": the folder is back byte for byte, the message and its answer leave the chat, and
 * the model's next request lacks that turn. Then "Edit and resend" on a later message: a file written since goes,
 * and the model gets the edited prompt without the old one. Screenshots in test-artifacts/ (checkpoint-*).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { PI_RPC } from '../rpc/agents';
import { repoRoot } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { answerModal, statusBarItem, withWorkbench } from './runner';
import { focusedRow } from './waits';

/** The quick pick's row labels, then picks `label`. */
async function pickQuickItem(page: Page, label: string): Promise<string[]> {
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ timeout: 30_000 });
  // A row's label is its first .label-name (its detail line has one too).
  const labels = await rows.evaluateAll((els) => els.map((e) => e.querySelector('.label-name')?.textContent ?? ''));
  await page.locator('.quick-input-widget input').fill(label);
  await focusedRow(page, label);
  await page.keyboard.press('Enter');
  return labels.map((l) => l.trim());
}

test('checkpoints: restore files and conversation from a user message (pi RPC)', { timeout: 300_000 }, async () => {
  assert.ok(PI_RPC.installed(), 'pi is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'vscode-checkpoints-'));
  const workspace = path.join(scratch, 'workspace');
  fs.mkdirSync(path.join(workspace, 'src'), { recursive: true });
  const files: Record<string, string> = { 'src/keep.ts': 'export const keep = 1;\r\n', 'src/gone.ts': 'export const gone = 2;\n', 'notes.md': '# Notes\n\nbefore\n' };
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(workspace, rel), content);
  const disk = () =>
    Object.fromEntries(
      fs
        .readdirSync(workspace, { recursive: true, encoding: 'utf8' })
        .filter((r) => fs.statSync(path.join(workspace, r)).isFile())
        .sort()
        .map((r) => [r, fs.readFileSync(path.join(workspace, r), 'utf8')]),
    );
  const before = disk();
  try {
    const cfg = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--session-dir', path.join(scratch, 'sessions')] });
    const agent = { name: 'pi (RPC, scripted model)', command: cfg.command, args: cfg.args, env: cfg.env, protocol: 'rpc', inheritEnv: false };
    await withWorkbench({ workspace, userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name }, timeoutMs: 240_000 }, async (page, info) => {
      await statusBarItem(page, 'agentHost.status', 60_000);
      const frame = await openChat(page);
      await send(frame, 'Remember KEEP-1.\nSCENARIO: answer {"text":"noted KEEP-1"}');
      await waitText(frame, '.entry.msg.agent', 'noted KEEP-1', 60_000);
      await turnIdle(frame, 60_000);
      const change = "printf 'after\\n' > notes.md && rm src/gone.ts && printf 'new\\n' > src/created.ts && mv src/keep.ts src/renamed.ts";
      await send(frame, `Change the files, DROP-2.\nSCENARIO: shell ${JSON.stringify({ command: change })}`);
      await waitText(frame, '.entry.msg.agent', '[scenario: shell]', 60_000);
      await turnIdle(frame, 60_000);
      await until(() => fs.existsSync(path.join(workspace, 'src/created.ts')) && !fs.existsSync(path.join(workspace, 'src/gone.ts')), {
        what: 'the shell command changed the files',
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      assert.notDeepEqual(disk(), before);

      const message = frame.locator('.entry.msg.user', { hasText: 'DROP-2' });
      await message.hover();
      await info.screenshot('checkpoint-user-message-actions');
      await message.locator('[data-action="restore-checkpoint"]').click();
      await page.locator('.quick-input-widget', { hasText: 'Restore checkpoint' }).waitFor({ timeout: 30_000 });
      await info.screenshot('checkpoint-restore-choices');
      assert.deepEqual(await pickQuickItem(page, 'Files and conversation'), ['Files only', 'Conversation only', 'Files and conversation']);

      await until(() => JSON.stringify(disk()) === JSON.stringify(before), { what: 'the files back as before the message', timeoutMs: 30_000, intervalMs: 200 });
      assert.equal(fs.readFileSync(path.join(workspace, 'src/keep.ts'), 'utf8'), 'export const keep = 1;\r\n', 'byte for byte (CRLF kept)');
      await frame.locator('.entry.msg.user', { hasText: 'DROP-2' }).waitFor({ state: 'detached', timeout: 30_000 });
      await waitText(frame, '.entry.msg.user', 'KEEP-1', 10_000);
      await info.screenshot('checkpoint-restored');

      const sent = model.requests.length;
      await send(frame, 'And now THIRD-3.\nSCENARIO: answer {"text":"noted THIRD-3"}');
      await waitText(frame, '.entry.msg.agent', 'noted THIRD-3', 60_000);
      await turnIdle(frame, 60_000);
      const next = model.requests.slice(sent).map((r) => JSON.stringify(r.body ?? ''));
      assert.ok(next.length >= 1, 'the model got the next request');
      for (const body of next) {
        assert.match(body, /KEEP-1/);
        assert.doesNotMatch(body, /DROP-2/, 'the restored-away turn is not in what the model receives');
      }
      await info.screenshot('checkpoint-after-next-prompt');

      // Edit and resend THIRD-3: files and conversation go back to before it (a file written since goes), then the edited prompt is sent.
      fs.writeFileSync(path.join(workspace, 'src/later.ts'), 'later\n');
      const third = frame.locator('.entry.msg.user', { hasText: 'THIRD-3' });
      await third.hover();
      await third.locator('[data-action="edit-resend"]').click();
      await page.locator('.quick-input-widget', { hasText: 'Edit and resend' }).waitFor({ timeout: 30_000 });
      const box = page.locator('.quick-input-widget input');
      assert.equal(await box.inputValue(), 'And now THIRD-3. ⏎ SCENARIO: answer {"text":"noted THIRD-3"}', 'the line break shows as ⏎');
      await box.fill('And now EDITED-4. ⏎ SCENARIO: answer {"text":"noted EDITED-4"}');
      await info.screenshot('checkpoint-edit-resend');
      const editSent = model.requests.length;
      await box.press('Enter');
      await waitText(frame, '.entry.msg.agent', 'noted EDITED-4', 60_000);
      await turnIdle(frame, 60_000);
      assert.equal(fs.existsSync(path.join(workspace, 'src/later.ts')), false, 'the file written after the checkpoint is gone');
      assert.equal(await frame.locator('.entry.msg.user', { hasText: 'THIRD-3' }).count(), 0, 'the edited message replaced the old one');
      const edited = model.requests.slice(editSent).map((r) => JSON.stringify(r.body ?? ''));
      assert.ok(edited.length >= 1, 'the model got the edited prompt');
      for (const body of edited) {
        assert.match(body, /KEEP-1/);
        assert.match(body, /EDITED-4\.\\nSCENARIO/, 'the edited prompt, its line break back');
        assert.doesNotMatch(body, /THIRD-3|DROP-2/, 'neither the edited-away turn nor the restored-away one');
      }
      await info.screenshot('checkpoint-after-edit-resend');

      // Retry EDITED-4 (after a modal): the same restore, then the same prompt again; one copy of it in the chat.
      fs.writeFileSync(path.join(workspace, 'src/again.ts'), 'again\n');
      const fourth = frame.locator('.entry.msg.user', { hasText: 'EDITED-4' });
      await fourth.hover();
      await fourth.locator('[data-action="retry-prompt"]').click();
      const retrySent = model.requests.length;
      assert.match(await answerModal(page, 'Retry'), /Retry this message\?/);
      await until(() => model.requests.length > retrySent && !fs.existsSync(path.join(workspace, 'src/again.ts')), { what: 'the retried prompt at the model', timeoutMs: 60_000 });
      await turnIdle(frame, 60_000);
      // (The old message leaves and the retried one comes in two updates of the page.)
      await until(async () => (await frame.locator('.entry.msg.user', { hasText: 'EDITED-4' }).count()) === 1, { what: 'the retried message once in the chat', timeoutMs: 30_000, intervalMs: 200 });
      const tries = model.requests.slice(retrySent).map((r) => JSON.stringify(r.body ?? '').split('EDITED-4.').length - 1);
      assert.ok(tries.includes(1) && tries.every((n) => n <= 1), `the model sees the prompt once, not the first try too: ${tries}`);
    });
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
