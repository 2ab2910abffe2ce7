/**
 * The chat's queue is bounded, in a real VS Code (code-server + Chromium) with the long-transcript fixture agent
 * streaming a turn: with `agentHost.chat.maxQueuedPrompts: 2` in the workspace settings, two messages queue
 * behind the turn, the third is refused with the composer's notice and stays in the input, and the two queued
 * ones are kept and sent in order when the turn ends; ↑/↓ in the input then recall what was sent.
 * Screenshot: test-artifacts/chat-queue-full.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { scratchWorkspace } from '../support/paths';
import { longAgentConfig } from './chatLong';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { withWorkbench } from './runner';

test('a full chat queue refuses the next message, keeps it in the input and sends the queued ones in order', { timeout: 300_000 }, async () => {
  const { scratch, workspace } = scratchWorkspace('chat-queue');
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'agentHost.chat.maxQueuedPrompts': 2 }));
  const agent = longAgentConfig('queue agent (fixture)');
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
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
        // A turn of about 15 s: long enough to queue behind it.
        await send(frame, 'STREAM 10 15');
        await frame.waitForFunction(() => document.body.dataset.turn !== 'idle', undefined, { timeout: 30_000 });
        await send(frame, 'QUEUED-ONE');
        await send(frame, 'QUEUED-TWO');
        await frame.waitForFunction(() => document.querySelectorAll('[data-testid="queued"]').length === 2, undefined, { timeout: 10_000 });
        await send(frame, 'REFUSED-THREE');
        const warning = frame.locator('.composer-warn');
        await warning.filter({ hasText: /Not queued: 2 messages already wait/ }).waitFor({ state: 'visible', timeout: 10_000 });
        const queued = await frame.locator('[data-testid="queued"] .queued-text').allTextContents();
        assert.deepEqual(queued, ['QUEUED-ONE', 'QUEUED-TWO'], 'the full queue changed');
        assert.equal(await frame.locator('.composer textarea').inputValue(), 'REFUSED-THREE', 'the refused message left the input');
        await info.screenshot('chat-queue-full');
        // The turn ends; the two queued messages go out one after the other, the refused one never.
        await waitText(frame, '.msg.agent', 'You said: QUEUED-TWO', 90_000);
        await turnIdle(frame, 30_000);
        const users = await frame.locator('.msg.user').allTextContents();
        const sent = users.filter((u) => /QUEUED-|REFUSED-/.test(u)).map((u) => /(QUEUED-\w+|REFUSED-\w+)/.exec(u)?.[1]);
        assert.deepEqual(sent, ['QUEUED-ONE', 'QUEUED-TWO'], 'the queued messages were not sent in order, or the refused one was sent');
        assert.equal(await frame.locator('[data-testid="queued"]').count(), 0, 'the queue did not empty');
        // ↑/↓ recall what was sent (the refused one too), newest first; past the newest, the draft again.
        const input = frame.locator('.composer textarea');
        await input.fill('');
        const shown: string[] = [];
        for (const key of ['ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowDown', 'ArrowDown', 'ArrowDown']) {
          await input.press(key);
          shown.push(await input.inputValue());
        }
        assert.deepEqual(shown, ['REFUSED-THREE', 'QUEUED-TWO', 'QUEUED-ONE', 'QUEUED-TWO', 'REFUSED-THREE', '']);
      },
    );
    ok = true;
  } finally {
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
});
