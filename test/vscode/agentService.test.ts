/**
 * An agent service (seed 003, `protocol: "agent-service"`) in a real VS Code (code-server + Chromium), against the
 * protocol-faithful test server (test/support/agentServiceServer.ts) running in this process, driven like a user:
 * the API key typed once into the password box (not asked again after a restart), the chat header's model picker
 * listing the service's models, a chat answer streamed out of order shown whole and in order, Explain and the two
 * unit-test steps from the editor's context menu (the exec_* frames as the service received them, its IDE-service
 * callbacks answered from the TypeScript language service), then the four failures — a task cancelled by a newer
 * one, a full queue offered again with Retry, a socket dropped mid-answer, a refused key — each said once and
 * leaving nothing pending. Screenshots: test-artifacts/agent-service-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import WebSocket from 'ws';
import { scratchWorkspace } from '../support/paths';
import { AgentServiceServer, QUEUE_FULL, type TaskRecord } from '../support/agentServiceServer';
import { stillAbsent, until } from '../support/wait';
import { openChat, send, turnIdle } from './chatUi';
import { agentMenu, fileWith, openFile, selectLines } from './editorUi';
import { agentHostLog, runCommand, statusBarItem, withWorkbench, type WorkbenchInfo } from './runner';
import { diffShown } from './waits';

const KEY = 'simpletest2025_vscode';
const NEW_KEY = 'simpletest2025_vscode_again';
const MODELS = ['atrium-alpha (local)', 'atrium-beta (remote)'] as const;
const AGENT = 'team service';
/** A selection task's progress notification (its title alone on a line; "… was not taken: …" is another notification). */
const PROGRESS = /^Atrium: (Explaining \S+|Optimizing the selection|Fixing the selection|Writing a docstring|Writing unit tests)$/m;

/** A frame as the service received it (parsed JSON). */
type Json = Record<string, unknown>;
interface TextContext {
  filepath: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  text: string;
}

/** The text of `file` between two 0-based positions. */
function textAt(file: string, range: TextContext['range']): string {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const offset = (p: { line: number; character: number }) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return fs.readFileSync(file, 'utf8').slice(offset(range.start), offset(range.end));
}

test('an agent service in a real VS Code: key, models, streamed chat, Explain, unit tests with IDE callbacks, and its four failures', { timeout: 600_000 }, async () => {
  const server = await AgentServiceServer.start({ models: [...MODELS], chunks: 12, shuffle: true, frameDelayMs: 20, log: (l) => console.log(`[service] ${l}`) });
  const { scratch, workspace: ws } = scratchWorkspace('vscode-agent-service', 'selection');
  const cart = path.join(ws, 'src/cart.ts');
  const originalCart = fs.readFileSync(cart, 'utf8');
  const others: WebSocket[] = [];
  let ok = false;
  try {
    const entry = { name: AGENT, protocol: 'agent-service', url: server.url };
    await withWorkbench(
      {
        workspace: ws,
        userSettings: { 'agentHost.agents': [entry], 'agentHost.defaultAgent': AGENT, 'agentHost.answerLanguage': 'en', 'editor.minimap.enabled': false },
        timeoutMs: 480_000,
        failureShot: 'agent-service-failure',
      },
      (page, info) => steps(page, info),
    );
    ok = true;
  } finally {
    for (const o of others) o.terminate();
    await server.close();
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }

  /** The frames of `cmd` the service received (parsed). */
  function received(cmd: string): Json[] {
    return server.received.map((r) => r.frame as Json).filter((f) => f?.cmd === cmd);
  }
  /** Connections the editor opened (its key), as the service logged them. */
  function ours(): number[] {
    return server.connectionLog.filter((c) => c.apiKey?.startsWith(KEY)).map((c) => c.id);
  }
  /** Tasks of these connections still queued or running at the service. */
  function pendingOf(ids: number[]): TaskRecord[] {
    return server.tasks.filter((t) => ids.includes(t.connection) && (t.state === 'queued' || t.state === 'running'));
  }

  async function steps(page: Page, info: WorkbenchInfo): Promise<void> {
    await statusBarItem(page, 'agentHost.status', 60_000);
    // Notifications are read in the notification center, opened with the bell as a person would: under test the
    // workbench often shows no toast for them (progress and warnings alike).
    const center = page.locator('.notifications-center');
    const bell = page.locator('.statusbar-item[id="status.notifications"]');
    const listed = (text: string | RegExp) => center.locator('.notification-list-item', { hasText: text });
    const showList = async () => {
      if (!(await center.isVisible())) await bell.click();
      await center.waitFor({ state: 'visible', timeout: 10_000 });
      // The bell's hover tooltip would cover the list's last buttons (in the screenshots too).
      await page.mouse.move(700, 300);
    };
    const hideList = () =>
      // The list hides by itself when its last notification closes: click again only while it shows.
      until(
        async () => {
          if (await center.isVisible()) await bell.click();
          return center.isHidden();
        },
        { what: 'the notification list to hide', timeoutMs: 10_000, intervalMs: 500 },
      );
    /** The notification list's text: shown, read, hidden again. */
    const notificationList = async () => {
      await showList();
      const text = await center.innerText();
      await hideList();
      return text;
    };
    /**
     * One plain message: `text` is listed once, and the log says the editor raised it once (the list would fold a
     * repeat of the same message into one entry). Leaves the list open.
     */
    const shownOnce = async (text: string | RegExp, logLine: RegExp) => {
      await until(
        async () => {
          await showList();
          return (await listed(text).count()) > 0;
        },
        { what: `the notification "${String(text)}"`, timeoutMs: 60_000, intervalMs: 500 },
      );
      await stillAbsent(async () => (await listed(text).count()) > 1, 2000, `a second notification "${String(text)}"`);
      assert.equal(
        agentHostLog(info.scratch)
          .split('\n')
          .filter((l) => logLine.test(l)).length,
        1,
        `the log says more than once: ${logLine}`,
      );
    };
    /** Nothing pending: no running turn in the chat (no Stop), no task of ours queued or running at the service, no task's progress notification. */
    const nothingPending = async (chat: Frame, what: string) => {
      await turnIdle(chat, 30_000);
      assert.equal(await chat.locator('[data-testid="stop"]:not([hidden])').count(), 0, `${what}: the Stop button still shows`);
      await until(() => pendingOf(ours()).length === 0, { what: () => `${what}: no task of ours left at the service (${JSON.stringify(pendingOf(ours()))})`, timeoutMs: 10_000 });
      let list = '';
      const listShows = async () => {
        list = await notificationList();
        return PROGRESS.test(list);
      };
      await until(async () => !(await listShows()), { what: () => `${what}: the task's progress notification to close (notifications: ${list})`, timeoutMs: 15_000 });
    };
    const passwordBox = page.locator('.quick-input-widget', { has: page.locator('input[type="password"]') });

    // 1. The key: asked once in a password box as the chat starts the agent; the service got it in X-Api-Key.
    let chat = await openChat(page);
    await passwordBox.waitFor({ state: 'visible', timeout: 60_000 });
    assert.match((await passwordBox.textContent()) ?? '', /API key for the agent service "team service"/);
    await page.locator('.quick-input-widget input[type="password"]').pressSequentially(KEY);
    await info.screenshot('agent-service-key-prompt');
    await page.keyboard.press('Enter');
    await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
    assert.deepEqual(
      server.connectionLog.map((c) => [c.apiKey, c.state]),
      [[KEY, 'open']],
    );
    // A restart connects again with the key from SecretStorage: no box.
    await runCommand(page, 'Atrium: Restart Agent');
    await server.waitUntil(() => server.connectionLog.length === 2 && server.connections() === 1 && server.connectionLog[1]?.state === 'open', 'the restart to connect again', 60_000);
    await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
    assert.equal(server.connectionLog[1]?.apiKey, KEY);
    assert.equal(await passwordBox.isVisible(), false, 'the restart asked for the key again');

    // 2. The model picker lists the service's models; the second one picked; a chat answer streamed in
    //    shuffled pieces shows whole and in order; the exec_chat frame carries the chosen model.
    const picker = chat.locator('[data-testid="model"]');
    await picker.waitFor({ timeout: 30_000 });
    assert.deepEqual(await picker.locator('vscode-option').allTextContents(), MODELS);
    await picker.click();
    const option = chat.locator('[data-testid="model"] li.option', { hasText: MODELS[1] });
    await option.waitFor({ timeout: 10_000 });
    await info.screenshot('agent-service-model-picker');
    await option.click();
    await chat.waitForFunction((m) => (document.querySelector('[data-testid="model"]') as HTMLElement | null)?.dataset.current === m, MODELS[1], { timeout: 15_000 });
    const message = 'How do the cart totals add up?';
    await send(chat, message);
    await chat.locator('.msg.user', { hasText: message }).waitFor({ timeout: 30_000 });
    await turnIdle(chat);
    const [chatRequest] = received('exec_chat');
    assert.equal(chatRequest?.msg, message);
    assert.equal(chatRequest?.model, MODELS[1]);
    assert.equal(chatRequest?.stream, true);
    const answerFrames = server.sent.filter((s) => s.frame.request_id === chatRequest?.request_id).map((s) => s.frame);
    const seqs = answerFrames.map((f) => f.stream_seq_id as number);
    assert.ok(seqs.length >= 8, `the answer came in ${seqs.length} pieces`);
    assert.notDeepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'the service sent the pieces in order: the test shows nothing',
    );
    const whole = [...answerFrames]
      .sort((a, b) => (a.stream_seq_id as number) - (b.stream_seq_id as number))
      .map((f) => f.msg as string)
      .join('');
    assert.match(whole, /^You said: "How do the cart totals add up\?"/);
    const shown = (await chat.locator('.msg.agent').last().innerText()).replace(/\s+/g, ' ').trim();
    assert.equal(shown, whole.replace(/\s+/g, ' ').trim(), 'the text on screen is not the whole answer in order');
    await info.screenshot('agent-service-streamed');

    // 3. Explain on a selection: exec_explain with the selection and the visible lines (0-based); the chat
    //    shows the short label and the answer.
    await openFile(page, 'src/cart.ts');
    await selectLines(page, 3, 7);
    await agentMenu(page, info, 'export function sumPrices', /^Explain$/);
    const explain = await until(() => received('exec_explain')[0], { what: 'exec_explain at the service', timeoutMs: 60_000 });
    const selected = explain.selected_text as TextContext;
    const visible = explain.visible_text as TextContext;
    assert.equal(explain.model, MODELS[1]);
    assert.equal(explain.language, 'en');
    assert.equal(selected.filepath, cart);
    // Lines 3-9 selected whole (to the start of line 10): the editor sends them up to the closing brace.
    assert.deepEqual(selected.range, { start: { line: 2, character: 0 }, end: { line: 8, character: 1 } });
    assert.equal(selected.text, originalCart.split('\n').slice(2, 9).join('\n'));
    assert.equal(visible.filepath, cart);
    assert.equal(visible.range.start.line, 0);
    assert.equal(visible.text, textAt(cart, visible.range));
    assert.ok(visible.range.end.line >= 13 && visible.text.includes('export function priciest'), `the visible text: ${JSON.stringify(visible.range)}`);
    chat = await openChat(page);
    await chat.locator('.msg.user .user-text', { hasText: 'Explain: sumPrices in cart.ts' }).waitFor({ timeout: 30_000 });
    await chat.locator('.msg.agent', { hasText: 'The selection starts with: export function sumPrices' }).waitFor({ timeout: 30_000 });
    await nothingPending(chat, 'after Explain');
    await info.screenshot('agent-service-explain');

    // 4. Unit tests in two steps. Before proposing cases the service asks the editor for the file's symbols and
    //    for the type definition of `a` in priciest (a LineItem, declared in src/types.ts).
    const lines = originalCart.split('\n');
    const at = { line: 12, character: (lines[12] ?? '').indexOf('(a, b)') + 1 };
    server.options.ideCalls = {
      exec_unittest_recommend: (req) => [
        { cmd: 'get_document_symbols', abspath: req.filepath as string },
        { cmd: 'find_type_def_locations', abspath: req.filepath as string, ...at },
      ],
    };
    await openFile(page, 'src/cart.ts');
    await selectLines(page, 4, 0);
    await agentMenu(page, info, 'let total = 0', 'Generate Unit Tests');
    const caseRow = (title: string) => page.locator('.quick-input-widget .monaco-list-row', { hasText: title });
    await caseRow('rejects an invalid input').waitFor({ timeout: 90_000 });
    const recommend = received('exec_unittest_recommend')[0]!;
    assert.equal(recommend.func_name, 'sumPrices');
    assert.equal(recommend.filepath, cart);
    assert.equal(recommend.file_content, originalCart);
    assert.deepEqual((recommend.func_location as TextContext['range']).start, { line: 2, character: 0 });
    const symbols = recommend.func_symbols as { name: string; kind: string; children: { name: string }[] }[];
    assert.equal(symbols[0]?.name, 'sumPrices');
    assert.equal(symbols[0]?.kind, 'Function');
    assert.ok(
      symbols[0]?.children.some((c) => c.name === 'total'),
      JSON.stringify(symbols),
    );
    const ide = server.ideReplies.filter((r) => r.taskRequestId === recommend.request_id);
    assert.deepEqual(
      ide.map((r) => r.call.cmd),
      ['get_document_symbols', 'find_type_def_locations'],
    );
    const symbolReply = ide[0]?.reply as { result: { name: string }[] } | undefined;
    assert.deepEqual(
      symbolReply?.result.map((s) => s.name),
      ['sumPrices', 'priciest'],
      `get_document_symbols answered ${JSON.stringify(ide[0]?.reply)}`,
    );
    const typeReply = ide[1]?.reply as { result: { abspath: string }[] } | undefined;
    assert.ok(typeReply?.result.length && typeReply.result.every((l) => l.abspath === path.join(ws, 'src/types.ts')), `find_type_def_locations answered ${JSON.stringify(ide[1]?.reply)}`);
    await info.screenshot('agent-service-test-cases');
    await caseRow('rejects an invalid input').locator('.monaco-checkbox, .quick-input-list-checkbox, input[type="checkbox"]').first().click();
    await page.locator('.quick-input-widget', { hasText: '5 Selected' }).waitFor({ timeout: 5_000 });
    await page.locator('.quick-input-widget .monaco-button', { hasText: /^OK$/ }).click();
    const accept = page.locator('.editor-actions .action-label[aria-label^="Accept the Proposal"]').first();
    await accept.waitFor({ timeout: 90_000 });
    await diffShown(page);
    const code = received('exec_unittest_code')[0]!;
    assert.equal(code.function_name, 'sumPrices');
    assert.match(code.test_cases_str as string, /sumPrices handles a typical input/);
    assert.doesNotMatch(code.test_cases_str as string, /rejects an invalid input/);
    await info.screenshot('agent-service-test-file-diff');
    await accept.click();
    const testFile = path.join(ws, code.file_path as string);
    const written = await fileWith(testFile, /test\(/);
    assert.equal(written.match(/^test\(/gm)?.length, 5, written);
    assert.doesNotMatch(written, /rejects an invalid input/);
    await nothingPending(chat, 'after the unit tests');
    delete server.options.ideCalls;

    // 5a. A task cancelled by a newer one: Explain still runs at the service when Optimize starts.
    server.options.taskMs = 60_000;
    await openFile(page, 'src/cart.ts');
    await selectLines(page, 3, 7);
    await agentMenu(page, info, 'export function sumPrices', /^Explain$/);
    const slow = await server.taskStarted('exec_explain', 2, 60_000);
    await until(async () => PROGRESS.test(await notificationList()), { what: 'the running Explain in the notifications', timeoutMs: 20_000, intervalMs: 500 });
    server.options.taskMs = 0;
    await selectLines(page, 12, 3);
    await agentMenu(page, info, 'export function priciest', /^Optimize$/);
    const reject = page.locator('.editor-actions .action-label[aria-label^="Reject the Proposal"]').first();
    await reject.waitFor({ timeout: 60_000 });
    await reject.click();
    assert.equal(fs.readFileSync(cart, 'utf8'), originalCart, 'the rejected proposal changed cart.ts');
    chat = await openChat(page);
    const cancelledNotice = chat.locator('.entry.notice', { hasText: 'Previous task cancelled' });
    await cancelledNotice.first().waitFor({ timeout: 15_000 });
    assert.equal(await cancelledNotice.count(), 1);
    assert.ok(['cancelled', 'aborted'].includes(slow.state), `the service still works on the first Explain: ${slow.state}`);
    await nothingPending(chat, 'after the cancelled Explain');

    // 5b. A full queue: two other clients hold the service's one worker and its one queue place (for as long as
    //     they are connected: no timing to race); Explain is turned away — said once, with Retry — and goes
    //     through when Retry is clicked after they left.
    Object.assign(server.options, { maxQueue: 1, taskMs: 60_000 });
    for (const name of ['one', 'two']) {
      const other = new WebSocket(server.url, { headers: { 'X-Api-Key': `simpletest2025_other_${name}` } });
      others.push(other);
      await new Promise((resolve, reject_) => other.once('open', resolve).once('error', reject_));
      other.send(JSON.stringify({ cmd: 'exec_chat', request_id: 1, msg: `busy ${name}`, model: MODELS[0] }));
    }
    await server.waitUntil(() => server.tasks.filter((t) => !ours().includes(t.connection) && (t.state === 'running' || t.state === 'queued')).length === 2, 'the other clients to fill the queue');
    const explainsBefore = received('exec_explain').length;
    await selectLines(page, 12, 3);
    await agentMenu(page, info, 'export function priciest', /^Explain$/);
    await shownOnce(/Atrium: Explaining cart\.ts was not taken/, /Task "Explaining cart\.ts" failed: the agent service's queue is full/);
    const warning = listed(/was not taken/).first();
    assert.match((await warning.textContent()) ?? '', new RegExp(QUEUE_FULL));
    await info.screenshot('agent-service-queue-full');
    await hideList();
    chat = await openChat(page);
    await nothingPending(chat, 'after the full queue');
    for (const o of others.splice(0)) o.close();
    await server.waitUntil(() => server.tasks.filter((t) => !ours().includes(t.connection) && (t.state === 'running' || t.state === 'queued')).length === 0, 'the other clients to leave', 30_000);
    server.options.taskMs = 0;
    await showList();
    await warning.locator('.monaco-button', { hasText: /^Retry$/ }).click();
    await hideList();
    await until(() => received('exec_explain').length === explainsBefore + 2, { what: 'the Retry to send Explain again', timeoutMs: 30_000 });
    await chat.locator('.msg.agent', { hasText: 'The selection starts with: export function priciest' }).waitFor({ timeout: 30_000 });
    await server.waitUntil(() => server.tasks.filter((t) => t.cmd === 'exec_explain').at(-1)?.state === 'done', 'the retried Explain done at the service');
    await nothingPending(chat, 'after Retry');

    // 5c. The socket dropped mid-answer: one notice in the chat, the turn ended, the agent connects again.
    Object.assign(server.options, { dropAfterFrames: 3, frameDelayMs: 300 });
    const connectionsBefore = server.connectionLog.length;
    const noticesBefore = await chat.locator('.entry.notice').count();
    await send(chat, 'Tell me about the cart, slowly.');
    await server.waitUntil(() => server.connectionLog.length > connectionsBefore && server.connectionLog.at(-1)?.state === 'open', 'the agent to connect again after the drop', 60_000);
    delete server.options.dropAfterFrames;
    server.options.frameDelayMs = 20;
    await nothingPending(chat, 'after the drop');
    await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
    await chat.locator('.entry.notice', { hasText: 'Connection lost' }).waitFor({ timeout: 15_000 });
    // One notice says the drop; the divider the new connection's session opens with ("Continued with …") is no message.
    const notices = (await chat.locator('.entry.notice').allInnerTexts()).slice(noticesBefore).filter((n) => !/^Continued with/.test(n.trim()));
    assert.equal(notices.length, 1, `notices after the drop: ${JSON.stringify(notices)}`);
    assert.match(notices[0] ?? '', /Connection lost[\s\S]*The connection to the agent service closed \(1006/);
    await info.screenshot('agent-service-dropped');

    // 5d. A refused key: the service turns every key away; a restart is refused, the key forgotten, said once
    //     with "Enter a New Key", which asks again; the new key connects.
    server.options.isValidKey = () => false;
    await runCommand(page, 'Atrium: Restart Agent');
    await shownOnce('The agent service "team service" refused the API key.', /refused the API key: forgotten/);
    assert.equal(await center.locator('.notification-list-item', { hasText: /Restart failed/ }).count(), 0, 'the refusal is said twice: also as a failed Restart');
    await info.screenshot('agent-service-key-refused');
    await hideList();
    delete server.options.isValidKey;
    await nothingPending(chat, 'after the refused key');
    await showList();
    await listed('refused the API key')
      .first()
      .locator('.monaco-button', { hasText: /^Enter a New Key$/ })
      .click();
    await passwordBox.waitFor({ state: 'visible', timeout: 30_000 });
    await page.locator('.quick-input-widget input[type="password"]').pressSequentially(NEW_KEY);
    await page.keyboard.press('Enter');
    await server.waitUntil(() => server.connectionLog.at(-1)?.apiKey === NEW_KEY && server.connectionLog.at(-1)?.state === 'open', 'the new key to connect', 60_000);
    await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
  }
});
