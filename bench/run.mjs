// Runs the benchmarks and rewrites bench/RESULTS.md: our ACP client vs the official SDK client on the
// same agent stream, alternating A B A B so machine drift hits both alike. `npm run bench` (after build).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.env.BENCH_RUNS ?? 7);
const chunks = Number(process.env.BENCH_CHUNKS ?? 100000);
const flood = path.join(root, 'out', 'bench', 'flood.js');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const once = (impl) => JSON.parse(execFileSync(process.execPath, [flood, impl, String(chunks)], { encoding: 'utf8' }).trim());

once('ours'); // warm-up (file cache, JIT of the agent)
once('sdk');
const results = { ours: [], sdk: [] };
const ratios = [];
for (let i = 0; i < runs; i++) {
  const a = once('ours');
  const b = once('sdk');
  if (a.chars !== b.chars) throw new Error(`implementations disagree: ${a.chars} vs ${b.chars} chars`);
  results.ours.push(a);
  results.sdk.push(b);
  ratios.push(b.ms / a.ms);
}
const row = (impl) => {
  const ms = results[impl].map((r) => r.ms);
  const rss = results[impl].map((r) => r.rssMiB);
  return `| ${impl === 'ours' ? 'Agent Host `AcpClient` (vscode-jsonrpc + our NDJSON reader)' : 'official `@agentclientprotocol/sdk` client'} | ${median(ms)} | ${Math.min(...ms)}–${Math.max(...ms)} | ${median(rss)} |`;
};
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const heading = `## One prompt turn streaming ${chunks.toLocaleString('en')} \`agent_message_chunk\` updates`;
const section = `${heading}

Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}.

The agent is \`test/fixtures/hostileAgent.js flood\`; each client spawns it, initializes, opens a session,
sends the prompt, applies every update to the same \`SessionModel\`, and returns at \`end_turn\`. Whole
turn wall time inside the client process and its peak RSS; ${runs} alternating runs after a warm-up.

| client | median ms | min–max ms | median peak RSS MiB |
|---|---|---|---|
${row('ours')}
${row('sdk')}

Ratio SDK / ours, pair by pair: median **${median(ratios).toFixed(2)}×** (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}).
`;
// Replace only this benchmark's section; other benchmarks (bench/chatScroll.mjs) keep theirs.
const file = path.join(root, 'bench', 'RESULTS.md');
const existing = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
const start = existing.indexOf('## One prompt turn streaming');
const next = start < 0 ? -1 : existing.indexOf('\n## ', start + 1);
const text =
  start < 0
    ? `${existing.trimEnd()}\n\n${section}`
    : `${existing.slice(0, start)}${section}${next < 0 ? '' : existing.slice(next)}`;
writeFileSync(file, text);
process.stdout.write(section);
