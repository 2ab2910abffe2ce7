/**
 * The selection commands in a real VS Code (code-server + Chromium) with a real agent (opencode) against the
 * scripted model, driven like a user: select code, right-click, "Agent" submenu, pick the command, look at
 * the diff preview, click Accept — then assert on the files on disk. On the sample Python and TypeScript
 * files (test/fixtures/selection): the inserted docstring, the applied fix, the written test file (after
 * unchecking a case in the picker), "Fix with agent" from the Ctrl+. menu on a type error, "Explain" from a
 * CodeLens (the chat shows a short label and a chip, not the instructions) with Optimize queued behind it
 * (`agentHost.tasks.whenBusy: "queue"`) and changing only the selection, a third task refused by the full queue
 * (`agentHost.tasks.maxQueued: 2`) with a warning, "Ask About the Selection" (the
 * question reaching the model carries the selected code), the cancellation of a running task when a new
 * one starts, and the zh answers (setting `agentHost.answerLanguage`). Screenshots in
 * test-artifacts/selection-*.png.
 *
 * A small proxy sits between the agent and the model: it can hold the model's answer to one task (and
 * release it later), so a task is still running when the next one starts, and it records whether the agent
 * aborted the held request (what `session/cancel` makes opencode do).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { stillAbsent, until } from '../support/wait';
import { chatFrame } from './chatUi';
import { acceptDiff, agentMenu, fileWith, openFile, selectLines } from './editorUi';
import { runCommand, statusBarItem, withWorkbench, type WorkbenchInfo } from './runner';
import { cursorWithin } from './waits';

interface Held {
  task: string;
  aborted: boolean;
  /** Forwards the held request after all (the task goes on). */
  release(): void;
}

/** Forwards everything to the model, except the first request of the task in `holdTask`, which it holds until released. */
async function startProxy(target: string): Promise<{ url: string; holdTask: string | undefined; held: Held[]; close(): Promise<void> }> {
  const state = { holdTask: undefined as string | undefined, held: [] as Held[] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = () => {
        const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      };
      const task = state.holdTask;
      if (task && body.toString().includes(`Atrium task: ${task}`) && body.toString().includes('"tools"')) {
        // Only the first: later requests carry the whole conversation, this prompt included.
        state.holdTask = undefined;
        const held: Held = { task, aborted: false, release: forward };
        state.held.push(held);
        // Closed before the answer was complete: the agent gave up on the request.
        res.on('close', () => (held.aborted = !res.writableFinished));
        return;
      }
      forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** Text of the model requests (what the agent sent the model) that `pattern` matches. */
function requestsMatching(model: { requests: { body: unknown }[] }, pattern: RegExp): string[] {
  return model.requests.map((r) => JSON.stringify(r.body)).filter((b) => pattern.test(b));
}

/** Waits for the notification saying `text`: its toast, or (toasts are not always raised in a headless window) the list in the notification center, left open for the screenshot. */
async function refusedNotice(page: Page, text: string): Promise<void> {
  const toast = page.locator('.notification-toast', { hasText: text }).first();
  if (
    await toast.waitFor({ timeout: 5_000 }).then(
      () => true,
      () => false,
    )
  )
    return;
  await runCommand(page, 'Notifications: Show Notifications');
  await page.locator('.notifications-center .notification-list-item', { hasText: text }).first().waitFor({ timeout: 15_000 });
}

test('selection commands from the editor context menu with opencode in a real VS Code', { timeout: 600_000 }, async () => {
  const agent = agentById('opencode');
  assert.ok(agent, 'no opencode in the catalog');
  assert.ok(agent.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const proxy = await startProxy(model.url);
  const { scratch, workspace: ws } = scratchWorkspace('vscode-selection', 'selection');
  const pricing = path.join(ws, 'shop/pricing.py');
  const cart = path.join(ws, 'src/cart.ts');
  const originalPricing = fs.readFileSync(pricing, 'utf8');
  const originalCart = fs.readFileSync(cart, 'utf8');
  try {
    const spec = await agent.prepare({ scratch, modelUrl: proxy.url, workspace: ws });
    const config = { name: 'opencode (demo model)', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
    await withWorkbench(
      {
        workspace: ws,
        userSettings: { 'agentHost.agents': [config], 'agentHost.defaultAgent': config.name, 'agentHost.answerLanguage': 'en', 'editor.minimap.enabled': false },
        timeoutMs: 480_000,
        failureShot: 'selection-failure',
      },
      (page, info) => steps(page, info),
    );
    const decisions = model.requests.map((r) => r.decision).filter((d) => d.startsWith('task:'));
    assert.deepEqual(decisions, ['task:docstring', 'task:fix', 'task:testCases', 'task:testCode', 'task:fix', 'task:explain', 'task:optimize', 'task:docstring']);
  } finally {
    await proxy.close();
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  async function steps(page: Page, info: WorkbenchInfo): Promise<void> {
    await statusBarItem(page, 'agentHost.status', 60_000);

    // 1. Docstring (Python): the function selected, the docstring arrives through the diff preview.
    await openFile(page, 'shop/pricing.py');
    await selectLines(page, 6, 5);
    await agentMenu(page, info, 'def cart_total', 'Write Docstring', 'selection-context-menu');
    await acceptDiff(page, info, 'selection-docstring-diff');
    const withDoc = await fileWith(pricing, /"""Compute the total price/);
    assert.match(
      withDoc,
      /def cart_total\(items\):\n {4}"""Compute the total price of the cart[^\n]*\n\n {4}Args:\n {8}items: The cart lines[^\n]*\n\n {4}Returns:\n {8}The total price; 0 for an empty cart\.\n {4}"""\n {4}total = 0\n/,
    );
    // Only the docstring was added: the code is byte for byte the same.
    assert.equal(withDoc.replace(/\n {4}"""Compute[\s\S]*?\n {4}"""/, ''), originalPricing);

    // 2. Fix (TypeScript): the off-by-one loop bound.
    await openFile(page, 'src/cart.ts');
    await selectLines(page, 3, 7);
    await agentMenu(page, info, 'export function sumPrices', /^Fix$/);
    await acceptDiff(page, info, 'selection-fix-diff');
    const fixed = await fileWith(cart, /i < items\.length/);
    assert.equal(fixed, originalCart.replace('i <= items.length', 'i < items.length'));

    // 3. Unit tests (Python): cursor in the function, cases picked (one unchecked), a new test file.
    await openFile(page, 'shop/pricing.py');
    await selectLines(page, 16, 0);
    await agentMenu(page, info, 'total = 0', 'Generate Unit Tests');
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'free item' }).waitFor({ timeout: 90_000 });
    let shown = 0;
    await until(
      async () => {
        shown = await rows.count();
        return shown === 6;
      },
      { what: () => `six proposed cases (the picker shows ${shown})`, timeoutMs: 5_000 },
    );
    await info.screenshot('selection-test-cases-picker');
    const free = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'free item' });
    await free.locator('.monaco-checkbox, .quick-input-list-checkbox, input[type="checkbox"]').first().click();
    await page.locator('.quick-input-widget', { hasText: '5 Selected' }).waitFor({ timeout: 5_000 });
    await info.screenshot('selection-test-cases-picker-unchecked');
    await page.locator('.quick-input-widget .monaco-button', { hasText: /^OK$/ }).click();
    await acceptDiff(page, info, 'selection-tests-new-file-diff');
    const testFile = path.join(ws, 'tests/test_pricing.py');
    const tests = await fileWith(testFile, /def test_/);
    assert.match(tests, /^import pytest\n\nfrom shop\.pricing import cart_total\n/);
    assert.equal(tests.match(/^def test_/gm)?.length, 5, tests);
    assert.match(tests, /def test_empty_cart\(\):\n {4}"""no lines cost nothing"""\n {4}assert cart_total\(\[\]\) == pytest\.approx\(0\)/);
    assert.doesNotMatch(tests, /free_item/);

    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });

    // 4. Quick fix on a diagnostic (TypeScript): a type error typed in and saved, the lightbulb menu's
    //    "Fix with agent" (Ctrl+.), the diff accepted: the function returns a string again.
    const format = path.join(ws, 'src/format.ts');
    await openFile(page, 'src/format.ts');
    await selectLines(page, 2, 0);
    await page.keyboard.press('Shift+End');
    await page.keyboard.type('return value;');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+s');
    const broken = await fileWith(format, /\n {2}return value;\n/);
    const squiggle = page.locator('.editor-group-container.active .squiggly-error').first();
    await squiggle.waitFor({ timeout: 60_000 });
    const fixItem = page.locator('.action-widget .monaco-list-row.action', { hasText: 'Fix with agent' }).first();
    for (let attempt = 0; attempt < 5 && !(await fixItem.isVisible()); attempt++) {
      // The cursor on the problem, then Ctrl+. (the lightbulb's menu). The squiggle is re-rendered when the
      // diagnostics come again (seen under load: gone between waitFor and boundingBox): wait for it each time.
      const box = await until(() => squiggle.boundingBox({ timeout: 5_000 }), { what: 'the squiggle on the screen', timeoutMs: 30_000 });
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      await cursorWithin(page, box);
      await page.keyboard.press('Control+.');
      await fixItem.waitFor({ timeout: 5_000 }).catch(() => page.keyboard.press('Escape'));
    }
    await page.locator('.action-widget .monaco-list-row.action', { hasText: 'Explain problem' }).first().waitFor({ timeout: 5_000 });
    await info.screenshot('selection-quick-fix-menu');
    await fixItem.click();
    await acceptDiff(page, info, 'selection-quick-fix-diff');
    const quickFixed = await fileWith(format, /return value\.toFixed\(2\);/);
    assert.equal(quickFixed, broken.replace('  return value;\n', '  return value.toFixed(2);\n'));
    const fixPrompt = requestsMatching(model, /Atrium task: fix/).at(-1) ?? '';
    assert.match(fixPrompt, /Type 'number' is not assignable to type 'string'/, 'the diagnostic reached the model');
    assert.match(fixPrompt, /export function money\(value: number\): string \{\\n {2}return value;/, 'the function with the error reached the model');

    // 5. Queue mode, CodeLens and the chat's label: "Explain" clicked in the CodeLens above sumPrices is
    //    still waiting for the model (the proxy holds its answer) when Optimize starts: Optimize waits for
    //    it instead of cancelling it. The chat shows "Explain: sumPrices in cart.ts" with a chip, not the
    //    instructions the agent got. Then Optimize's proposal changes the file only inside the selection.
    fs.writeFileSync(path.join(ws, '.vscode/settings.json'), JSON.stringify({ 'agentHost.tasks.whenBusy': 'queue', 'agentHost.tasks.maxQueued': 2 }));
    await openFile(page, 'src/cart.ts');
    proxy.holdTask = 'explain';
    const lens = page.locator('.editor-group-container.active .codelens-decoration a', { hasText: /^Explain$/ }).first();
    await lens.waitFor({ timeout: 30_000 });
    // A test file gets no lenses (not on its `test(…)` callback either), while cart.ts has them (above).
    await openFile(page, 'src/format.test.ts');
    await stillAbsent(() => page.locator('.editor-group-container.active .codelens-decoration a').count(), 3000, 'a CodeLens in a test file');
    await openFile(page, 'src/cart.ts');
    await lens.waitFor({ timeout: 30_000 });
    await lens.click();
    await until(() => proxy.held.length > 0, { what: 'the CodeLens explanation reaching the model', timeoutMs: 60_000, intervalMs: 200 });
    assert.equal(proxy.held.length, 1, 'the CodeLens explanation never reached the model');
    const chat = await chatFrame(page);
    const userMsg = chat.locator('.msg.user').last();
    await userMsg
      .locator('.user-text', { hasText: 'Explain: sumPrices in cart.ts' })
      .waitFor({ timeout: 30_000 })
      .catch(async (error: unknown) => {
        // What the chat showed instead (a CI run once timed out here with no clue): its tabs and user messages.
        const seen = await chat.evaluate(() => ({
          tabs: [...document.querySelectorAll('.tab')].map((t) => `${t.textContent ?? ''}${t.classList.contains('active') ? ' (active)' : ''}`),
          users: [...document.querySelectorAll('.msg.user .user-text')].map((u) => u.textContent ?? ''),
        }));
        throw new Error(`${(error as Error).message}\nthe chat showed: ${JSON.stringify(seen)}`);
      });
    assert.equal((await userMsg.locator('.user-text').textContent())?.trim(), 'Explain: sumPrices in cart.ts', 'the chat shows the label, not the instructions');
    assert.equal((await userMsg.locator('.chip').allTextContents()).join('|').trim(), 'cart.ts:3-9');
    await openFile(page, 'src/cart.ts');
    const beforeOptimize = fs.readFileSync(cart, 'utf8');
    await selectLines(page, 3, 7);
    await agentMenu(page, info, 'export function sumPrices', /^Optimize$/);
    // Queued work sends nothing: no event says Optimize waits, so hold 3 s and fail the moment it asks the model.
    await stillAbsent(() => requestsMatching(model, /Atrium task: optimize/).length > 0, 3000, "Optimize's model request while Explain holds (it did not wait)");
    await info.screenshot('selection-queued-behind-explain');
    // The queue is full (agentHost.tasks.maxQueued: 2, Explain running and Optimize waiting): a third task is
    // refused with a warning naming the setting, sends nothing, and the two run on.
    await agentMenu(page, info, 'export function sumPrices', /^Explain$/);
    await refusedNotice(page, 'Explaining cart.ts was not queued: 2 tasks already run or wait');
    await info.screenshot('selection-queue-full');
    await runCommand(page, 'Notifications: Hide Notifications');
    assert.equal(proxy.held.length, 1, 'the refused Explain reached the model');
    assert.equal(requestsMatching(model, /Atrium task: optimize/).length, 0, 'Optimize did not wait for the running explanation');
    assert.equal(proxy.held[0]?.aborted, false, 'queue mode cancelled the running explanation');
    proxy.held[0]?.release();
    await chat.locator('.msg.agent', { hasText: 'What it does' }).last().waitFor({ timeout: 60_000 });
    await acceptDiff(page, info, 'selection-optimize-diff');
    const optimized = await fileWith(cart, /items\.reduce/);
    const lines = beforeOptimize.split('\n');
    const head = `${lines.slice(0, 2).join('\n')}\n`;
    const tail = lines.slice(9).join('\n');
    assert.ok(optimized.startsWith(head) && optimized.endsWith(tail), `changed outside the selection:\n${optimized}`);
    assert.equal(
      optimized.slice(head.length, optimized.length - tail.length),
      'export function sumPrices(items: LineItem[]): number {\n  return items.reduce((sum, item) => sum + item.price * item.qty, 0);\n}\n',
    );
    assert.equal(proxy.held[0]?.aborted, false);

    // 6. Ask about the selection: the chat gets it as a chip; the question sent carries the selected code.
    await openFile(page, 'shop/pricing.py');
    await selectLines(page, 21, 4);
    await agentMenu(page, info, 'def apply_discount', /^Ask About the Selection/);
    const chip = chat.locator('.composer-chips .chip').first();
    await chip.waitFor({ timeout: 15_000 });
    await info.screenshot('selection-ask-chip');
    const question = 'What does it return for a 100 percent discount?';
    const input = chat.locator('.composer textarea');
    await input.fill(question);
    await input.press('Enter');
    await chat.locator('.msg.user', { hasText: question }).waitFor({ timeout: 15_000 });
    const asked = await until(() => requestsMatching(model, /100 percent discount/)[0], { what: 'the question reaching the model', timeoutMs: 60_000, intervalMs: 200 });
    assert.match(asked, /def apply_discount\(total, percent\)/, 'the selected code reached the model');
    assert.match(asked, /pricing\.py/, 'the file reference reached the model');
    await chat.waitForFunction(() => document.body.dataset.turn === 'idle', undefined, { timeout: 60_000 });

    // 7. Cancellation and Chinese: an explanation is under way (the proxy holds the model's answer) when a
    //    docstring task starts: the explanation is cancelled (the agent aborts its model request) and the
    //    docstring arrives in Chinese, replacing the JSDoc that was there.
    fs.writeFileSync(path.join(ws, '.vscode/settings.json'), JSON.stringify({ 'agentHost.answerLanguage': 'zh' }));
    proxy.holdTask = 'explain';
    await openFile(page, 'shop/pricing.py');
    await selectLines(page, 21, 4);
    await agentMenu(page, info, 'def apply_discount', /^Explain$/);
    await until(() => proxy.held.length > 1, { what: 'the explanation reaching the model', timeoutMs: 60_000, intervalMs: 200 });
    assert.equal(proxy.held.length, 2, 'the explanation never reached the model');
    await page
      .locator('.notification-toast, .notifications-center', { hasText: 'Explaining' })
      .first()
      .waitFor({ timeout: 10_000 })
      .catch(() => undefined);
    await info.screenshot('selection-explain-running');
    await openFile(page, 'src/cart.ts');
    await selectLines(page, 8, 3);
    await agentMenu(page, info, 'export function priciest', 'Write Docstring');
    await acceptDiff(page, info, 'selection-docstring-zh-diff');
    const zh = await fileWith(cart, /@returns/);
    assert.ok(proxy.held[1]?.aborted, 'the held explanation request was not aborted: session/cancel did not reach the agent');
    assert.match(zh, /\/\*\*\n \* 返回 priciest 的结果。\n \*\n \* @param items 购物车中的各行，每行包含 `price` 和 `qty`。\n \* @returns 计算结果。\n \*\/\nexport function priciest/);
    assert.doesNotMatch(zh, /The most expensive line of the cart/, 'the old JSDoc was replaced');
    assert.equal(zh.replace(/\/\*\*\n \* 返回[\s\S]*?\*\/\n/, ''), optimized.replace('/** The most expensive line of the cart. */\n', ''));
    // The cancelled task applied nothing and left no proposal open.
    assert.equal(await page.locator('.monaco-diff-editor').count(), 0);
  }
});
