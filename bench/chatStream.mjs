#!/usr/bin/env node
// Frame times of the real chat webview (code-server + headless Chromium) while an agent streams one
// markdown answer at RATE chunks/s for SECONDS (test/vscode/chatLongAgent.ts `STREAM`), then while scrolling
// the 2,000-message transcript: requestAnimationFrame deltas inside the page (p50, p95, max, frames over
// 50 ms). Appends a section to bench/RESULTS.md (BENCH_NO_WRITE=1: print only).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench } = require(path.join(root, 'out/test/vscode/runner.js'));
const { openChat, send, waitText, turnIdle } = require(path.join(root, 'out/test/vscode/chatUi.js'));
const { longAgentConfig, feedLong, scrollThrough } = require(path.join(root, 'out/test/vscode/chatLong.js'));

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 20);

/** Starts recording rAF deltas in the page; returns how to stop and get the figures. */
async function recordFrames(frame) {
  await frame.evaluate(() => {
    const w = window;
    w.__frames = [];
    w.__recording = true;
    let last = performance.now();
    const step = (now) => {
      w.__frames.push(now - last);
      last = now;
      if (w.__recording) requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
  return () =>
    frame.evaluate(() => {
      const w = window;
      w.__recording = false;
      const xs = w.__frames.slice(1).sort((a, b) => a - b);
      const q = (p) => Math.round((xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0) * 10) / 10;
      return { frames: xs.length, p50: q(0.5), p95: q(0.95), max: Math.round((xs.at(-1) ?? 0) * 10) / 10, long: xs.filter((x) => x > 50).length };
    });
}

// Headless Chromium rasterizes in software on the same cores: other work on the machine shows up as long
// frames, so the run states the load it met.
const loadBefore = os.loadavg()[0];
fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
const workspace = fs.mkdtempSync(path.join(root, '.scratch', 'chat-stream-bench-'));
const agent = longAgentConfig();
const figures = {};
try {
  await withWorkbench(
    { workspace, userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name }, viewport: { width: 1280, height: 860 }, timeoutMs: 600_000 },
    async (page, info) => {
      const frame = await openChat(page);
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      const stop = await recordFrames(frame);
      const t0 = Date.now();
      await send(frame, `STREAM ${RATE} ${SECONDS}`);
      await waitText(frame, '.msg.agent', `STREAM-END ${RATE * SECONDS} chunks.`, (SECONDS + 120) * 1000);
      figures.streamMs = Date.now() - t0;
      figures.stream = await stop();
      figures.streamChars = await frame.evaluate(() => [...document.querySelectorAll('.msg.agent')].at(-2)?.textContent?.length ?? 0);
      await info.screenshot('chat-stream-end');
      await turnIdle(frame);
      await feedLong(frame, 2000, 500);
      await page.waitForTimeout(1000);
      // BENCH_LOAF=1: what the long frames while scrolling held (Long Animation Frame entries over 40 ms).
      // BENCH_LOAF=1: what the long frames while scrolling held (Long Animation Frame entries), in the webview
      // and in the workbench around it (one renderer process in code-server).
      const loafTargets = process.env.BENCH_LOAF === '1' ? { webview: frame, workbench: page.mainFrame() } : {};
      for (const target of Object.values(loafTargets)) {
        await target.evaluate(() => {
          window.__loaf = [];
          window.__loafSupported = PerformanceObserver.supportedEntryTypes.includes('long-animation-frame');
          new PerformanceObserver((list) => {
            for (const e of list.getEntries()) {
              const r = (x) => Math.round(x);
              window.__loaf.push({
                at: r(performance.timeOrigin + e.startTime),
                duration: r(e.duration),
                work: r(e.renderStart ? e.renderStart - e.startTime : e.duration),
                render: r(e.renderStart ? e.startTime + e.duration - e.renderStart : 0),
                layout: r(e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0),
                scripts: e.scripts.map((x) => `${x.invoker} ${r(x.duration)}ms ${x.sourceFunctionName}`),
              });
            }
          }).observe({ type: 'long-animation-frame' });
        });
      }
      figures.up = await scrollThrough(frame, 'up');
      figures.down = await scrollThrough(frame, 'down');
      for (const [name, target] of Object.entries(loafTargets)) figures[`loaf-${name}`] = await target.evaluate(() => ({ supported: window.__loafSupported, frames: window.__loaf }));
    },
  );
} finally {
  fs.rmSync(workspace, { recursive: true, force: true });
}
console.log(JSON.stringify(figures, null, 2));
const f = figures;
const row = (name, s) => `| ${name} | ${s.frames} | ${s.p50} | ${s.p95} | ${s.max} | ${s.long} |`;
const section = [
  '',
  `## Chat frames while streaming ${RATE} chunks/s for ${SECONDS} s, and scrolling 2,000 messages`,
  '',
  `Written by \`node bench/chatStream.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine(', headless Chromium (no GPU) through code-server')}; 1-minute load average ${loadBefore.toFixed(2)} before the run, ${os.loadavg()[0].toFixed(2)} after.`,
  '',
  `The fixture agent \`test/vscode/chatLongAgent.ts\` streams one markdown answer (${RATE * SECONDS} chunks of a word,`,
  'a paragraph break every 40, a code block every 400) at the rate; the page records requestAnimationFrame',
  `deltas while it streams (${Math.round(f.streamMs / 100) / 10} s from Enter to the last chunk shown, ${f.streamChars} characters),`,
  'then while scrolling the 2,000-message, 500-tool-call transcript to the top and back. The display runs at',
  '60 Hz: a frame on time is 16.7 ms, so a p95 of 16.7 ms means at least 95% of frames made the vsync.',
  '',
  '| while | frames | p50 ms | p95 ms | max ms | frames > 50 ms |',
  '|---|---|---|---|---|---|',
  row('streaming', f.stream),
  row('scrolling up', f.up),
  row('scrolling down', f.down),
  '',
].join('\n');
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
console.log(section);
