#!/usr/bin/env node
// The real chat (code-server + headless Chromium) under a flood: one answer of N `agent_message_chunk` updates of 40
// characters, written as fast as the pipe takes them (test/fixtures/hostileAgent.ts `flood` mode, prompt
// `FLOOD <shape> <n>`, text from test/fixtures/floodText.ts), as one paragraph with no line break or as one ```ts
// fence of N lines, then an end marker paragraph. Per shape, one workbench takes every size in turn, and for each:
// Enter → end marker on screen (timed in the page), the text on screen then checked exact once; requestAnimationFrame
// deltas in the chat's frame meanwhile (p95, max); the peak RSS of the browser's renderer processes (/proc every
// 250 ms); the page's JS heap after the turn (CDP, after a forced GC); the extension host's RSS before and after.
// With PEER_VSCODE_ACP=<built folder of formulahendry/vscode-acp> its chat is driven by the same agent at PEER_CHUNKS
// (5,000) paragraph chunks in a workbench of its own after ours, for the ratio; PEER_COMMIT names the commit built
// (in RESULTS.md). It is installed as its .vsix would be (a copy of its package's files in a fresh extensions folder).
// TURN_TIMEOUT_S / PEER_TIMEOUT_S: how long a turn may take (default 3 ms a chunk, at least 120 s; the peer 1,800 s).
// TRACE_DIR=<folder>: a Chrome trace of the workbench page (its renderer, with the chat) per turn, Enter to marker,
// written as <shape>-<n>.json (open it in chrome://tracing or Perfetto; bench/traceFrames.mjs sums its long frames);
// TRACE_JS=1 adds the JavaScript sampling profile. HOST_PROFILE=1: the extension host's JavaScript per turn, self time
// by function (its inspector, opened by SIGUSR1: bench/hostInspector.mjs). SHOTS=1: a screenshot after each turn (test-artifacts/chat-flood-<shape>-<n>.png).
//
//   npm run build && node bench/chatFlood.mjs
//   SIZES=5000,20000 SHAPES=paragraph BENCH_NO_WRITE=1 node bench/chatFlood.mjs    (a quick look; prints only)
//
// Appends a section to bench/RESULTS.md unless BENCH_NO_WRITE=1.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspectProcess } from './hostInspector.mjs';
import { startTrace as traceStart } from './cdpTrace.mjs';
import { loadLine, machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench, runCommand } = require(path.join(root, 'out/test/vscode/runner.js'));
const { openChat, turnIdle } = require(path.join(root, 'out/test/vscode/chatUi.js'));
const { frameWhere } = require(path.join(root, 'out/test/vscode/waits.js'));
const { processTree, pidsWithArg } = require(path.join(root, 'out/test/vscode/procs.js'));
const { floodMarker, floodShown } = require(path.join(root, 'out/test/fixtures/floodText.js'));

const SIZES = (process.env.SIZES ?? '5000,20000,50000,100000').split(',').map(Number);
const SHAPES = (process.env.SHAPES ?? 'paragraph,fence').split(',');
const PEER = process.env.PEER_VSCODE_ACP ? path.resolve(process.env.PEER_VSCODE_ACP) : undefined;
const PEER_CHUNKS = Number(process.env.PEER_CHUNKS ?? 5000);
const GOAL = { linear: 5.5, p95: 33, max: 100 };
// A turn of ours gets 3 ms a chunk (at least 2 min): 15× the slowest 100,000-chunk paragraph measured before issue 33;
// past it the shape's larger sizes are skipped (the page is still busy). The peer gets PEER_TIMEOUT_S (30 min).
const turnTimeout = (n) => Number(process.env.TURN_TIMEOUT_S ?? Math.max(120, n * 0.003)) * 1000;
const PEER_TIMEOUT_S = Number(process.env.PEER_TIMEOUT_S ?? 1800);
const TRACE_DIR = process.env.TRACE_DIR ? path.resolve(process.env.TRACE_DIR) : undefined;
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'toplevel',
  'v8',
  'v8.execute',
  'blink',
  'cc',
  'ipc',
  'mojom',
  // TRACE_JS=1: with the main thread's JavaScript sampled (its cost shows in the frames too).
  ...(process.env.TRACE_JS === '1' ? ['disabled-by-default-v8.cpu_profiler'] : []),
];
const agent = { name: 'flood', command: process.execPath, args: [path.join(root, 'out/test/fixtures/hostileAgent.js'), 'flood'], env: {}, inheritEnv: true };
const log = (line) => process.stdout.write(`[chatFlood] ${line}\n`);
const mib = (bytes) => Math.round(bytes / 2 ** 20);

// ------------------------------------------------------------------------------------------------ processes

const cmdline = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};
const rssOf = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
};

/** Chromium's renderer processes: below the browser started on the run's profile. */
function renderers(scratch) {
  const browser = pidsWithArg(path.join(scratch, 'browser')).flatMap(processTree);
  return [...new Set(browser)].filter((pid) => cmdline(pid).includes('--type=renderer'));
}

/** The extension host: code-server's processes carry the run's user-data dir, the host is forked as `--type=extensionHost`. */
function extensionHost(scratch) {
  const server = pidsWithArg(path.join(scratch, 'user-data')).flatMap(processTree);
  const hosts = [...new Set(server)].filter((pid) => cmdline(pid).includes('--type=extensionHost'));
  if (hosts.length !== 1) throw new Error(`expected one extension host, found ${hosts.length}: ${hosts.map((p) => `${p} ${cmdline(p).slice(0, 120)}`).join('; ')}`);
  return hosts[0];
}

/** CPU seconds used so far by the run's processes (this one's tree: code-server, the browser, the agent), by kind. */
function cpuByKind() {
  const kinds = {};
  for (const pid of processTree(process.pid)) {
    if (pid === process.pid) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]); // utime + stime
    if (!ticks) continue;
    const cmd = cmdline(pid);
    const kind = /hostileAgent/.test(cmd)
      ? 'agent'
      : /--type=extensionHost/.test(cmd)
        ? 'extension host'
        : /--type=renderer/.test(cmd)
          ? 'renderers'
          : /--type=gpu/.test(cmd)
            ? 'gpu'
            : /--type=/.test(cmd) && /chrom/i.test(cmd)
              ? 'browser helpers'
              : /chrom/i.test(cmd)
                ? 'browser'
                : 'code-server';
    kinds[kind] = (kinds[kind] ?? 0) + ticks / 100;
  }
  return kinds;
}

/** CPU seconds by kind since `before` (cpuByKind), largest first. */
function cpuSince(before) {
  const now = cpuByKind();
  return Object.fromEntries(
    Object.entries(now)
      .map(([k, v]) => [k, Math.round((v - (before[k] ?? 0)) * 100) / 100])
      .filter(([, v]) => v >= 0.05)
      .sort((a, b) => b[1] - a[1]),
  );
}

/** Samples every renderer's RSS every 250 ms: the peak of the largest one and of their sum. */
function sampleRenderers(scratch) {
  const peak = { largest: 0, sum: 0, count: 0 };
  const tick = () => {
    const pids = renderers(scratch);
    const rss = pids.map(rssOf);
    peak.largest = Math.max(peak.largest, ...rss);
    peak.sum = Math.max(
      peak.sum,
      rss.reduce((a, b) => a + b, 0),
    );
    peak.count = Math.max(peak.count, pids.length);
  };
  tick();
  const timer = setInterval(tick, 250);
  return () => {
    clearInterval(timer);
    tick();
    return { largestMiB: mib(peak.largest), sumMiB: mib(peak.sum), renderers: peak.count };
  };
}

// ------------------------------------------------------------------------------------------------ the page

/** A V8 CPU profile's self time by function (name, file and line), the 25 largest, idle left out. */
function selfTimes(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (const [i, id] of profile.samples.entries()) {
    const f = nodes.get(id).callFrame;
    if (f.functionName === '(idle)') continue;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([key, us]) => `  ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`)
    .join('\n');
}

/** With TRACE_DIR: starts a trace of the page's renderer; the returned function stops it and writes it to `file`. */
async function startTrace(page, file) {
  if (!TRACE_DIR) return async () => undefined;
  const cdp = await page.context().newCDPSession(page);
  const stop = await traceStart(cdp, TRACE_CATEGORIES);
  return async () => {
    fs.writeFileSync(path.join(TRACE_DIR, file), await stop());
    await cdp.detach();
    log(`trace: ${path.join(TRACE_DIR, file)}`);
  };
}

/**
 * Arms the chat's frame for one turn: the time of the Enter (keydown, capture), then every animation frame's delta
 * and a look at the newest message (`selector`, one more than now) for `marker` at its end, until it is there.
 */
function arm(frame, selector, marker) {
  return frame.evaluate(
    ([sel, mark]) => {
      const st = { start: 0, done: 0, deltas: [], count: document.querySelectorAll(sel).length };
      window.__flood = st;
      window.addEventListener(
        'keydown',
        (e) => {
          if (e.key === 'Enter' && !e.shiftKey && !st.start) st.start = performance.now();
        },
        { capture: true },
      );
      // The last non-blank text node of the message: found from the end, whatever the message's length.
      const ends = (el) => {
        const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        let node = walk.lastChild();
        // A regex, not trim(): the last text node may be the whole 4 MB paragraph, looked at every frame.
        while (node && !/\S/.test(node.data)) node = walk.previousNode();
        return !!node && node.data.slice(-80).trimEnd().endsWith(mark);
      };
      let last = 0;
      const step = (now) => {
        if (st.start && last >= st.start) st.deltas.push(now - last);
        last = now;
        const all = st.start ? document.querySelectorAll(sel) : [];
        if (all.length > st.count && ends(all[all.length - 1])) st.done = now;
        else requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    },
    [selector, marker],
  );
}

async function armed(frame, timeoutMs) {
  await frame.waitForFunction(() => window.__flood?.done > 0, undefined, { polling: 250, timeout: timeoutMs });
  return frame.evaluate(() => {
    const st = window.__flood;
    const xs = st.deltas.slice().sort((a, b) => a - b);
    const r = (x) => Math.round(x * 10) / 10;
    return { ms: Math.round(st.done - st.start), frames: xs.length, p95: r(xs[Math.min(xs.length - 1, Math.floor(0.95 * xs.length))] ?? 0), max: r(xs.at(-1) ?? 0) };
  });
}

/** The newest message's text as shown: its text nodes in order, without the code blocks' action bars and buttons. */
function shownText(frame, selector) {
  return frame.evaluate((sel) => {
    const el = [...document.querySelectorAll(sel)].at(-1);
    if (!el) return '';
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n.parentElement?.closest('.code-actions, button, style, script, [aria-hidden="true"]') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const parts = [];
    for (let n = walk.nextNode(); n; n = walk.nextNode()) parts.push(n.data);
    return parts.join('');
  }, selector);
}

/** Exact: the text before the end marker (its edges' whitespace aside) is the body the agent sent, to the character. */
function checkText(text, shape, n) {
  const marker = floodMarker(n);
  const at = text.lastIndexOf(marker);
  const body = (at < 0 ? text : text.slice(0, at)).trim();
  const want = floodShown(shape, n);
  if (at >= 0 && body === want) return { ok: true, chars: body.length };
  let i = 0;
  while (i < Math.min(body.length, want.length) && body[i] === want[i]) i++;
  return {
    ok: false,
    chars: body.length,
    want: want.length,
    marker: at >= 0,
    firstDiff: i,
    shown: JSON.stringify(body.slice(Math.max(0, i - 20), i + 40)),
    sent: JSON.stringify(want.slice(Math.max(0, i - 20), i + 40)),
  };
}

/** The page's JS heap after a forced GC (the webview's own isolate if it is an out-of-process frame, else the page's). */
async function heapMiB(page, frame) {
  let cdp;
  let where = 'webview frame (own process)';
  try {
    cdp = await page.context().newCDPSession(frame);
  } catch {
    cdp = await page.context().newCDPSession(page);
    where = 'page (the webview shares its renderer)';
  }
  try {
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    return { heapMiB: mib(metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0), heapOf: where };
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}

/** One turn in a chat frame: arm, type, Enter, wait for the marker; then the figures and the one text check. */
async function turn(page, info, frame, { selector, input, shape, n, afterTurn, timeoutMs }) {
  const host = extensionHost(info.scratch);
  const hostBefore = rssOf(host);
  await arm(frame, selector, floodMarker(n));
  await frame.locator(input).fill(`FLOOD ${shape} ${n}`);
  const stop = sampleRenderers(info.scratch);
  const traced = await startTrace(page, `${shape}-${n}.json`);
  const hostProfile = process.env.HOST_PROFILE === '1' ? await inspectProcess(host) : undefined;
  if (hostProfile) {
    await hostProfile.send('Profiler.enable');
    await hostProfile.send('Profiler.start');
  }
  const cpuBefore = cpuByKind();
  await frame.locator(input).press('Enter');
  const f = await armed(frame, timeoutMs).catch(async (error) => {
    stop();
    await traced().catch(() => undefined);
    throw error.name === 'TimeoutError' ? new Error(`no end marker within ${timeoutMs / 1000} s`) : error;
  });
  const cpu = cpuSince(cpuBefore);
  if (hostProfile) {
    const { profile } = await hostProfile.send('Profiler.stop');
    hostProfile.close();
    log(`extension host, self time by function:\n${selfTimes(profile)}`);
  }
  await traced();
  await afterTurn(timeoutMs);
  const renderer = stop();
  const hostAfter = rssOf(host);
  const text = checkText(await shownText(frame, selector), shape, n);
  const heap = await heapMiB(page, frame);
  const row = { shape, n, ...f, renderer, ...heap, hostBeforeMiB: mib(hostBefore), hostAfterMiB: mib(hostAfter), cpu, text };
  log(JSON.stringify(row));
  if (!text.ok || process.env.SHOTS === '1') log(`screenshot: ${await info.screenshot(`chat-flood-${shape}-${n}${text.ok ? '' : '-mismatch'}`).catch((e) => e.message)}`);
  return row;
}

// ------------------------------------------------------------------------------------------------ the peer

/** formulahendry/vscode-acp: connect its agent `flood` (its quick pick), then one turn in its chat view. */
async function peerTurn(page, info, n) {
  // Its commands are in the palette once its contributions are (its view container shows then).
  await page.locator('.activitybar [aria-label^="ACP Client"]').first().waitFor({ state: 'visible', timeout: 60_000 });
  await runCommand(page, 'ACP: Connect to Agent');
  const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'flood' }).first();
  await pick.waitFor({ timeout: 30_000 });
  await pick.click();
  await runCommand(page, 'ACP: Open Chat Panel');
  const frame = await frameWhere(page, () => !!document.querySelector('#sessionBanner.visible') && !!document.getElementById('promptInput'), 'the ACP Client chat, connected', 60_000);
  const oopif = await page
    .context()
    .newCDPSession(frame)
    .then((s) => s.detach().then(() => true))
    .catch(() => false);
  log(`peer chat frame: ${oopif ? 'its own process' : 'in the page renderer'}`);
  // Its turn ends when the host's markdown rendering of the whole answer has replaced the streamed text.
  const afterTurn = (timeoutMs) =>
    frame.waitForFunction(() => [...document.querySelectorAll('.message.assistant')].at(-1)?.classList.contains('md-rendered'), undefined, { polling: 250, timeout: timeoutMs });
  return turn(page, info, frame, { selector: '.message.assistant', input: '#promptInput', shape: 'paragraph', n, afterTurn, timeoutMs: PEER_TIMEOUT_S * 1000 });
}

/**
 * The peer installed as its .vsix would install it (package.json, the webpack bundle, resources: its .vscodeignore),
 * into a fresh extensions folder that code-server registers at start; ours stays the development extension (a second
 * development path in code-server's URL replaces the first).
 */
function installPeer(beside) {
  const dir = `${beside}-extensions`;
  const { publisher, name, version } = JSON.parse(fs.readFileSync(path.join(PEER, 'package.json'), 'utf8'));
  const dest = path.join(dir, `${publisher}.${name}-${version}`);
  for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/extension.js', 'resources']) fs.cpSync(path.join(PEER, f), path.join(dest, f), { recursive: true });
  return dir;
}

// ------------------------------------------------------------------------------------------------ the run

const loadBefore = os.loadavg();
fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
if (TRACE_DIR) fs.mkdirSync(TRACE_DIR, { recursive: true });
const rows = [];
let peer;
let rendererNote = '';
/** Our chat, one shape: every size in turn in one chat. */
async function ours(page, info, shape) {
  const frame = await openChat(page);
  await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
  const own = await page
    .context()
    .newCDPSession(frame)
    .then((s) => s.detach().then(() => true))
    .catch(() => false);
  rendererNote = own ? 'the chat webview runs in a renderer process of its own' : 'the chat webview runs in the workbench page’s renderer process (same site, no process of its own)';
  log(`${rendererNote}; renderers now: ${renderers(info.scratch).length}`);
  for (const n of SIZES) {
    try {
      rows.push(await turn(page, info, frame, { selector: '.msg.agent', input: '.composer textarea', shape, n, afterTurn: (ms) => turnIdle(frame, ms), timeoutMs: turnTimeout(n) }));
    } catch (error) {
      // A turn past its time leaves the page busy: the larger sizes of this shape would only wait too.
      log(`${shape} ${n}: ${error.message.split('\n')[0]}`);
      rows.push({ shape, n, failed: error.message.split('\n')[0] });
      for (const m of SIZES.filter((m) => m > n)) rows.push({ shape, n: m, failed: `skipped (${n.toLocaleString('en')} did not finish)` });
      return;
    }
  }
}

// One workbench per shape, then one for the peer: a peer turn past its time leaves its page too busy for anything else.
for (const shape of [...SHAPES, ...(PEER ? ['peer'] : [])]) {
  const workspace = fs.mkdtempSync(path.join(root, '.scratch', 'chat-flood-bench-'));
  const extensionsDir = shape === 'peer' ? installPeer(workspace) : undefined;
  try {
    await withWorkbench(
      {
        workspace,
        extensionsDir,
        userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name, 'acp.agents': { flood: { command: agent.command, args: agent.args, env: {} } } },
        viewport: { width: 1280, height: 860 },
        timeoutMs: (shape === 'peer' ? PEER_TIMEOUT_S + 300 : 60 * 60) * 1000,
      },
      async (page, info) => {
        if (shape !== 'peer') return ours(page, info, shape);
        peer = await peerTurn(page, info, PEER_CHUNKS).catch((error) => ({ failed: error.message.split('\n')[0] }));
      },
    );
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    if (extensionsDir) fs.rmSync(extensionsDir, { recursive: true, force: true });
  }
}
const loadAfter = os.loadavg();

// ------------------------------------------------------------------------------------------------ the report

const at = (shape, n) => rows.find((r) => r.shape === shape && r.n === n && !r.failed);
const yes = (ok) => (ok ? '✓' : '✗');
const sec = (ms) => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
const linearity = (shape) => {
  const [a, b] = [at(shape, 20000), at(shape, 100000)];
  return a && b ? b.ms / a.ms : undefined;
};
console.log(JSON.stringify({ rows, peer, linearity: Object.fromEntries(SHAPES.map((s) => [s, linearity(s)])), loadBefore, loadAfter }, null, 2));
const line = (r) =>
  r.failed
    ? `| ${r.shape} | ${r.n.toLocaleString('en')} | ${r.failed} | | | | | |`
    : `| ${r.shape} | ${r.n.toLocaleString('en')} (${Math.round((r.n * 40) / 1000).toLocaleString('en')} KB) | ${sec(r.ms)} | ${r.p95} / ${r.max} ${yes(r.p95 <= GOAL.p95)}${yes(r.max <= GOAL.max)} | ${r.renderer.largestMiB} (${r.renderer.renderers}: ${r.renderer.sumMiB}) | ${r.heapMiB} | ${r.hostBeforeMiB} → ${r.hostAfterMiB} | ${r.text.ok ? 'exact' : `**differs** at ${r.text.firstDiff}`} |`;
const ours5k = at('paragraph', PEER_CHUNKS);
const peerLine = peer?.failed
  ? `The peer, formulahendry/vscode-acp (${peerVersion()}), ${PEER_CHUNKS.toLocaleString('en')} paragraph chunks: ${peer.failed}.`
  : peer
    ? `The peer, formulahendry/vscode-acp (${peerVersion()}), in a workbench of its own after ours, same agent, ${PEER_CHUNKS.toLocaleString('en')} paragraph chunks: **${sec(peer.ms)} s** to full text (text ${peer.text.ok ? 'exact' : 'differs'}), frame p95 / max ${peer.p95} / ${peer.max} ms, renderer peak ${peer.renderer.largestMiB} MiB, extension host ${peer.hostBeforeMiB} → ${peer.hostAfterMiB} MiB${ours5k ? `; ours **${sec(ours5k.ms)} s**: the peer takes **${Math.round(peer.ms / ours5k.ms).toLocaleString('en')}×** ours` : ''}.`
    : 'The peer (formulahendry/vscode-acp) was not run: set PEER_VSCODE_ACP to its built folder.';
function peerVersion() {
  try {
    const p = JSON.parse(fs.readFileSync(path.join(PEER, 'package.json'), 'utf8'));
    return `${p.name} ${p.version}${process.env.PEER_COMMIT ? `, commit ${process.env.PEER_COMMIT}` : ''}`;
  } catch {
    return 'version unknown';
  }
}
const section = [
  '',
  `## Chat flood: ${SIZES.map((n) => n.toLocaleString('en')).join(', ')} chunks of 40 characters as one paragraph and as one code fence`,
  '',
  `Written by \`node bench/chatFlood.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine(', headless Chromium (no GPU) through code-server')}; ${loadLine(loadBefore, loadAfter)}.`,
  '',
  'test/fixtures/hostileAgent.ts (`flood` mode, prompt `FLOOD <shape> <n>`) writes N `agent_message_chunk` updates of',
  '40 characters as fast as the pipe takes them: one paragraph with no line break, or a ```ts fence of N lines; then',
  'an end marker paragraph. One workbench per shape takes the sizes in turn in one chat. Time: Enter → the marker in the',
  'DOM at an animation frame, timed in the page; the text shown is then checked exact against what was sent. Frames:',
  'requestAnimationFrame deltas in the chat frame from Enter to the marker. Renderer: the peak RSS of the largest',
  `Chromium renderer process sampled every 250 ms (${rendererNote}), in brackets the number of renderers and the peak of`,
  'their sum; heap: the page’s JS heap after the turn and a forced GC (CDP). Extension host: RSS before the turn → after it.',
  '',
  `Goals: 100,000 chunks within ${GOAL.linear}× the 20,000 time; frame p95 ≤ ${GOAL.p95} ms and max ≤ ${GOAL.max} ms at every size.`,
  ...SHAPES.map((s) => {
    const l = linearity(s);
    return `- ${s}: 100,000 / 20,000 = ${l === undefined ? 'not measured' : `**${l.toFixed(2)}×** ${yes(l <= GOAL.linear)}`}; frames ${yes(rows.filter((r) => r.shape === s).every((r) => !r.failed && r.p95 <= GOAL.p95 && r.max <= GOAL.max))}.`;
  }),
  '',
  '| shape | chunks | time to full text, s | frame p95 / max, ms | renderer peak, MiB | JS heap, MiB | extension host, MiB | text |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(line),
  '',
  peerLine,
  '',
].join('\n');
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
console.log(section);
