// Streaming over each transport, and its section of bench/RESULTS.md: one prompt turn of N `agent_message_chunk`
// updates from test/fixtures/hostileAgent.js (flood) through our AcpClient + SessionModel (out/bench/remoteFlood.js),
// over stdio (the agent spawned by the client), over WebSocket and Streamable HTTP through `agent-host serve`
// (dist/cli.js, a process of its own: what users run), and through the ACP SDK's reference server run in this
// process on loopback (test/support/acpReferenceServer.ts). One run of each per round, alternating, after a warm-up.
// `npm run --silent build && node bench/remoteStream.mjs`; BENCH_ONLY=stdio,gw-ws prints those runs' times only,
// BENCH_GATEWAY_PROF=DIR writes a CPU profile of the gateway there.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { ReferenceServer } = require(path.join(root, 'out', 'test', 'support', 'acpReferenceServer.js'));
const runs = Number(process.env.BENCH_RUNS ?? 7);
const chunks = Number(process.env.BENCH_CHUNKS ?? 100000);
const client = path.join(root, 'out', 'bench', 'remoteFlood.js');
const agentJs = path.join(root, 'out', 'test', 'fixtures', 'hostileAgent.js');
const token = `bench-${process.pid}`;
const load = os.loadavg()[0].toFixed(1);

const server = await ReferenceServer.start({ token, agent: { command: process.execPath, args: [agentJs, 'flood', String(chunks)], cwd: root } });
const { WebSocketServer } = require('ws');
// The transport alone: each line of the agent's stdout one text frame, each frame a line of its stdin (no SDK).
const bare = new WebSocketServer({ host: '127.0.0.1', port: 0 });
bare.on('connection', (socket) => {
  const agent = spawn(process.execPath, [agentJs, 'flood', String(chunks)], { stdio: ['pipe', 'pipe', 'inherit'] });
  createInterface({ input: agent.stdout }).on('line', (line) => socket.send(line));
  socket.on('message', (data) => agent.stdin.write(`${data}\n`));
  socket.on('close', () => agent.kill());
});
await new Promise((resolve) => bare.once('listening', resolve));
// What users run: `agent-host serve` (dist/cli.js) in a process of its own, the same agent behind it.
const gateway = spawn(
  process.execPath,
  [
    ...(process.env.BENCH_GATEWAY_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_GATEWAY_PROF}`] : []),
    path.join(root, 'dist', 'cli.js'),
    'serve',
    '--listen',
    '127.0.0.1:0',
    '--',
    process.execPath,
    agentJs,
    'flood',
    String(chunks),
  ],
  {
    cwd: root,
    env: { ...process.env, ACP_REMOTE_TOKEN: token },
    stdio: ['ignore', 'pipe', 'ignore'],
  },
);
const gatewayUrl = await new Promise((resolve, reject) => {
  createInterface({ input: gateway.stdout }).once('line', resolve);
  gateway.once('exit', (code) => reject(new Error(`agent-host serve exited ${code}`)));
});
const TARGETS = {
  stdio: 'stdio',
  'gw-ws': gatewayUrl.replace(/^http/, 'ws'),
  'gw-http': gatewayUrl,
  ws: server.url('ws'),
  http: server.url('http'),
  'ws-bare': `ws://127.0.0.1:${bare.address().port}/acp`,
};
const only = process.env.BENCH_ONLY?.split(',');
if (only) for (const name of Object.keys(TARGETS)) if (!only.includes(name)) delete TARGETS[name];

/** One client run in its own process (the server keeps this one's event loop). */
const once = (name) =>
  new Promise((resolve, reject) => {
    let out = '';
    const child = spawn(process.execPath, [client, TARGETS[name], String(chunks)], { env: { ...process.env, BENCH_TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(`${name} exited ${code}`))));
  });

const NAMES = Object.keys(TARGETS);
for (const name of NAMES) await once(name); // warm-up
const results = Object.fromEntries(NAMES.map((n) => [n, []]));
for (let r = 0; r < runs; r++) for (const name of NAMES) results[name].push(await once(name));
await server.close();
await new Promise((resolve) => bare.close(resolve));
gateway.kill('SIGTERM');
await new Promise((resolve) => gateway.once('exit', resolve));
if (only) {
  process.stdout.write(`${JSON.stringify(Object.fromEntries(NAMES.map((n) => [n, results[n].map((x) => x.ms)])))}\n`);
  process.exit(0);
}
const chars = new Set(NAMES.map((n) => results[n][0].chars));
if (chars.size !== 1) throw new Error(`transports disagree on the streamed text: ${[...chars].join(' vs ')}`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = (a, b) => median(results[a].map((x, k) => x.ms / results[b][k].ms));
const ratioCpu = (a, b) => median(results[a].map((x) => x.cpuMs)) / median(results[b].map((x) => x.cpuMs));
const LABEL = {
  stdio: 'stdio (the client spawns the agent)',
  'gw-ws': 'WebSocket (`ws://`, `agent-host serve`)',
  'gw-http': 'Streamable HTTP (`http://`, `agent-host serve`)',
  ws: 'WebSocket (`ws://`, SDK reference server)',
  http: 'Streamable HTTP (`http://`, SDK reference server)',
  'ws-bare': 'WebSocket, no SDK server (each agent line one frame)',
};
const row = (n) => {
  const all = results[n].map((x) => x.ms);
  return `| ${LABEL[n]} | ${median(all)} | ${Math.min(...all)}–${Math.max(...all)} | ${median(results[n].map((x) => x.cpuMs))} | ${median(results[n].map((x) => x.rssMiB))} |`;
};
// Said with every run: where the time goes (from profiles of the client and of the gateway; see the report of issue 27).
const NOTE = `
Our client's CPU over WebSocket through \`agent-host serve\` was ${ratioCpu('gw-ws', 'stdio').toFixed(2)}× its CPU over stdio. The gateway
bridges a WebSocket straight to its agent, each line of the agent's one text frame as it comes; before, it
used the SDK's reference server for WebSocket too, which measured 2.9–4.1× stdio here (3 rounds; the table's SDK rows are the
same server): a profile of the gateway showed its time in the SDK's per-message web streams and promises
(with the async hooks that tell its connections apart), a socket write per message, and parsing and
re-encoding each message, while the client sat idle waiting for frames. Streamable HTTP still goes through
the SDK's server, in the gateway as in the SDK rows.`;
const heading = `## Remote transports: one turn streaming ${chunks.toLocaleString('en')} \`agent_message_chunk\` updates over stdio, WebSocket and Streamable HTTP`;
const section = `${heading}

Written by \`node bench/remoteStream.mjs\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}; load average ${load} when it started.

Our \`AcpClient\` applying every update to the \`SessionModel\` (\`bench/remoteFlood.ts\`), in a process of its own;
the agent is \`test/fixtures/hostileAgent.js flood\` (chunks of about 12 characters). Over stdio the client
spawns it; over WebSocket and Streamable HTTP it runs behind \`agent-host serve\` (\`node dist/cli.js serve\`, a
process of its own, the token in \`ACP_REMOTE_TOKEN\`), and behind the ACP SDK's reference server (\`AcpServer\`,
its Node handlers, a Bearer check) on loopback in the benchmark's process; a fresh agent per connection. Wall time
from the client's start to \`end_turn\` (connect, \`initialize\`, \`session/new\`, the turn) and the client's
peak RSS; ${runs} rounds, one run of each per round, after a warm-up.

| transport | median ms | min–max ms | client CPU ms (median) | client peak RSS MiB |
|---|---|---|---|---|
${NAMES.map(row).join('\n')}

Ratios against stdio, pair by pair within a round (median), of the wall time: through \`agent-host serve\`, WebSocket **${ratio('gw-ws', 'stdio').toFixed(2)}×** and Streamable HTTP **${ratio('gw-http', 'stdio').toFixed(2)}×**; through the SDK's reference server, WebSocket ${ratio('ws', 'stdio').toFixed(2)}× and Streamable HTTP ${ratio('http', 'stdio').toFixed(2)}×; WebSocket with no server but each agent line one frame ${ratio('ws-bare', 'stdio').toFixed(2)}×.
${NOTE}
`;
const file = path.join(root, 'bench', 'RESULTS.md');
const existing = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
const start = existing.indexOf('## Remote transports:');
const next = start < 0 ? -1 : existing.indexOf('\n## ', start + 1);
writeFileSync(file, start < 0 ? `${existing.trimEnd()}\n\n${section}` : `${existing.slice(0, start)}${section}${next < 0 ? '' : existing.slice(next)}`);
process.stdout.write(section);
