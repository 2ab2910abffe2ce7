// The chat with a long transcript in a real VS Code (code-server + Chromium via playwright-core): the fixture
// agent out/test/vscode/chatLongAgent.js streams MESSAGES messages and TOOLS tool calls into one session; we
// measure, inside the webview, the streaming wall time, the time to render the whole transcript again when the
// view is reopened, requestAnimationFrame deltas while scrolling to the top (loading every earlier page) and
// back to the bottom, DOM size and JS heap. Appends a section to bench/RESULTS.md (BENCH_NO_WRITE=1: print only).
//   npm run build && node bench/chatScroll.mjs
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench } = require(path.join(root, 'out/test/vscode/runner.js'));
const { openChat } = require(path.join(root, 'out/test/vscode/chatUi.js'));
const { longAgentConfig, feedLong, domFigures, scrollThrough, reopen } = require(path.join(root, 'out/test/vscode/chatLong.js'));

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const TOOLS = Number(process.env.BENCH_TOOLS ?? 500);
const label = process.env.BENCH_LABEL ?? 'current';

fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
const workspace = fs.mkdtempSync(path.join(root, '.scratch', 'chat-bench-'));
const agent = longAgentConfig();
const figures = {};
try {
  await withWorkbench(
    {
      workspace,
      userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name, 'workbench.colorTheme': 'Default Dark Modern' },
      viewport: { width: 1280, height: 860 },
      timeoutMs: 600_000,
    },
    async (page, info) => {
      let frame = await openChat(page);
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      figures.streamMs = await feedLong(frame, MESSAGES, TOOLS);
      await page.waitForTimeout(1000);
      figures.afterStream = await domFigures(frame);
      const again = await reopen(page, `LONG-END ${MESSAGES} messages`);
      frame = again.frame;
      figures.reopenMs = again.ms;
      figures.mountMs = again.mountMs;
      await page.waitForTimeout(1000);
      figures.afterReopen = await domFigures(frame);
      figures.up = await scrollThrough(frame, 'up');
      figures.atTop = await domFigures(frame);
      figures.firstVisible = await frame.evaluate(() => document.querySelector('.entries > .entry')?.textContent?.slice(0, 40) ?? '');
      await info.screenshot('chat-long-top');
      figures.down = await scrollThrough(frame, 'down');
      figures.atBottom = await domFigures(frame);
      await info.screenshot('chat-long-bottom');
    },
  );
} finally {
  fs.rmSync(workspace, { recursive: true, force: true });
}
console.log(JSON.stringify(figures, null, 2));

const f = figures;
const row = (name, s) => `| ${name} | ${s.ms} | ${s.frames} | ${s.p50} | ${s.p95} | ${s.max} | ${s.long} |`;
const section = [
  '',
  `## Chat webview with ${MESSAGES.toLocaleString('en')} messages and ${TOOLS} tool calls (${label})`,
  '',
  `Written by \`node bench/chatScroll.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine(', headless Chromium (no GPU) through code-server')}.`,
  '',
  'The fixture agent `test/vscode/chatLongAgent.ts` streams the session in one turn; everything is measured',
  'inside the webview of a real VS Code (performance.now, requestAnimationFrame, `performance.memory`).',
  '',
  `- streaming the turn into the view (prompt sent → last message shown): **${f.streamMs} ms**`,
  `- reopening the view (click → whole transcript rendered from the snapshot): **${f.reopenMs} ms**, of which building the page: ${f.mountMs} ms`,
  `- entities in the page: ${f.afterReopen.total}; \`.entry\` elements in the DOM: ${f.afterReopen.domEntries} at the bottom, ${f.atTop.domEntries} at the top, ${f.atBottom.domEntries} back at the bottom`,
  `- DOM elements: ${f.afterReopen.domNodes} at the bottom, ${f.atTop.domNodes} at the top, ${f.atBottom.domNodes} back at the bottom`,
  `- JS heap (used, MiB): ${f.afterStream.heapMiB} after streaming, ${f.afterReopen.heapMiB} after reopening, ${f.atTop.heapMiB} at the top, ${f.atBottom.heapMiB} back at the bottom`,
  '',
  'Scrolling 1,500 px per frame, loading pages on the way (frame times in ms):',
  '',
  '| scroll | wall ms | frames | p50 | p95 | max | frames > 50 ms |',
  '|---|---|---|---|---|---|---|',
  row('to the top', f.up),
  row('back to the bottom', f.down),
  '',
].join('\n');
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
console.log(section);
