/**
 * A hosted agent in VS Code's own Chat view (docs/chat-view.md), in the real VS Code (code-server 4.139.1) with no
 * Copilot: `@atrium` with opencode on the scripted model answers in the Chat view; its write asks in our modal and
 * lands on disk; a second request continues the same session (the model's second request carries the first turn);
 * the conversation is a tab of the sidebar chat and continues there. Then pi in RPC mode through the same
 * participant. The session is in the history index. Screenshots: chat-view-answer.png, chat-view-followup.png, chat-view-sidebar.png, chat-view-pi.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { type ScriptedModel, startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { PI_RPC } from '../rpc/agents';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { chatFrame } from './chatUi';
import { runCommand, withWorkbench, type WorkbenchInfo } from './runner';
import { agentHostLog, statusBarItem } from './workbenchActions';

test("@atrium in VS Code's Chat view: opencode answers, asks in our modal, continues its session, and the sidebar has it; pi in RPC mode too", { timeout: 900_000 }, async () => {
  assert.ok(agentById('opencode')?.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
  assert.ok(PI_RPC.installed(), 'pi is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('chat-view');
  try {
    const spec = await agentById('opencode')!.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    const pi = PI_RPC.prepare({ scratch: path.join(scratch, 'pi'), modelUrl: model.url, workspace, args: ['--session-dir', path.join(scratch, 'pi', 'sessions')] });
    const agents = [
      { name: 'opencode', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false },
      { name: 'pi', command: pi.command, args: pi.args, env: pi.env, protocol: 'rpc', inheritEnv: false },
    ];
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': agents,
          'agentHost.defaultAgent': 'opencode',
          'agentHost.sessions.stateDir': path.join(scratch, 'state'),
          'chat.disableAIFeatures': false,
          'workbench.colorTheme': 'Default Light Modern',
        },
        timeoutMs: 840_000,
        viewport: { width: 1400, height: 900 },
        failureShot: 'chat-view-failure',
      },
      (page, info) => steps(page, info, workspace, model, path.join(scratch, 'state')),
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

/** The Chat view's input (a Monaco editor), focused. */
async function chatInput(page: Page, scope = '.part.auxiliarybar') {
  const input = page.locator(`${scope} .interactive-input-part .monaco-editor`).first();
  await input.waitFor({ timeout: 60_000 });
  await input.click();
  return input;
}

/** The Chat view's last response, once `text` is in it and its "Continue in Atrium's Chat" button (the response's end) is shown. */
async function responseWith(page: Page, text: string, scope = '.part.auxiliarybar', timeoutMs = 120_000): Promise<string> {
  const last = page.locator(`${scope} .interactive-item-container.interactive-response`).last();
  return until(
    async () => {
      const t = (await last.textContent().catch(() => '')) ?? '';
      return t.includes(text) && t.includes("Continue in Atrium's Chat") ? t : undefined;
    },
    { what: `a response with "${text}"`, timeoutMs, intervalMs: 250 },
  );
}

/** "→ AGENT (tab T, session S)": each request @atrium sent, in order. */
function requestsLogged(scratch: string): Array<{ agent: string; tab: string; session: string }> {
  return [...agentHostLog(scratch).matchAll(/@atrium → (\S+) \(tab (\S+), session (\S+)\)/g)].map((m) => ({ agent: m[1]!, tab: m[2]!, session: m[3]! }));
}

async function steps(page: Page, info: WorkbenchInfo, workspace: string, model: ScriptedModel, stateDir: string): Promise<void> {
  await statusBarItem(page, 'agentHost.status', 60_000);
  await runCommand(page, 'Chat: Open Chat');
  // The model picker picks an agent of ours by itself ("opencode via Atrium"): no Copilot, no sign-in.
  await page.locator('.interactive-input-part', { hasText: 'opencode via' }).first().waitFor({ timeout: 60_000 });

  // 1. A write through opencode: our modal asks, the file lands.
  await chatInput(page);
  await page.keyboard.type(`@atrium SCENARIO: write ${JSON.stringify({ path: 'hello.txt', content: 'Hello from the Chat view' })}`);
  await page.keyboard.press('Enter');
  const modal = page.locator('.monaco-dialog-box', { hasText: 'The agent wants to edit: hello.txt' });
  await modal.waitFor({ timeout: 120_000 });
  await info.screenshot('chat-view-modal');
  await modal.locator('.dialog-buttons .monaco-button', { hasText: /^Allow once$/ }).click();
  await until(() => (fs.existsSync(path.join(workspace, 'hello.txt')) ? true : undefined), { what: 'hello.txt written', timeoutMs: 60_000 });
  assert.equal(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8'), 'Hello from the Chat view');
  const first = await responseWith(page, 'hello.txt');
  assert.match(first, /Review 1 Changed File/, first);
  await info.screenshot('chat-view-answer');

  // 2. A follow-up (the participant is sticky): the same session, which the model sees as the second turn.
  const before = model.requests.length;
  await chatInput(page);
  await page.keyboard.type('SCENARIO: answer {"text":"The second answer, same session"}');
  await page.keyboard.press('Enter');
  await responseWith(page, 'The second answer, same session');
  await info.screenshot('chat-view-followup');
  const asked = requestsLogged(info.scratch);
  assert.equal(asked.length, 2, JSON.stringify(asked));
  assert.deepEqual(asked[1], asked[0], 'the follow-up went to another tab or session');
  const second = model.requests.slice(before).find((r) => r.decision === 'answer');
  assert.ok(
    second,
    `no answer request after the follow-up: ${model.requests
      .slice(before)
      .map((r) => r.decision)
      .join(', ')}`,
  );
  assert.ok(JSON.stringify(second.body).includes('Hello from the Chat view'), 'the follow-up’s model request does not carry the first turn');

  // The session is in Atrium's session history (its index), as the Chat view's conversation.
  const indexed = await until(
    () => {
      try {
        const index = JSON.parse(fs.readFileSync(path.join(stateDir, 'sessions', 'index.json'), 'utf8')) as { sessions: Array<{ sessionId: string; agent: string; firstPrompt?: string }> };
        return index.sessions.find((r) => r.sessionId === asked[0]!.session);
      } catch {
        return undefined;
      }
    },
    { what: 'the session in the history index', timeoutMs: 30_000 },
  );
  assert.equal(indexed.agent, 'opencode');
  assert.match(indexed.firstPrompt ?? '', /SCENARIO: write/);

  // 3. The conversation is a tab of the sidebar chat, and continues there.
  await page.locator('.interactive-response .monaco-button:visible', { hasText: "Continue in Atrium's Chat" }).last().click();
  const frame = await chatFrame(page);
  await frame.locator('.entry.msg.agent', { hasText: 'The second answer, same session' }).first().waitFor({ timeout: 30_000 });
  await info.screenshot('chat-view-sidebar');
  await frame.locator('.composer textarea').fill('SCENARIO: answer {"text":"Continued in the sidebar"}');
  await frame.locator('.composer textarea').press('Enter');
  await frame.locator('.entry.msg.agent', { hasText: 'Continued in the sidebar' }).first().waitFor({ timeout: 60_000 });
  const third = model.requests.filter((r) => r.decision === 'answer').at(-1);
  assert.ok(JSON.stringify(third?.body).includes('The second answer, same session'), 'the sidebar’s turn is not the same conversation');

  // 4. pi in RPC mode, picked in the model picker, in a new conversation (a chat editor).
  await runCommand(page, 'Chat: New Chat Editor');
  const editor = '.part.editor';
  // The model picker: its search, then the row (or Enter on the first match when its list is not laid out yet).
  const picked = page.locator(`${editor} .interactive-input-part .action-label`, { hasText: 'pi via' });
  const search = page.locator('input[placeholder="Search models"]:visible');
  await until(
    async () => {
      if (await picked.first().isVisible()) return true;
      await page.keyboard.press('Escape');
      await page.locator(`${editor} .interactive-input-part .action-label`, { hasText: 'opencode via' }).first().click({ timeout: 5_000 });
      if (!(await search.isVisible())) return undefined;
      await search.fill('pi via');
      const row = page.locator('.monaco-list-row:visible, .action-item:visible', { hasText: 'pi via Atrium' }).first();
      if (await row.isVisible()) await row.click({ timeout: 5_000 });
      else await page.keyboard.press('Enter');
      return (await picked.first().isVisible()) || undefined;
    },
    { what: '"pi via Atrium" picked in the model picker', timeoutMs: 60_000, intervalMs: 1000 },
  );
  await page.locator(`${editor} .interactive-input-part`, { hasText: 'pi via' }).first().waitFor({ timeout: 15_000 });
  await chatInput(page, editor);
  await page.keyboard.type('@atrium SCENARIO: answer {"text":"pi answers in the Chat view"}');
  await page.keyboard.press('Enter');
  await responseWith(page, 'pi answers in the Chat view', editor);
  await info.screenshot('chat-view-pi');
  const all = requestsLogged(info.scratch);
  assert.equal(all.at(-1)?.agent, 'pi', JSON.stringify(all));
  assert.notEqual(all.at(-1)?.tab, asked[0]!.tab);
}
