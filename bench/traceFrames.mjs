#!/usr/bin/env node
// What fills the long frames of a Chrome trace (bench/chatFlood.mjs with TRACE_DIR): the gaps between animation
// frames (FireAnimationFrame on the renderer's main thread) longer than LONG_MS, and for all of them together the
// main thread's self time by event name, its wall time against its CPU time (a thread waiting for a core shows wall
// time without CPU time), and the other threads' busiest events in the same gaps.
//
//   node bench/traceFrames.mjs .scratch/trace/paragraph-100000.json [LONG_MS=50]
import * as fs from 'node:fs';

const file = process.argv[2];
const LONG_MS = Number(process.argv[3] ?? 50);
if (!file) throw new Error('usage: node bench/traceFrames.mjs <trace.json> [long frame ms]');
const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = Array.isArray(raw) ? raw : raw.traceEvents;

const threadName = new Map();
const procName = new Map();
for (const e of events) {
  if (e.ph === 'M' && e.name === 'thread_name') threadName.set(`${e.pid}:${e.tid}`, e.args.name);
  if (e.ph === 'M' && e.name === 'process_name') procName.set(e.pid, e.args.name);
}
const rafs = events.filter((e) => e.name === 'FireAnimationFrame' && e.ph === 'X');
if (!rafs.length) throw new Error('no FireAnimationFrame in the trace');
const mainKey = `${rafs[0].pid}:${rafs[0].tid}`;
const starts = [...new Set(rafs.filter((e) => `${e.pid}:${e.tid}` === mainKey).map((e) => e.ts))].sort((a, b) => a - b);
const gaps = [];
for (let i = 1; i < starts.length; i++) if ((starts[i] - starts[i - 1]) / 1000 > LONG_MS) gaps.push([starts[i - 1], starts[i]]);
const inGap = (ts) => gaps.some(([a, b]) => ts >= a && ts < b);
const deltas = starts.slice(1).map((t, i) => (t - starts[i]) / 1000);

/** Self time per event name on one thread, X events only, counted where the event starts inside a long gap. */
function selfTimes(key) {
  const xs = events.filter((e) => e.ph === 'X' && `${e.pid}:${e.tid}` === key && e.dur !== undefined).sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const self = new Map();
  const stack = [];
  let wall = 0;
  let cpu = 0;
  for (const e of xs) {
    while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
    const parent = stack.at(-1);
    if (inGap(e.ts)) {
      self.set(e.name, (self.get(e.name) ?? 0) + e.dur);
      if (parent && inGap(parent.ts)) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur);
      if (!parent) {
        wall += e.dur;
        cpu += e.tdur ?? e.dur;
      }
    }
    stack.push(e);
  }
  return { self: [...self].sort((a, b) => b[1] - a[1]), wall, cpu };
}

const total = gaps.reduce((s, [a, b]) => s + (b - a), 0);
const r = (us) => (us / 1000).toFixed(1);
console.log(`${file}: ${starts.length} animation frames on ${threadName.get(mainKey)} (${procName.get(rafs[0].pid) ?? rafs[0].pid}); ${gaps.length} longer than ${LONG_MS} ms, ${r(total)} ms in all`);
const sorted = deltas.slice().sort((a, b) => a - b);
console.log(`frame deltas: p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} p95 ${sorted[Math.floor(sorted.length * 0.95)]?.toFixed(1)} max ${sorted.at(-1)?.toFixed(1)} ms`);
const main = selfTimes(mainKey);
console.log(`main thread in long gaps: top-level tasks ${r(main.wall)} ms wall, ${r(main.cpu)} ms CPU (idle ${r(total - main.wall)} ms)`);
for (const [name, us] of main.self.slice(0, 25)) console.log(`  ${r(us).padStart(8)} ms  ${name}`);
const others = [...threadName.keys()].filter((k) => k !== mainKey && k.split(':')[0] === mainKey.split(':')[0]);
for (const key of others) {
  const t = selfTimes(key);
  if (t.wall / 1000 < 5) continue;
  console.log(
    `${threadName.get(key)}: ${r(t.wall)} ms wall, ${r(t.cpu)} ms CPU in the long gaps; ${t.self
      .slice(0, 6)
      .map(([n, us]) => `${n} ${r(us)}`)
      .join(', ')}`,
  );
}

// The JavaScript of the main thread (the trace's sampling profile, when it has one): self time by function.
// (Its chunks come from the profiler's own thread, tied by id to the Profile event of the thread profiled.)
const profile = events.find((e) => e.name === 'Profile' && `${e.pid}:${e.tid}` === mainKey)?.id;
const nodes = new Map();
const selfJs = new Map();
for (const e of events) {
  if (e.name !== 'ProfileChunk' || e.id !== profile || e.pid !== rafs[0].pid) continue;
  const { cpuProfile, timeDeltas } = e.args.data;
  for (const n of cpuProfile?.nodes ?? []) nodes.set(n.id, n);
  for (const [i, id] of (cpuProfile?.samples ?? []).entries()) {
    const f = nodes.get(id)?.callFrame;
    const key = f ? `${f.functionName || '(anonymous)'} ${(f.url ?? '').split('/').at(-1)}:${(f.lineNumber ?? 0) + 1}` : `node ${id}`;
    selfJs.set(key, (selfJs.get(key) ?? 0) + (timeDeltas[i] ?? 0));
  }
}
if (selfJs.size) {
  console.log('main thread JavaScript, self time by function (whole trace):');
  for (const [key, us] of [...selfJs].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${r(us).padStart(8)} ms  ${key}`);
}
