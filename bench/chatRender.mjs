#!/usr/bin/env node
// The chat's markdown renderer alone (webview-ui/src/streamed.ts with the chat's stylesheet, in headless Chromium,
// no VS Code): the flood of bench/chatFlood.mjs (test/fixtures/floodText.ts, one paragraph or one ```ts fence of N
// chunks of 40 characters) fed PER characters an animation frame into a 300 px wide chat column kept scrolled to
// the end, as the chat renders a flood. Per size: requestAnimationFrame deltas (p95, max), the frame's own work
// (render and the layout that scrolling forces: p95, max), and the renderer main thread's CPU per frame over the
// run (a Chrome trace: p95, max). What the page costs without the workbench, the extension host and the agent
// around it on the same two cores (chatFlood.mjs measures it all together).
//
//   npm run build && node bench/chatRender.mjs          (SIZES=5000,20000,50000,100000 SHAPES=paragraph,fence PER=26000)
//
// Prints JSON and a markdown table; appends a section to bench/RESULTS.md unless BENCH_NO_WRITE=1.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTrace } from './cdpTrace.mjs';
import { loadLine, machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withMarkdownPage } = require(path.join(root, 'out/test/vscode/markdownPage.js'));
const { floodChunk, floodFrame } = require(path.join(root, 'out/test/fixtures/floodText.js'));

const SIZES = (process.env.SIZES ?? '5000,20000,50000,100000').split(',').map(Number);
const SHAPES = (process.env.SHAPES ?? 'paragraph,fence').split(',');
// 26,000 characters a frame: what a flood brings the page (about 1.6 MB/s at 60 frames a second).
const PER = Number(process.env.PER ?? 26000);
const css = fs.readFileSync(path.join(root, 'dist/webview/chat-style.css'), 'utf8');
const q = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;
const r1 = (x) => Math.round(x * 10) / 10;

/** The renderer main thread's CPU between successive frames (ProxyMain::BeginMainFrame), from a trace. */
function cpuPerFrame(events) {
  const raf = events.find((e) => e.name === 'FireAnimationFrame' && e.ph === 'X');
  if (!raf) return [];
  const main = (e) => e.pid === raf.pid && e.tid === raf.tid;
  const starts = events.filter((e) => e.name === 'ProxyMain::BeginMainFrame' && main(e)).map((e) => e.ts);
  starts.sort((a, b) => a - b);
  const tasks = events.filter((e) => e.ph === 'X' && main(e) && e.name === 'ThreadControllerImpl::RunTask').sort((a, b) => a.ts - b.ts);
  const per = [];
  let j = 0;
  for (let i = 1; i < starts.length; i++) {
    let cpu = 0;
    for (; j < tasks.length && tasks[j].ts < starts[i]; j++) if (tasks[j].ts >= starts[i - 1]) cpu += (tasks[j].tdur ?? tasks[j].dur) / 1000;
    per.push(cpu);
  }
  return per;
}

async function run(shape, n) {
  const { head, tail } = floodFrame(shape, n);
  let doc = head;
  for (let i = 0; i < n; i++) doc += floodChunk(shape, i);
  doc += tail;
  const html = `<style>${css}</style><div id="sc" style="width: 300px; height: 600px; overflow: auto"><div class="entry msg agent"><div class="md long" id="body"></div></div></div>`;
  return withMarkdownPage(html, async (page) => {
    const cdp = await page.context().newCDPSession(page);
    const traced = await startTrace(cdp, ['devtools.timeline', 'toplevel', 'cc']);
    const f = await page.evaluate(
      ([doc, per]) =>
        new Promise((resolve) => {
          const md = window.MD;
          const body = document.getElementById('body');
          const sc = document.getElementById('sc');
          let at = 0;
          let last = 0;
          const deltas = [];
          const work = [];
          const t0 = performance.now();
          const step = (now) => {
            if (last) deltas.push(now - last);
            last = now;
            if (at >= doc.length) return resolve({ ms: now - t0, deltas, work, chars: body.textContent.length });
            at = Math.min(doc.length, at + per);
            const t = performance.now();
            md.renderStreamed(body, doc.slice(0, at), { complete: at === doc.length, appended: true });
            sc.scrollTop = sc.scrollHeight;
            work.push(performance.now() - t);
            requestAnimationFrame(step);
          };
          requestAnimationFrame(step);
        }),
      [doc, PER],
    );
    const raw = JSON.parse(await traced());
    const cpu = cpuPerFrame(Array.isArray(raw) ? raw : raw.traceEvents);
    const row = {
      shape,
      n,
      ms: Math.round(f.ms),
      frames: f.deltas.length,
      p95: r1(q(f.deltas, 0.95)),
      max: r1(Math.max(...f.deltas)),
      workP95: r1(q(f.work, 0.95)),
      workMax: r1(Math.max(...f.work)),
      cpuP95: r1(q(cpu, 0.95)),
      cpuMax: r1(Math.max(0, ...cpu)),
      shown: f.chars >= doc.length - 64,
    };
    process.stdout.write(`[chatRender] ${JSON.stringify(row)}\n`);
    return row;
  });
}

const loadBefore = os.loadavg();
const rows = [];
for (const shape of SHAPES) for (const n of SIZES) rows.push(await run(shape, n));
const loadAfter = os.loadavg();
console.log(JSON.stringify({ rows, loadBefore, loadAfter }, null, 2));
const section = [
  '',
  `## The chat's renderer alone: ${SIZES.map((n) => n.toLocaleString('en')).join(', ')} flood chunks fed ${PER.toLocaleString('en')} characters a frame`,
  '',
  `Written by \`node bench/chatRender.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine(', headless Chromium (no GPU), no VS Code')}; ${loadLine(loadBefore, loadAfter)}.`,
  '',
  "The flood's text (bench/chatFlood.mjs) fed to the chat's markdown renderer with the chat's stylesheet in a 300 px",
  'column kept at its end, one slice an animation frame: what the page costs without the workbench, the extension host',
  "and the agent around it. Frames: requestAnimationFrame deltas; work: the frame's rendering and the layout scrolling",
  "forces; CPU: the renderer main thread's per frame (a Chrome trace, which itself slows the page a little).",
  '',
  '| shape | chunks | time, s | frame p95 / max, ms | work p95 / max, ms | main thread CPU p95 / max, ms |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.shape} | ${r.n.toLocaleString('en')} | ${(r.ms / 1000).toFixed(2)} | ${r.p95} / ${r.max} | ${r.workP95} / ${r.workMax} | ${r.cpuP95} / ${r.cpuMax} |`),
  '',
].join('\n');
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
console.log(section);
