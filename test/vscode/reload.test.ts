/**
 * A window reload in a real VS Code (code-server + Chromium) ends every agent process; the chat's session
 * comes back by the reattach ladder, says so, and the model's next request carries the conversation from
 * before the reload — with codex and with claude-agent (opencode: test/vscode/chatUi.ts step 7).
 * Screenshots: test-artifacts/reload-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { reloadWindow, withWorkbench } from './runner';

async function reload(page: Page) {
  await reloadWindow(page);
  // The restored view can replace its webview once more while it settles: a frame found before that detaches,
  // so find it again.
  for (let attempt = 1; ; attempt++) {
    const frame = await openChat(page);
    try {
      await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
      return frame;
    } catch (e) {
      if (attempt >= 3 || !frame.isDetached()) throw e;
    }
  }
}

test('after a window reload the chat reattaches its session: codex and claude remember the conversation', { timeout: 600_000 }, async () => {
  const ids = ['codex', 'claude'] as const;
  for (const id of ids) assert.ok(agentById(id)!.installed(), `${id} is not installed: run scripts/setup-agents.sh`);
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('reload');
  try {
    const agents = [];
    for (const id of ids) {
      const spec = await agentById(id)!.prepare({ scratch: path.join(scratch, id), modelUrl: model.url, workspace });
      agents.push({ name: id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false });
    }
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'codex', 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 540_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        let frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        for (const id of ids) {
          if (id !== 'codex') {
            await frame.locator('[data-testid="agent"]').evaluate((el, v) => {
              (el as HTMLElement & { value: string }).value = v;
              el.dispatchEvent(new Event('change', { bubbles: true }));
            }, id);
            await frame.waitForFunction((v) => (document.querySelector('[data-testid="agent"]') as HTMLElement | null)?.dataset.current === v, id, { timeout: 30_000 });
            await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
          }
          const word = `${id.toUpperCase()}-WORD-${id.length}`;
          await send(frame, `The code word is ${word}.\nSCENARIO: answer {"text": "Noted by ${id}."}`);
          await waitText(frame, '.msg.agent', `Noted by ${id}.`);
          await turnIdle(frame);
          frame = await reload(page);
          await send(frame, `RELOADED-${id}: the word?\nSCENARIO: answer {"text": "Back with ${id}."}`);
          await waitText(frame, '.msg.agent', `Back with ${id}.`);
          await turnIdle(frame);
          const notices = await frame.locator('.entry.notice .notice-title').allTextContents();
          assert.ok(
            notices.some((t) => /^Session (resumed|loaded)$/.test(t.trim())),
            `${id}: not reattached after the reload: ${notices.join(' | ')}`,
          );
          const body =
            model.requests
              .map((r) => JSON.stringify(r.body ?? null))
              .filter((b) => b.includes(`RELOADED-${id}`))
              .at(-1) ?? '';
          assert.ok(body.includes(word), `${id}: after the reload the model did not see the conversation from before`);
          await info.screenshot(`reload-${id}`);
        }
      },
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
