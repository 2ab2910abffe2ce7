/**
 * The selection commands through an RPC agent (upstream pi in RPC mode) in the real VS Code, against the
 * scripted model, from the editor context menu's "Agent" submenu: Explain (the chat shows the short label and
 * a chip; what pi sends the model carries the selection and the code visible around it), Write Docstring
 * (accepted in the diff: the file gets it) and Generate Unit Tests (the cases picked, the test file written).
 * Then the window reloads with VS Code's display language Chinese (test/vscode/displayLanguage.ts): Explain's
 * label is the Chinese one and the model is asked to answer in Chinese. Screenshots in
 * test-artifacts/rpc-selection-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { PI_RPC } from '../rpc/agents';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { chatFrame } from './chatUi';
import { userDataIn } from './displayLanguage';
import { acceptDiff, agentMenu, fileWith, openFile, selectLines } from './editorUi';
import { reloadWindow, statusBarItem, withWorkbench, type WorkbenchInfo } from './runner';

/** The bodies of the model requests (what pi sent the model) for a task, as JSON text. */
function taskRequests(model: ScriptedModel, task: string): string[] {
  return model.requests.filter((r) => r.decision === `task:${task}`).map((r) => JSON.stringify(r.body));
}

/** The chat's user messages as shown: their text and chips. */
async function userMessages(chat: Frame): Promise<{ text: string; chips: string }[]> {
  return chat.locator('.msg.user').evaluateAll((els) =>
    els.map((e) => ({
      text: e.querySelector('.user-text')?.textContent?.trim() ?? '',
      chips: [...e.querySelectorAll('.chip')].map((c) => c.textContent?.trim() ?? '').join('|'),
    })),
  );
}

/** The header's thinking-level picker: its label and the names of its choices. */
async function thinkingPicker(chat: Frame): Promise<{ label: string | null; choices: string[] }> {
  const picker = chat.locator('[data-testid="config-thinking_level"]');
  await picker.waitFor({ timeout: 30_000 });
  return { label: await picker.getAttribute('aria-label'), choices: (await picker.locator('vscode-option').allTextContents()).map((t) => t.trim()) };
}

test('selection commands through pi in RPC mode: short labels, the selection and visible text, English and Chinese', { timeout: 300_000 }, async () => {
  assert.ok(PI_RPC.installed(), 'pi is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace: ws } = scratchWorkspace('vscode-rpc-selection', 'selection');
  const pricing = path.join(ws, 'shop/pricing.py');
  const originalPricing = fs.readFileSync(pricing, 'utf8');
  const userData = path.join(scratch, 'user-data');
  try {
    const cfg = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace: ws, args: ['--no-session'] });
    const agent = { name: 'pi (RPC, demo model)', command: cfg.command, args: cfg.args, env: cfg.env, protocol: 'rpc', inheritEnv: false };
    const userSettings = { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name, 'editor.minimap.enabled': false };
    await withWorkbench({ workspace: ws, userDataDir: userData, userSettings, timeoutMs: 240_000, failureShot: 'rpc-selection-failure' }, (page, info) => steps(page, info));
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  async function steps(page: Page, info: WorkbenchInfo): Promise<void> {
    await statusBarItem(page, 'agentHost.status', 60_000);

    // 1. Explain cart_total: the chat shows "Explain: …" and a chip; pi sent the model the instructions with the
    //    selection and the visible code (receipt_line is on screen, outside the selection).
    await openFile(page, 'shop/pricing.py');
    await selectLines(page, 6, 5);
    await agentMenu(page, info, 'def cart_total', /^Explain$/);
    const chat = await chatFrame(page);
    await chat.locator('.msg.agent', { hasText: 'What it does' }).last().waitFor({ timeout: 60_000 });
    await info.screenshot('rpc-selection-explain');
    assert.deepEqual(await userMessages(chat), [{ text: 'Explain: cart_total in pricing.py', chips: 'pricing.py:6-10' }], 'the label and chip, not the instructions');
    // pi's settings in the header are named for people, not by the adapter's ids and raw values.
    assert.deepEqual(await thinkingPicker(chat), { label: 'Thinking level', choices: ['Off', 'Minimal', 'Low', 'Medium', 'High', 'Extra high'] });
    const [explained] = taskRequests(model, 'explain');
    assert.ok(explained, 'no explain request reached the model');
    assert.match(explained, /Answer in English\./);
    assert.match(explained, /selection: [^"]*\(lines 6-10\)\\n```python\\ndef cart_total\(items\):\\n {4}total = 0\\n/, 'the selection reached the model');
    assert.match(explained, /visible code: [^"]*\(lines \d+-\d+\)\\n```python\\n(?:(?!```).)*def receipt_line\(name, total\):/, 'the visible code reached the model');

    // 2. Write Docstring: the proposal accepted in the diff, the file gets the docstring and nothing else.
    await selectLines(page, 6, 5);
    await agentMenu(page, info, 'def cart_total', 'Write Docstring');
    await acceptDiff(page, info, 'rpc-selection-docstring-diff');
    const withDoc = await fileWith(pricing, /"""Compute the total price/);
    assert.equal(withDoc.replace(/\n {4}"""Compute[\s\S]*?\n {4}"""/, ''), originalPricing);

    // 3. Generate Unit Tests from the cursor in the function: all proposed cases, a new test file.
    await selectLines(page, 16, 0);
    await agentMenu(page, info, 'total = 0', 'Generate Unit Tests');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'free item' }).waitFor({ timeout: 90_000 });
    await info.screenshot('rpc-selection-test-cases');
    await page.locator('.quick-input-widget .monaco-button', { hasText: /^OK$/ }).click();
    await acceptDiff(page, info, 'rpc-selection-tests-diff');
    const tests = await fileWith(path.join(ws, 'tests/test_pricing.py'), /def test_/);
    assert.match(tests, /^import pytest\n\nfrom shop\.pricing import cart_total\n/);
    assert.equal(tests.match(/^def test_/gm)?.length, 6, tests);
    const shown = await userMessages(chat);
    await info.screenshot('rpc-selection-chat-labels');
    assert.deepEqual(
      shown.map((m) => m.text),
      ['Explain: cart_total in pricing.py', 'Docstring: cart_total in pricing.py', 'Test cases: cart_total in pricing.py', 'Unit tests: cart_total in pricing.py → tests/test_pricing.py'],
    );

    // 4. VS Code in Chinese (the window reloaded; pi starts again): Explain's label is the Chinese one, and the
    //    model is asked to answer in Chinese (agentHost.answerLanguage "auto" follows the display language).
    userDataIn(userData, 'zh-cn');
    await reloadWindow(page);
    await statusBarItem(page, 'agentHost.status', 60_000);
    await openFile(page, 'shop/pricing.py');
    await selectLines(page, 21, 4);
    await agentMenu(page, info, 'def apply_discount', /^解释$/, 'rpc-selection-zh-menu');
    const zhChat = await chatFrame(page);
    await zhChat.locator('.msg.agent', { hasText: '作用' }).last().waitFor({ timeout: 60_000 });
    await info.screenshot('rpc-selection-explain-zh');
    const zhShown = await userMessages(zhChat);
    assert.deepEqual(zhShown.at(-1), { text: '解释：pricing.py 中的 apply_discount', chips: 'pricing.py:21-24' });
    assert.deepEqual(await thinkingPicker(zhChat), { label: '思考级别', choices: ['关闭', '最低', '低', '中', '高', '超高'] });
    const zhAsked = await until(() => taskRequests(model, 'explain')[1], { what: 'the Chinese explain request', timeoutMs: 10_000 });
    assert.match(zhAsked, /请用简体中文回答/, 'the model was not asked to answer in Chinese');
    assert.match(zhAsked, /selection: [^"]*\(lines 21-24\)\\n```python\\ndef apply_discount\(total, percent\):/, 'the selection reached the model');
    assert.match(zhAsked, /visible code: [^"]*\(lines \d+-\d+\)\\n```python\\n(?:(?!```).)*def receipt_line\(name, total\):/, 'the visible code reached the model');
  }
});
