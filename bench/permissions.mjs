// Permission requests at scale, end to end: the built CLI (`--approve-all`) against an agent that asks
// N permissions in one turn (test/fixtures/intruderAgent.js). Wall time and peak RSS of the CLI process,
// for N and N/10, to show how cost grows with the number of requests. `node bench/permissions.mjs`
// after `npm run build`; appends/replaces its section of bench/RESULTS.md.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');
const agent = path.join(root, 'out', 'test', 'fixtures', 'intruderAgent.js');
const N = Number(process.env.BENCH_PERMISSIONS ?? 20000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Peak RSS of a running process from /proc (VmHWM), polled until it exits. */
function run(n) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-host-bench-perm-'));
  const plan = [
    { permission: { toolCall: { toolCallId: 'c', title: 'Read a file', kind: 'read', rawInput: { path: 'a.txt' } }, options: [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' }] }, repeat: n },
  ];
  const config = path.join(dir, 'agents.json');
  writeFileSync(config, JSON.stringify([{ name: 'asker', command: process.execPath, args: [agent], env: { INTRUDER_PLAN: JSON.stringify(plan) } }]));
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [cli, '--config', config, '--cwd', dir, '--approve-all', '--format', 'text', 'go'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let hwm = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) hwm = Math.max(hwm, Number(m[1]));
      } catch {}
    }, 20);
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      clearInterval(poll);
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) return reject(new Error(`cli exited ${code}: ${err}`));
      resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, rssMiB: Math.round(hwm / 1024) });
    });
  });
}

const results = {};
for (const n of [N / 10, N]) {
  await run(n); // warm-up
  const r = [];
  for (let i = 0; i < runs; i++) r.push(await run(n));
  results[n] = { ms: Math.round(median(r.map((x) => x.ms))), rssMiB: median(r.map((x) => x.rssMiB)) };
  console.log(`${n} permission requests: median ${results[n].ms} ms, peak RSS ${results[n].rssMiB} MiB`);
}
const small = results[N / 10];
const big = results[N];
const ratio = big.ms / small.ms;
console.log(`time ratio ${N}/${N / 10}: ${ratio.toFixed(2)}× (linear would be 10×)`);

const heading = '## Permission requests in one turn';
const section = `${heading}

Written by \`node bench/permissions.mjs\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}.

The CLI (\`--approve-all\`) against \`test/fixtures/intruderAgent.js\` asking N permissions in one turn; wall
time of the whole CLI process (spawn, initialize, turn, exit) and its peak RSS (VmHWM), median of ${runs} runs.

| requests | median ms | ms per request | peak RSS MiB |
|---|---|---|---|
| ${(N / 10).toLocaleString('en')} | ${small.ms} | ${(small.ms / (N / 10)).toFixed(3)} | ${small.rssMiB} |
| ${N.toLocaleString('en')} | ${big.ms} | ${(big.ms / N).toFixed(3)} | ${big.rssMiB} |

${N.toLocaleString('en')} requests take **${ratio.toFixed(2)}×** the time of ${(N / 10).toLocaleString('en')} (10× would be linear; before
the fix each request scanned every stored entity: 5,000 / 10,000 / 20,000 requests took 5.6 / 22.7 / 91.8 s).
`;
const file = path.join(root, 'bench', 'RESULTS.md');
const existing = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
const start = existing.indexOf(heading);
const next = start < 0 ? -1 : existing.indexOf('\n## ', start + 1);
writeFileSync(file, start < 0 ? `${existing.trimEnd()}\n\n${section}` : `${existing.slice(0, start)}${section}${next < 0 ? '' : existing.slice(next)}`);
