#!/usr/bin/env node
// Memory over a long session in the real chat (code-server + headless Chromium): TURNS turns (default 1,000)
// of a few KB of markdown each, spread round-robin over four chat tabs, with pi in RPC mode on the scripted
// model (its turn is the fastest of the agents tested: about 18 ms against opencode's 440). A prompt is sent in
// one tab while the others' turns may still run. Every SAMPLE turns (default 100), once every tab is idle, it samples
// the extension host's RSS, then its heap used after a collection (its inspector, bench/hostInspector.mjs: data, not
// the room V8 keeps), the page's JS heap after a collection (CDP) and the renderers' RSS. The goal: after
// the first 100 turns neither the extension host's RSS nor the page's heap grows more than 50 MB. Prints JSON and a
// markdown table; appends a section to bench/RESULTS.md (BENCH_NO_WRITE=1: print only). To find what the host keeps:
// SOAK_SNAPSHOTS=<folder> (a heap snapshot per sample; bench/heapDiff.mjs compares two) and SOAK_ALLOCATIONS=<file>
// (its allocations from the second sample on, garbage included; bench/allocSummary.mjs sums them by our code).
//   npm run build && TURNS=1000 node bench/chatSoak.mjs
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspectProcess } from './hostInspector.mjs';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench, runCommand } = require(path.join(root, 'out/test/vscode/runner.js'));
const { openChat, send, turnIdle } = require(path.join(root, 'out/test/vscode/chatUi.js'));
const { processTree, pidsWithArg } = require(path.join(root, 'out/test/vscode/procs.js'));
const { PI_RPC } = require(path.join(root, 'out/test/rpc/agents.js'));
const { startScriptedModel } = require(path.join(root, 'out/src/scriptedModel/scriptedModel.js'));

const TURNS = Number(process.env.TURNS ?? 1000);
const SAMPLE = Number(process.env.SAMPLE ?? 100);
const SNAPSHOTS = process.env.SOAK_SNAPSHOTS; // a folder: the extension host's heap snapshot at every sample goes there
const ALLOCATIONS = process.env.SOAK_ALLOCATIONS; // a file: the extension host's allocations (sampled, garbage included) from the second sample on
const TABS = ['t1', 't2', 't3', 't4'];
const MiB = 2 ** 20;
const sign = (x) => `${x >= 0 ? '+' : ''}${x}`;
const mib = (bytes) => Math.round((bytes / MiB) * 10) / 10;

/** Turn `n`'s answer: about 3 KB of markdown (a heading, paragraphs, a list, a code fence), ending with its marker. */
function answer(n) {
  const para = (i) => `Paragraph ${i} of turn ${n}: the parser keeps **one token** of lookahead and \`peek()\` never allocates; ${'the lexer reads ahead by lines, '.repeat(8)}done.`;
  const code = Array.from({ length: 24 }, (_, i) => `  const v${i} = tokens[${i}]?.value ?? ${n + i}; // line ${i}`).join('\n');
  return [`## Turn ${n}`, '', para(1), '', '- first point', '- second point', '- third point', '', '```ts', `function turn${n}() {`, code, '}', '```', '', para(2), '', `SOAK-${n}-END`].join('\n');
}

const rssMiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : 0;
};
const cmdline = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};
/** The run's processes: everything under code-server and Chromium (their command lines name the run's scratch folder). */
const runProcs = (scratch) => [...new Set(pidsWithArg(scratch).flatMap((p) => processTree(p)))].filter((p) => cmdline(p));

const loadBefore = os.loadavg()[0];
fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
const scratch = fs.mkdtempSync(path.join(root, '.scratch', 'chat-soak-bench-'));
const workspace = path.join(scratch, 'workspace');
fs.mkdirSync(workspace);
const model = await startScriptedModel();
const cfg = PI_RPC.prepare({ scratch: path.join(scratch, 'pi'), modelUrl: model.url, workspace, args: ['--no-session'] });
const agent = { name: 'pi', command: cfg.command, args: cfg.args, env: cfg.env, protocol: 'rpc', inheritEnv: false };
const samples = [];
const figures = { turns: TURNS, tabs: TABS.length, agent: 'pi 0.73.1 (RPC mode)', samples };
try {
  await withWorkbench(
    {
      workspace,
      userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name },
      viewport: { width: 1280, height: 860 },
      timeoutMs: Number(process.env.SOAK_TIMEOUT_MS ?? 6 * 3600_000),
    },
    async (page, info) => {
      const frame = await openChat(page);
      await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
      for (const id of TABS.slice(1)) {
        await runCommand(page, 'Atrium: New Chat Tab');
        await frame.locator(`[data-testid="tab-${id}"]`).waitFor({ timeout: 15_000 });
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
      }
      const procs = runProcs(info.scratch);
      const host = procs.find((p) => /--type=extensionHost|extensionHostProcess|bootstrap-fork.*extensionHost/.test(cmdline(p)));
      if (!host) throw new Error(`no extension host among the run's processes:\n${procs.map((p) => `${p} ${cmdline(p).slice(0, 160)}`).join('\n')}`);
      const inspector = await inspectProcess(host);
      if (SNAPSHOTS) fs.mkdirSync(SNAPSHOTS, { recursive: true });
      let cdp = await page
        .context()
        .newCDPSession(frame)
        .catch(() => undefined);
      figures.heapOf = cdp ? 'the webview frame, a renderer of its own' : 'the workbench renderer, which holds the webview';
      cdp ??= await page.context().newCDPSession(page);
      /** The last turn sent in each tab (its marker shows once that tab is shown and the turn has ended). */
      const last = new Map();
      const show = async (id) => {
        const t = frame.locator(`[data-testid="tab-${id}"]`);
        // The tab's own click handler: a tab titled "pi" is narrower than the × its hover shows over it.
        if ((await t.getAttribute('aria-selected')) !== 'true') await t.dispatchEvent('click');
        await frame.waitForFunction((x) => document.querySelector(`[data-testid="tab-${x}"]`)?.getAttribute('aria-selected') === 'true', id, { timeout: 30_000 });
        const n = last.get(id);
        if (n !== undefined)
          await frame
            .locator('.msg.agent', { hasText: `SOAK-${n}-END` })
            .first()
            .waitFor({ timeout: 120_000 });
        await turnIdle(frame, 120_000);
      };
      const sample = async (turns) => {
        for (const id of TABS) await show(id);
        await page.waitForTimeout(500);
        await cdp.send('HeapProfiler.collectGarbage');
        const heap = await cdp.send('Runtime.getHeapUsage');
        const renderers = runProcs(info.scratch).filter((p) => cmdline(p).includes('--type=renderer'));
        const hostRss = rssMiB(host); // before the host's forced collection, which may give pages back
        const hostMem = await inspector.memoryAfterGc();
        if (SNAPSHOTS) await inspector.snapshot(path.join(SNAPSHOTS, `host-${turns}.heapsnapshot`));
        const s = {
          turns,
          seconds: Math.round((Date.now() - t0) / 100) / 10,
          hostRssMiB: hostRss,
          hostHeapMiB: mib(hostMem.heapUsed),
          hostHeapTotalMiB: mib(hostMem.heapTotal),
          hostExternalMiB: mib(hostMem.external),
          hostRssAfterGcMiB: mib(hostMem.rss),
          pageHeapMiB: Math.round((heap.usedSize / MiB) * 10) / 10,
          rendererRssMiB: Math.max(...renderers.map(rssMiB)),
          domEntries: await frame.evaluate(() => document.querySelectorAll('.entries > .entry').length),
        };
        samples.push(s);
        if (ALLOCATIONS && samples.length === 2) await inspector.startAllocations();
        console.log(`[soak] ${JSON.stringify(s)}`);
      };
      const t0 = Date.now();
      await sample(0);
      for (let n = 1; n <= TURNS; n++) {
        const id = TABS[(n - 1) % TABS.length];
        await show(id);
        await send(frame, `Turn ${n}.\nSCENARIO: answer ${JSON.stringify({ text: answer(n) })}`);
        last.set(id, n);
        if (n % SAMPLE === 0 || n === TURNS) await sample(n);
      }
      if (ALLOCATIONS) fs.writeFileSync(ALLOCATIONS, JSON.stringify(await inspector.stopAllocations()));
      inspector.close();
      await info.screenshot('chat-soak-end');
    },
  );
} finally {
  await model.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}
const at100 = samples.find((s) => s.turns >= Math.min(100, TURNS)) ?? samples[0];
const end = samples.at(-1);
figures.hostGrowthMiB = Math.round((end.hostRssMiB - at100.hostRssMiB) * 10) / 10;
figures.hostHeapGrowthMiB = Math.round((end.hostHeapMiB - at100.hostHeapMiB) * 10) / 10;
figures.pageHeapGrowthMiB = Math.round((end.pageHeapMiB - at100.pageHeapMiB) * 10) / 10;
figures.msPerTurn = Math.round((end.seconds * 1000) / TURNS);
figures.goalMet = figures.hostGrowthMiB <= 50 && figures.pageHeapGrowthMiB <= 50;
console.log(JSON.stringify(figures, null, 2));
const section = [
  '',
  `## Soak: ${TURNS.toLocaleString('en')} turns over four chat tabs (pi RPC, scripted model)`,
  '',
  `Written by \`node bench/chatSoak.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine(', headless Chromium (no GPU) through code-server')}; 1-minute load average ${loadBefore.toFixed(2)} before the run, ${os.loadavg()[0].toFixed(2)} after.`,
  '',
  'Each turn is a prompt typed into the chat and about 3 KB of markdown streamed back by pi 0.73.1 in RPC mode on the scripted',
  'model (the fastest turn of the agents tried: median 18 ms, against pi-acp 37 ms, claude-agent-acp 38 ms, codex-acp 257 ms and',
  'opencode 439 ms, outside VS Code), round-robin over four tabs. Every sample waits for every tab to be idle, then reads the',
  `extension host's RSS, then its heap used after a forced collection (its inspector: the data it holds, not the room V8 keeps),`,
  `the page's JS heap after a collection (CDP; ${figures.heapOf}) and the largest renderer's RSS.`,
  `${Math.round(end.seconds)} s in all, ${figures.msPerTurn} ms per turn.`,
  '',
  '| turns | seconds | extension host RSS MiB | extension host heap used after GC MiB | page JS heap MiB | renderer RSS MiB | entries in the DOM |',
  '|---|---|---|---|---|---|---|',
  ...samples.map((s) => `| ${s.turns} | ${s.seconds} | ${s.hostRssMiB} | ${s.hostHeapMiB} | ${s.pageHeapMiB} | ${s.rendererRssMiB} | ${s.domEntries} |`),
  '',
  `From turn ${at100.turns} to turn ${end.turns}: extension host RSS ${sign(figures.hostGrowthMiB)} MiB (heap used ${sign(figures.hostHeapGrowthMiB)} MiB), page heap ${sign(figures.pageHeapGrowthMiB)} MiB (goal: at most +50 MB each: ${figures.goalMet ? 'met' : 'not met'}).`,
  '',
].join('\n');
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
console.log(section);
