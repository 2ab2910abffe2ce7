#!/usr/bin/env node
// Warm start, measured where users feel it: in a real VS Code (code-server + Chromium) with opencode (our
// slowest agent to start) on the scripted model, from Enter in the chat's composer to the moment
// `session/prompt` reaches the agent's stdin (bench/stdinStamp.mjs wraps the agent). Warm: agentHost.warmStart
// on (the agent starts and opens its session when the chat shows; we wait for "ready"). Cold: off (the
// agent starts with the first prompt). RUNS alternating runs of each (default 3); medians appended to
// bench/RESULTS.md.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench } = require(path.join(root, 'out/test/vscode/runner.js'));
const { openChat, turnIdle, waitText } = require(path.join(root, 'out/test/vscode/chatUi.js'));
const { agentById } = require(path.join(root, 'out/test/agents/catalog.js'));
const { startScriptedModel } = require(path.join(root, 'out/src/scriptedModel/scriptedModel.js'));

const RUNS = Number(process.env.RUNS ?? 3);
const model = await startScriptedModel();
fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
const scratch = fs.mkdtempSync(path.join(root, '.scratch', 'warm-bench-'));

async function once(warm, i) {
  const workspace = path.join(scratch, `ws-${warm ? 'warm' : 'cold'}-${i}`);
  fs.cpSync(path.join(root, 'test/fixtures/sample-workspace'), workspace, { recursive: true });
  const spec = await agentById('opencode').prepare({ scratch: path.join(scratch, `oc-${warm}-${i}`), modelUrl: model.url, workspace });
  const stamps = path.join(scratch, `stamps-${warm}-${i}.txt`);
  const agent = { name: 'opencode', command: process.execPath, args: [path.join(root, 'bench/stdinStamp.mjs'), stamps, spec.command, ...spec.args], env: spec.env, inheritEnv: false };
  let enterAt = 0;
  await withWorkbench({ workspace, userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': 'opencode', 'agentHost.warmStart': warm }, timeoutMs: 300_000 }, async (page) => {
    const frame = await openChat(page);
    if (warm) await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
    else await page.waitForTimeout(3000); // the chat has settled; nothing started
    const input = frame.locator('.composer textarea');
    await input.fill(`SCENARIO: answer ${JSON.stringify({ text: `run ${i} answered` })}`);
    // The clock starts in the page, on the Enter keydown itself.
    await frame.evaluate(() => {
      window.__enterAt = 0;
      document.addEventListener(
        'keydown',
        (e) => {
          if (e.key === 'Enter' && !window.__enterAt) window.__enterAt = Date.now();
        },
        { capture: true },
      );
    });
    await input.press('Enter');
    await waitText(frame, '.msg.agent', `run ${i} answered`, 120_000);
    await turnIdle(frame);
    enterAt = await frame.evaluate(() => window.__enterAt);
  });
  const line = fs
    .readFileSync(stamps, 'utf8')
    .split('\n')
    .find((l) => l.endsWith(' session/prompt'));
  if (!line || !enterAt) throw new Error(`no session/prompt stamp (run ${i}, warm ${warm})`);
  return Number(line.split(' ')[0]) - enterAt;
}

const results = { warm: [], cold: [] };
try {
  for (let i = 0; i < RUNS; i++) {
    results.warm.push(await once(true, i));
    results.cold.push(await once(false, i));
    console.log(`run ${i}: warm ${results.warm.at(-1)} ms, cold ${results.cold.at(-1)} ms`);
  }
} finally {
  await model.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const section = [
  '',
  '## Warm start: Enter → `session/prompt` at the agent (opencode, real VS Code)',
  '',
  `Written by \`node bench/warmStart.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine(', headless Chromium through code-server')}.`,
  '',
  "From the Enter keydown in the chat composer (the page's clock) to the line reaching opencode's stdin",
  '(`bench/stdinStamp.mjs` wraps the agent), opencode 1.18.33 on the scripted model. Warm: `agentHost.warmStart`',
  'on, the agent started and its session opened when the chat showed. Cold: off, the agent starts with the prompt.',
  `${RUNS} alternating runs each.`,
  '',
  '| start | median ms | all runs ms |',
  '|---|---|---|',
  `| warm | ${median(results.warm)} | ${results.warm.join(', ')} |`,
  `| cold | ${median(results.cold)} | ${results.cold.join(', ')} |`,
  '',
  `Cold / warm: **${(median(results.cold) / Math.max(1, median(results.warm))).toFixed(0)}×**.`,
  '',
].join('\n');
fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
console.log(section);
