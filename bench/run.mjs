// Runs the streaming benchmark and rewrites its section of bench/RESULTS.md: one prompt turn streaming N
// `agent_message_chunk` updates from test/fixtures/hostileAgent.js (flood), through
//   raw    — a line split + JSON.parse loop answering by hand (the floor),
//   client — our AcpClient alone,
//   ours   — our AcpClient applying every update to the SessionModel,
//   sdk    — the official @agentclientprotocol/sdk client applying them to the same SessionModel,
//   cli-text / cli-json — the headless CLI end to end (`dist/cli.js … --format text|json`, output to a file),
// alternating one run of each per round so machine drift hits all alike. `npm run bench` (after build).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, openSync, closeSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.env.BENCH_RUNS ?? 7);
const chunks = Number(process.env.BENCH_CHUNKS ?? 100000);
const flood = path.join(root, 'out', 'bench', 'flood.js');
const agent = path.join(root, 'out', 'test', 'fixtures', 'hostileAgent.js');
const cli = path.join(root, 'dist', 'cli.js');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'agent-host-bench-'));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** In-process figures, plus the whole process's wall time (`procMs`: what the CLI's figure compares to). */
const inProcess = (impl, n = chunks) => {
  const t0 = process.hrtime.bigint();
  const r = JSON.parse(execFileSync(process.execPath, [flood, impl, String(n)], { encoding: 'utf8' }).trim());
  return { ...r, procMs: Math.round(Number(process.hrtime.bigint() - t0) / 1e6) };
};

/** The CLI as a user runs it, output to a file; wall time, output bytes, peak RSS (VmHWM, polled). */
function viaCli(format, n = chunks) {
  return new Promise((resolve, reject) => {
    const out = path.join(scratch, `out-${format}.txt`);
    const fd = openSync(out, 'w');
    const t0 = process.hrtime.bigint();
    const child = spawn(
      process.execPath,
      [cli, '--command', process.execPath, '--arg', agent, '--arg', 'flood', '--arg', String(n), '--format', format, '--state-dir', path.join(scratch, 'state'), 'go'],
      {
        cwd: scratch,
        stdio: ['ignore', fd, 'inherit'],
      },
    );
    let peakKiB = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKiB = Math.max(peakKiB, Number(m[1]));
      } catch {
        /* gone */
      }
    }, 20);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearInterval(poll);
      closeSync(fd);
      const ms = Math.round(Number(process.hrtime.bigint() - t0) / 1e6);
      if (code !== 0) return reject(new Error(`cli ${format} exited ${code}`));
      resolve({ impl: `cli-${format}`, chunks: n, ms, rssMiB: Math.round(peakKiB / 1024), bytes: statSync(out).size });
    });
  });
}

const IMPLS = ['raw', 'client', 'ours', 'sdk', 'cli-text', 'cli-json'];
const once = (impl, n) => (impl.startsWith('cli-') ? viaCli(impl.slice(4), n) : Promise.resolve(inProcess(impl, n)));

for (const impl of IMPLS) await once(impl); // warm-up (file cache, JIT)
const results = Object.fromEntries(IMPLS.map((i) => [i, []]));
for (let r = 0; r < runs; r++) for (const impl of IMPLS) results[impl].push(await once(impl));
const chars = new Set(['raw', 'client', 'ours', 'sdk'].map((i) => results[i][0].chars));
if (chars.size !== 1) throw new Error(`implementations disagree on the streamed text: ${[...chars].join(' vs ')}`);
// Memory growth: the CLI with a tenth of the chunks.
const small = { text: await viaCli('text', chunks / 10), json: await viaCli('json', chunks / 10) };
rmSync(scratch, { recursive: true, force: true });

const ms = (impl) => median(results[impl].map((x) => x.ms));
const rss = (impl) => median(results[impl].map((x) => x.rssMiB));
/** Median over rounds of a/b, pair by pair within a round (`procMs` when both have it, for process vs process). */
const ratio = (a, b, key = 'ms') => median(results[a].map((x, k) => (x[key] ?? x.ms) / (results[b][k][key] ?? results[b][k].ms)));
const LABEL = {
  raw: 'line split + `JSON.parse`, answering by hand (the floor)',
  client: 'Atrium `AcpClient` alone',
  ours: 'Atrium `AcpClient` + `SessionModel`',
  sdk: 'official `@agentclientprotocol/sdk` client + `SessionModel`',
  'cli-text': '`agent-host --format text` end to end (output to a file)',
  'cli-json': '`agent-host --format json` end to end (output to a file)',
};
const row = (impl) => {
  const all = results[impl].map((x) => x.ms);
  const bytes = results[impl][0].bytes;
  return `| ${LABEL[impl]} | ${ms(impl)} | ${Math.min(...all)}–${Math.max(...all)} | ${rss(impl)} | ${bytes === undefined ? '' : (bytes / 2 ** 20).toFixed(1)} |`;
};
const heading = `## One prompt turn streaming ${chunks.toLocaleString('en')} \`agent_message_chunk\` updates`;
const section = `${heading}

Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}.

The agent is \`test/fixtures/hostileAgent.js flood\` (chunks of about 12 characters); each client spawns it,
initializes, opens a session, sends the prompt and returns at \`end_turn\`. Wall time of the whole turn (in
the client process; for the CLI, the whole process from spawn to exit) and peak RSS; ${runs} rounds, one run
of each per round, after a warm-up.

| client | median ms | min–max ms | median peak RSS MiB | output MiB |
|---|---|---|---|---|
${IMPLS.map(row).join('\n')}

Ratios, pair by pair within a round (median):
- our client + model vs the SDK client: **${ratio('sdk', 'ours').toFixed(2)}×** as fast; vs the raw loop: **${(1 / ratio('ours', 'raw')).toFixed(2)}×** its speed (client alone: ${(1 / ratio('client', 'raw')).toFixed(2)}×).
- the CLI end to end against the raw loop's whole process (${median(results.raw.map((x) => x.procMs))} ms): text **${ratio('cli-text', 'raw', 'procMs').toFixed(2)}×**, json **${ratio('cli-json', 'raw', 'procMs').toFixed(2)}×** the wall time.
- the CLI's peak RSS with ${chunks.toLocaleString('en')} chunks against ${(chunks / 10).toLocaleString('en')}: text **${(rss('cli-text') / small.text.rssMiB).toFixed(2)}×**, json **${(rss('cli-json') / small.json.rssMiB).toFixed(2)}×**.
`;
// Replace only this benchmark's section; other benchmarks keep theirs.
const file = path.join(root, 'bench', 'RESULTS.md');
const existing = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
const start = existing.indexOf('## One prompt turn streaming');
const next = start < 0 ? -1 : existing.indexOf('\n## ', start + 1);
const text = start < 0 ? `${existing.trimEnd()}\n\n${section}` : `${existing.slice(0, start)}${section}${next < 0 ? '' : existing.slice(next)}`;
writeFileSync(file, text);
process.stdout.write(section);
