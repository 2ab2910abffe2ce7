#!/usr/bin/env node
// Enter → the first streamed character of the answer, in VS Code's own Chat view through `@atrium` (docs/chat-view.md)
// against the same prompt in Atrium's sidebar chat, in one real VS Code (code-server + headless Chromium) with one
// agent on the scripted model. Each side has its own conversation, started before the rounds (its agent up, its
// session open); then ROUNDS alternating rounds (the side going first alternates too), each a follow-up answered with
// `SCENARIO: answer` whose text starts with a marker of the round. Timed inside the page that has the input: the
// Enter keydown (capture) to the first DOM mutation that shows the marker (a MutationObserver), both performance.now
// of the same frame — the workbench page for the Chat view, the chat webview for the sidebar.
//
//   npm run build && node bench/chatViewLatency.mjs            (AGENT=opencode|pi, ROUNDS=10)
//
// Appends a section to bench/RESULTS.md unless BENCH_NO_WRITE=1.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLine, machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench, runCommand } = require(path.join(root, 'out/test/vscode/runner.js'));
const { openChat, turnIdle } = require(path.join(root, 'out/test/vscode/chatUi.js'));
const { statusBarItem } = require(path.join(root, 'out/test/vscode/workbenchActions.js'));
const { startScriptedModel } = require(path.join(root, 'out/src/scriptedModel/scriptedModel.js'));
const { agentById } = require(path.join(root, 'out/test/agents/catalog.js'));
const { PI_RPC } = require(path.join(root, 'out/test/rpc/agents.js'));

const AGENT = process.env.AGENT ?? 'opencode';
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const log = (line) => process.stdout.write(`[chatViewLatency] ${line}\n`);
const answer = (marker) => `SCENARIO: answer {"text":"${marker} is the answer of this round, streamed in chunks."}`;

/**
 * Arms `frame` (a page or a frame): Enter's time, then the first mutation under `scope` after which an answer
 * (`answers`, not the request's own echo) has `marker`.
 */
function arm(frame, scope, answers, marker) {
  return frame.evaluate(
    ([sel, ans, mark]) => {
      const st = { start: 0, first: 0 };
      window.__latency = st;
      window.addEventListener(
        'keydown',
        (e) => {
          if (e.key === 'Enter' && !e.shiftKey && !st.start) st.start = performance.now();
        },
        { capture: true, once: false },
      );
      const root = document.querySelector(sel) ?? document.body;
      const seen = () => [...root.querySelectorAll(ans)].some((el) => el.textContent?.includes(mark));
      const obs = new MutationObserver(() => {
        if (!st.first && st.start && seen()) {
          st.first = performance.now();
          obs.disconnect();
        }
      });
      obs.observe(root, { subtree: true, childList: true, characterData: true });
    },
    [scope, answers, marker],
  );
}

async function measured(frame) {
  await frame.waitForFunction(() => window.__latency?.first > 0, undefined, { polling: 50, timeout: 120_000 });
  return frame.evaluate(() => Math.round((window.__latency.first - window.__latency.start) * 10) / 10);
}

async function chatViewRound(page, marker, first) {
  await arm(page, '.part.auxiliarybar', '.interactive-response', marker);
  const input = page.locator('.part.auxiliarybar .interactive-input-part .monaco-editor').first();
  await input.click();
  await page.keyboard.type(`${first ? '@atrium ' : ''}${answer(marker)}`);
  await page.keyboard.press('Enter');
  const ms = await measured(page);
  // The response's end: its "Continue in Atrium's Chat" button.
  await page.locator('.part.auxiliarybar .interactive-response', { hasText: marker }).last().locator('.monaco-button', { hasText: "Continue in Atrium's Chat" }).waitFor({ timeout: 60_000 });
  return ms;
}

async function sidebarRound(frame, marker) {
  await arm(frame, '.transcript', '.entry.msg.agent', marker);
  await frame.locator('.composer textarea').fill(answer(marker));
  await frame.locator('.composer textarea').press('Enter');
  const ms = await measured(frame);
  await turnIdle(frame, 60_000);
  return ms;
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s.at(-1) };
};

const loadBefore = os.loadavg();
const model = await startScriptedModel();
fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
const scratch = fs.mkdtempSync(path.join(root, '.scratch', 'chat-view-bench-'));
const workspace = path.join(scratch, 'workspace');
fs.mkdirSync(workspace);
let agent;
if (AGENT === 'pi') {
  const pi = PI_RPC.prepare({ scratch: path.join(scratch, 'pi'), modelUrl: model.url, workspace, args: ['--session-dir', path.join(scratch, 'pi', 'sessions')] });
  agent = { name: 'pi', command: pi.command, args: pi.args, env: pi.env, protocol: 'rpc', inheritEnv: false };
} else {
  const spec = await agentById(AGENT).prepare({ scratch: path.join(scratch, AGENT), modelUrl: model.url, workspace });
  agent = { name: AGENT, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
}
const rounds = { chatView: [], sidebar: [] };
try {
  await withWorkbench(
    {
      workspace,
      userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name, 'chat.disableAIFeatures': false },
      viewport: { width: 1400, height: 900 },
      timeoutMs: 20 * 60 * 1000,
    },
    async (page) => {
      await statusBarItem(page, 'agentHost.status', 60_000);
      const frame = await openChat(page);
      await runCommand(page, 'Chat: Open Chat');
      await page
        .locator('.part.auxiliarybar .interactive-input-part', { hasText: `${agent.name} via` })
        .first()
        .waitFor({ timeout: 60_000 });
      // Both conversations started (agent up, session open) before any round is timed.
      log(`warm-up: Chat view ${await chatViewRound(page, 'WARM-VIEW', true)} ms, sidebar ${await sidebarRound(frame, 'WARM-SIDE')} ms`);
      for (let i = 1; i <= ROUNDS; i++) {
        const order = i % 2 ? ['chatView', 'sidebar'] : ['sidebar', 'chatView'];
        for (const side of order) {
          const ms = side === 'chatView' ? await chatViewRound(page, `ROUND-${i}-VIEW`, false) : await sidebarRound(frame, `ROUND-${i}-SIDE`);
          rounds[side].push(ms);
          log(`round ${i} ${side}: ${ms} ms`);
        }
      }
    },
  );
} finally {
  await model.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}

const v = stats(rounds.chatView);
const s = stats(rounds.sidebar);
const section = `
## Enter → first streamed character: \`@atrium\` in VS Code's Chat view against Atrium's sidebar chat

Written by \`node bench/chatViewLatency.mjs\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}, headless Chromium (no GPU) through code-server 4.139.1; ${loadLine(loadBefore, os.loadavg())}.

${agent.name === 'pi' ? 'pi in RPC mode' : agent.name} on the scripted model, one workbench; each side's conversation started before the rounds, then ${ROUNDS}
alternating rounds of the same follow-up (\`SCENARIO: answer\`, its text led by a marker of the round). Timed in the
page that has the input: the Enter keydown to the first DOM mutation showing the marker.

| where | median ms | min–max ms |
|---|---|---|
| VS Code's Chat view, \`@atrium\` | ${v.median} | ${v.min}–${v.max} |
| Atrium's sidebar chat | ${s.median} | ${s.min}–${s.max} |

Chat view / sidebar (medians): **${(v.median / s.median).toFixed(2)}×**.
`;
log(section);
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench', 'RESULTS.md'), section);
