#!/usr/bin/env node
// One whole codex-acp turn, spawn to exit, on the scripted model, by three clients in the same run:
//   ours — the headless CLI (`dist/cli.js --command codex-acp … --format json`),
//   acpx — the peer ACP client (`acpx --agent … exec`, as test/agents/acpx.test.ts runs it),
//   raw  — a minimal hand-written ACP client (this file with --raw: initialize, session/new, session/prompt,
//          then stdin closed and SIGTERM at once, waiting for the exit) — the floor.
// Each run is a fresh client process with a fresh codex home; one warm-up round, then BENCH_RUNS rounds (default 7),
// the order rotated each round so machine drift hits all alike. Rewrites its section of bench/RESULTS.md
// (BENCH_WRITE=0 to only print). `node bench/codexTurn.mjs` after `npm run build` and scripts/setup-agents.sh.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const PROMPT = 'SCENARIO: answer {"text":"hi"}';

if (process.argv[2] === '--raw') await rawClient(JSON.parse(process.argv[3]));
else await bench();

/** The floor: the least a client must do for one turn. Prints `{stopReason, text}` after codex-acp has exited. */
async function rawClient({ command, args, env, cwd, prompt }) {
  const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const pending = new Map();
  let nextId = 1;
  let text = '';
  const send = (msg) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      send({ id, method, params });
    });
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line);
      if (msg.method && msg.id !== undefined) {
        // Nothing is offered: a permission is cancelled, anything else unknown.
        if (msg.method === 'session/request_permission') send({ id: msg.id, result: { outcome: { outcome: 'cancelled' } } });
        else send({ id: msg.id, error: { code: -32601, message: 'not offered' } });
      } else if (msg.method === 'session/update') {
        const u = msg.params.update;
        if (u.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text') text += u.content.text;
      } else if (msg.id !== undefined && pending.has(msg.id)) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(JSON.stringify(msg.error)));
        else p.resolve(msg.result);
      }
    }
  });
  await call('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
  const { sessionId } = await call('session/new', { cwd, mcpServers: [] });
  const { stopReason } = await call('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
  // codex-acp ignores its stdin closing: SIGTERM to its group at once, as our stop does for it.
  child.stdin.end();
  process.kill(-child.pid, 'SIGTERM');
  await exited;
  process.stdout.write(`${JSON.stringify({ stopReason, text })}\n`);
}

async function bench() {
  const require = createRequire(import.meta.url);
  const { agentById, ACPX } = require(path.join(root, 'out/test/agents/catalog.js'));
  const { startScriptedModel } = require(path.join(root, 'out/src/scriptedModel/scriptedModel.js'));
  const cli = path.join(root, 'dist', 'cli.js');
  const codex = agentById('codex');
  if (!codex.installed() || !ACPX.installed()) throw new Error('codex-acp or acpx is not installed: run scripts/setup-agents.sh');
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run npm run build');
  const runs = Number(process.env.BENCH_RUNS ?? 7);
  const model = await startScriptedModel();
  mkdirSync(path.join(root, '.scratch'), { recursive: true });
  const scratch = mkdtempSync(path.join(root, '.scratch', 'codex-turn-'));
  let n = 0;

  /** A fresh codex home and workspace, then the client's process timed from spawn to exit. */
  async function once(contender) {
    const dir = path.join(scratch, `${contender}-${n++}`);
    const workspace = path.join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    const spec = await codex.prepare({ scratch: dir, modelUrl: model.url, workspace });
    let command;
    let args;
    let env = process.env;
    if (contender === 'ours') {
      command = process.execPath;
      args = [cli, '--command', spec.command, ...spec.args.flatMap((a) => ['--arg', a]), ...Object.entries(spec.env).flatMap(([k, v]) => ['--env', `${k}=${v}`])];
      args.push('--cwd', workspace, '--state-dir', path.join(dir, 'state'), '--format', 'json', PROMPT);
    } else if (contender === 'acpx') {
      const quote = (a) => (/^[A-Za-z0-9_/.,:=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
      command = ACPX.node();
      args = [ACPX.entry(), '--agent', [spec.command, ...spec.args].map(quote).join(' '), '--cwd', workspace, '--deny-all', '--format', 'json', '--timeout', '120', 'exec', PROMPT];
      env = spec.env;
    } else {
      command = process.execPath;
      args = [self, '--raw', JSON.stringify({ ...spec, cwd: workspace, prompt: PROMPT })];
    }
    const asked = model.requests.length;
    const t0 = process.hrtime.bigint();
    const child = spawn(command, args, { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const code = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // Every contender must really have had the turn: exit 0, the model asked, and `end_turn` in what it printed.
    if (code !== 0 || model.requests.length === asked || !stdout.includes('"end_turn"')) throw new Error(`${contender} failed (exit ${code}):\n${stderr.slice(-2000)}\n${stdout.slice(-2000)}`);
    if (outlived(path.join(dir, 'codex'))) leftRunning[contender]++;
    rmSync(dir, { recursive: true, force: true });
    return ms;
  }

  /** Whether a codex-acp of this run (its CODEX_HOME) still runs after its client exited. */
  function outlived(codexHome) {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CODEX_HOME=${codexHome}`)) return true;
      } catch {
        /* gone, or not ours to read */
      }
    }
    return false;
  }

  const CONTENDERS = ['ours', 'acpx', 'raw'];
  const leftRunning = Object.fromEntries(CONTENDERS.map((c) => [c, 0]));
  const results = Object.fromEntries(CONTENDERS.map((c) => [c, []]));
  try {
    for (const c of CONTENDERS) await once(c); // warm-up (file cache, codex's first start)
    for (let r = 0; r < runs; r++) {
      const order = CONTENDERS.map((_, k) => CONTENDERS[(k + r) % CONTENDERS.length]);
      for (const c of order) results[c].push(await once(c));
      console.log(`round ${r + 1}: ${CONTENDERS.map((c) => `${c} ${Math.round(results[c].at(-1))} ms`).join(', ')}`);
    }
  } finally {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  }

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ms = (c) => Math.round(median(results[c]));
  /** Median over rounds of a/b, pair by pair within a round. */
  const ratio = (a, b) => median(results[a].map((x, k) => x / results[b][k]));
  const LABEL = {
    ours: '`agent-host --format json` (the CLI)',
    acpx: `acpx ${ACPX.version} \`exec\``,
    raw: 'hand-written ACP client, SIGTERM at `end_turn` (the floor)',
  };
  const heading = '## One codex-acp turn through the CLI, spawn to exit';
  const section = `${heading}

Written by \`node bench/codexTurn.mjs\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}.

codex-acp ${codex.versions['@zed-industries/codex-acp'] ?? ''} from \`.tools\` on the scripted model, the prompt \`${PROMPT}\`; each run a fresh
client process and a fresh codex home, timed from spawn to the client's exit. codex-acp
ignores its stdin closing: a client that waits for that exit before a signal pays for it. ${runs} rounds after
a warm-up, one run of each per round, the order rotated.

| client | median ms | min–max ms | codex-acp still running after the client's exit |
|---|---|---|---|
${CONTENDERS.map((c) => `| ${LABEL[c]} | ${ms(c)} | ${Math.round(Math.min(...results[c]))}–${Math.round(Math.max(...results[c]))} | ${leftRunning[c]} of ${runs + 1} runs |`).join('\n')}

Ratios, pair by pair within a round (median): ours / acpx **${ratio('ours', 'acpx').toFixed(2)}×** (goal ≤ 0.5×), ours / raw **${ratio('ours', 'raw').toFixed(2)}×**.
`;
  process.stdout.write(`\n${section}`);
  if (process.env.BENCH_WRITE === '0') return;
  // Replace only this benchmark's section; other benchmarks keep theirs.
  const file = path.join(root, 'bench', 'RESULTS.md');
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  const start = existing.indexOf(heading);
  const next = start < 0 ? -1 : existing.indexOf('\n## ', start + 1);
  writeFileSync(file, start < 0 ? `${existing.trimEnd()}\n\n${section}` : `${existing.slice(0, start)}${section}${next < 0 ? '' : existing.slice(next)}`);
}
