#!/usr/bin/env node
// The cost of the agents' sandbox (docs/sandbox.md), end to end through the real CLI (dist/cli.js), sandboxed
// (`--sandbox workspace-write`) against unsandboxed (`--sandbox off`) in the same run, for real agents on the
// scripted model: codex-acp, claude-agent-acp and pi-acp (those installed; AGENTS=codex,claude narrows it).
//   start — spawning the CLI until its first `{"type":"session"}` line on stdout (the session is ready);
//   turn  — spawning the CLI until it exits, for one prompt whose model asks for one shell command
//           (`echo hi > inside.txt`, checked written in the workspace) with --approve-all.
// Each run is a fresh CLI process with a fresh agent home and workspace; one warm-up pair per agent, then
// BENCH_RUNS rounds (default 5), sandboxed and unsandboxed alternating, which goes first swapped each round.
// At the session event the CLI's process tree is read from /proc in both modes (same cost): the launcher's VmRSS
// and the other processes the sandbox adds (socat, bwrap, the shell between them). After the rounds, the parts of
// the start alone: `node dist/sandbox.mjs --check` (the CLI runs it before a sandboxed start) and the launcher with
// the policy of a codex run around /bin/true, spawn to exit. The section states the CPU seconds other work on the
// machine used meanwhile (see otherWork()).
// `node bench/sandbox.mjs` after `npm run build` and scripts/setup-agents.sh (not part of `npm test`);
// rewrites its section of bench/RESULTS.md (BENCH_NO_WRITE=1: print only).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLine, machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { agentById } = require(path.join(root, 'out/test/agents/catalog.js'));
const { startScriptedModel } = require(path.join(root, 'out/src/scriptedModel/scriptedModel.js'));
const cli = path.join(root, 'dist', 'cli.js');
const launcher = path.join(root, 'dist', 'sandbox.mjs');
if (!existsSync(cli) || !existsSync(launcher)) throw new Error('dist/cli.js or dist/sandbox.mjs is missing: run npm run build');

const runs = Number(process.env.BENCH_RUNS ?? 5);
const PROMPT = 'Run it.\nSCENARIO: shell {"command": "echo hi > inside.txt"}';
const MODES = ['workspace-write', 'off'];
const wanted = (process.env.AGENTS ?? 'codex,claude,pi-acp').split(',').filter(Boolean);
const agents = wanted.map((id) => agentById(id)).filter((a) => a?.installed());
if (agents.length === 0) throw new Error(`none of ${wanted.join(', ')} is installed: run scripts/setup-agents.sh`);
const skipped = wanted.filter((id) => !agents.some((a) => a.id === id));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const now = () => performance.now();

/** Every process under `pid` (itself first): pid, argv, VmRSS in KiB, parent. */
function processTree(pid) {
  const children = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(p));
    } catch {
      /* gone */
    }
  }
  const out = [];
  const visit = (p, parent) => {
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').slice(0, -1);
      const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
      out.push({ pid: p, parent, argv, rss });
    } catch {
      return;
    }
    for (const c of children.get(p) ?? []) visit(c, p);
  };
  visit(pid, 0);
  return out;
}

/** What the sandbox adds to the CLI's tree: the launcher, and what is neither the CLI, the launcher nor the agent's own. */
function sandboxProcesses(tree, spec) {
  const launcherProc = tree.find((p) => p.argv[1] === launcher);
  // The agent: its command with its first argument (codex-acp's binary; node with claude's or pi-acp's entry).
  const agent = tree.find((p) => p !== tree[0] && path.basename(p.argv[0] ?? '') === path.basename(spec.command) && (spec.args.length === 0 || p.argv[1] === spec.args[0]));
  const agentSide = new Set(agent ? [agent.pid] : []);
  for (const p of tree) if (agentSide.has(p.parent)) agentSide.add(p.pid);
  const others = tree.filter((p) => p !== tree[0] && p !== launcherProc && !agentSide.has(p.pid));
  return { launcher: launcherProc, others, agentRss: tree.filter((p) => agentSide.has(p.pid)).reduce((s, p) => s + p.rss, 0) };
}

/** Runs `command args`, resolves with its exit code and output; `onLine` sees each stdout line as it comes. */
function run(command, args, opts, onLine = () => {}) {
  const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    stdout += d;
    pending += d;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      onLine(pending.slice(0, nl), child);
      pending = pending.slice(nl + 1);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The CPU other work on the machine used meanwhile, read from /proc each second: every process but this one, its
 * descendants and what names the scratch folder (an agent's processes orphaned at its stop have their home there).
 * A lower bound: a process that starts and ends between two readings is missed.
 */
function otherWork() {
  const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const seen = new Map(); // pid → { ours, ticks }
  let others = 0;
  const read = (initial) => {
    const stats = [];
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        stats.push({ pid: Number(p), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
      } catch {
        /* gone */
      }
    }
    // Parents first, so a new child of a process of ours is ours.
    stats.sort((a, b) => a.pid - b.pid);
    for (const { pid, ppid, ticks } of stats) {
      let known = seen.get(pid);
      if (!known) {
        let ours = !initial && (pid === process.pid || ppid === process.pid || seen.get(ppid)?.ours === true);
        if (!ours && !initial) {
          try {
            ours = readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(scratch) || readFileSync(`/proc/${pid}/environ`, 'utf8').includes(scratch);
          } catch {
            /* gone, or not ours to read */
          }
        }
        known = { ours: ours || pid === process.pid, ticks: initial ? ticks : 0 };
        seen.set(pid, known);
      }
      if (!known.ours) others += ticks - known.ticks;
      known.ticks = ticks;
    }
  };
  read(true);
  const timer = setInterval(() => read(false), 1000);
  return {
    /** CPU seconds of other work since the start. */
    stop() {
      clearInterval(timer);
      read(false);
      return others / ticksPerSecond;
    },
  };
}

const loadBefore = os.loadavg();
const model = await startScriptedModel();
mkdirSync(path.join(root, '.scratch'), { recursive: true });
const scratch = mkdtempSync(path.join(root, '.scratch', 'bench-sandbox-'));
const otherCpu = otherWork();
const tStart = now();
let n = 0;
let codexPolicy; // the launcher's settings argument of a sandboxed codex run, for the launcher alone

/** One CLI run of `agent` in `mode` in a fresh home and workspace: start and turn in ms, what the sandbox added. */
async function once(agent, mode) {
  const dir = path.join(scratch, `${agent.id}-${mode}-${n++}`);
  const workspace = path.join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const spec = await agent.prepare({ scratch: dir, modelUrl: model.url, workspace });
  const config = path.join(dir, 'agents.json');
  writeFileSync(config, JSON.stringify([{ name: agent.id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }]));
  const args = [cli, '--config', config, '--agent', agent.id, '--cwd', workspace, '--state-dir', path.join(dir, 'state'), '--approve-all', '--sandbox', mode, '--format', 'json', PROMPT];
  const asked = model.requests.length;
  let start;
  let added;
  const t0 = now();
  const r = await run(process.execPath, args, { cwd: workspace, env: process.env }, (line, child) => {
    if (start !== undefined || !line.startsWith('{"type":"session"')) return;
    start = now() - t0;
    added = sandboxProcesses(processTree(child.pid), spec);
  });
  const turn = now() - t0;
  const requests = model.requests.length - asked;
  const written = existsSync(path.join(workspace, 'inside.txt')) && readFileSync(path.join(workspace, 'inside.txt'), 'utf8').trim() === 'hi';
  if (r.code !== 0 || start === undefined || requests < 2 || !written || !r.stdout.includes('"outcome":"end_turn"')) {
    throw new Error(
      `${agent.id} --sandbox ${mode} failed (exit ${r.code}, ${requests} model requests, inside.txt ${written ? 'written' : 'not written'}):\n${r.stderr.slice(-2000)}\n${r.stdout.slice(-2000)}`,
    );
  }
  if (mode !== 'off' && !added.launcher) throw new Error(`${agent.id}: no ${launcher} process under the CLI at the session event`);
  if (mode !== 'off' && agent.id === 'codex') codexPolicy ??= added.launcher.argv[added.launcher.argv.indexOf('--') - 1];
  const blocks = r.stdout.split('\n').filter((l) => l.startsWith('{"type":"sandbox"')).length;
  return {
    start,
    turn,
    requests,
    blocks,
    launcherRss: added.launcher?.rss,
    othersRss: added.others.reduce((s, p) => s + p.rss, 0),
    others: added.others.map((p) => path.basename(p.argv[0] ?? '?')),
    agentRss: added.agentRss,
  };
}

const results = Object.fromEntries(agents.map((a) => [a.id, Object.fromEntries(MODES.map((m) => [m, []]))]));
const parts = { check: [], bare: [] };
try {
  for (const agent of agents) for (const mode of MODES) await once(agent, mode); // warm-up: file cache, first starts
  for (let round = 0; round < runs; round++) {
    for (const agent of agents) {
      const order = round % 2 ? [...MODES].reverse() : MODES;
      for (const mode of order) results[agent.id][mode].push(await once(agent, mode));
      const [s, o] = MODES.map((m) => results[agent.id][m].at(-1));
      console.log(`round ${round + 1} ${agent.id}: sandboxed start ${Math.round(s.start)} / turn ${Math.round(s.turn)} ms, off ${Math.round(o.start)} / ${Math.round(o.turn)} ms`);
    }
  }
  // The start's parts alone, spawn to exit: the check the CLI makes first, then the launcher around /bin/true.
  for (let k = 0; k < runs; k++) {
    let t0 = now();
    const c = await run(process.execPath, [launcher, '--check'], { env: process.env });
    parts.check.push(now() - t0);
    if (c.code !== 0 || !c.stdout.includes('"ok":true')) throw new Error(`sandbox.mjs --check: ${c.stdout}${c.stderr}`);
    if (!codexPolicy) continue;
    t0 = now();
    const b = await run(process.execPath, [launcher, codexPolicy, '--', '/bin/true'], { env: process.env });
    parts.bare.push(now() - t0);
    if (b.code !== 0) throw new Error(`sandbox.mjs around /bin/true exited ${b.code}: ${b.stderr}`);
  }
} finally {
  await model.close();
}
const othersCpu = otherCpu.stop();
const seconds = (now() - tStart) / 1000;
// Nothing of the run may be left: every process of it names the scratch folder in its arguments or environment.
let leftRunning = 0;
for (const p of readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
  try {
    if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(scratch) || readFileSync(`/proc/${p}/environ`, 'utf8').includes(scratch)) leftRunning++;
  } catch {
    /* gone, or not ours to read */
  }
}
rmSync(scratch, { recursive: true, force: true });
const loadAfter = os.loadavg();

const ms = (x) => Math.round(x).toLocaleString('en');
const mib = (kib) => (kib / 1024).toFixed(1);
const spread = (xs) => `${ms(median(xs))} (${ms(Math.min(...xs))}–${ms(Math.max(...xs))})`;
/** Median over rounds of sandboxed / unsandboxed, pair by pair within a round. */
const ratio = (id, key) => median(results[id]['workspace-write'].map((s, k) => s[key] / results[id].off[k][key]));
const extra = (id, key) => median(results[id]['workspace-write'].map((s, k) => s[key] - results[id].off[k][key]));
const label = (a) => a.label.replace(/^(\w+) \((.*)\)$/, '$2');
const rows = [];
for (const a of agents) {
  for (const m of MODES) {
    const rs = results[a.id][m];
    const after = rs.map((r) => r.turn - r.start);
    const rss = m === 'off' ? '—' : `${mib(median(rs.map((r) => r.launcherRss)))} + ${mib(median(rs.map((r) => r.othersRss)))} (${rs[0].others.length})`;
    rows.push(
      `| ${label(a)} | ${m === 'off' ? '`off`' : '`workspace-write`'} | ${spread(rs.map((r) => r.start))} | ${spread(rs.map((r) => r.turn))} | ${ms(median(after))} | ${median(rs.map((r) => r.requests))} | ${rss} | ${mib(median(rs.map((r) => r.agentRss)))} |`,
    );
  }
}
const ratios = agents.map(
  (a) =>
    `- ${label(a)}: start **${ratio(a.id, 'start').toFixed(2)}×** (+${ms(extra(a.id, 'start'))} ms), turn **${ratio(a.id, 'turn').toFixed(2)}×** (+${ms(extra(a.id, 'turn'))} ms)` +
    `${results[a.id]['workspace-write'].some((r) => r.blocks) ? `; sandboxed, ${median(results[a.id]['workspace-write'].map((r) => r.blocks))} connection(s) a run refused and said` : ''}`,
);
const others = [...new Set(agents.flatMap((a) => results[a.id]['workspace-write'][0].others))].sort().join(', ');
const heading = '## Agent sandbox: one shell-command turn through the CLI, sandboxed against unsandboxed';
const section = `${heading}

Written by \`node bench/sandbox.mjs\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}; ${loadLine(loadBefore, loadAfter)}. ${seconds.toFixed(0)} s in all; other work on the
machine used at least ${othersCpu.toFixed(1)} CPU s of the ${(seconds * os.cpus().length).toFixed(0)} meanwhile (every other process read from /proc each second).

Each run is a fresh \`dist/cli.js --sandbox workspace-write|off --approve-all --format json\` process with a fresh agent
home and workspace, on the scripted model (in the bench's own process, on 127.0.0.1), the prompt asking for one shell
command (\`echo hi > inside.txt\`, checked written). Start: spawn → the CLI's \`session\` event; turn: spawn → exit.
One warm-up pair per agent, then ${runs} rounds, sandboxed and unsandboxed alternating (which goes first swapped each
round). Times in ms, median (min–max); sandbox RSS at the session event: the launcher (\`dist/sandbox.mjs\`, Node) +
the other processes the sandbox adds (how many: ${others}); the agent's own processes beside it.${skipped.length ? ` Not installed, not run: ${skipped.join(', ')}.` : ''}

| agent | \`--sandbox\` | start ms | turn ms | turn after the start ms | model requests | sandbox RSS MiB | agent RSS MiB |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Sandboxed / unsandboxed, pair by pair within a round (median), and the median difference:
${ratios.join('\n')}

The start's parts alone (spawn to exit, median of ${runs}): \`node dist/sandbox.mjs --check\` (run by the CLI before
the launcher) ${spread(parts.check)} ms; the launcher with codex's policy around \`/bin/true\` (Node, the proxies,
socat, bubblewrap, the tear-down) ${parts.bare.length ? spread(parts.bare) : '(not run: no codex)'} ms.
Processes of the run still running after it: ${leftRunning}.
`;
process.stdout.write(`\n${section}`);
if (process.env.BENCH_NO_WRITE !== '1') {
  // Replace only this benchmark's section; other benchmarks keep theirs.
  const file = path.join(root, 'bench', 'RESULTS.md');
  const existing = readFileSync(file, 'utf8');
  const at = existing.indexOf(heading);
  const next = at < 0 ? -1 : existing.indexOf('\n## ', at + 1);
  writeFileSync(file, at < 0 ? `${existing.trimEnd()}\n\n${section}` : `${existing.slice(0, at)}${section}${next < 0 ? '' : existing.slice(next + 1)}`);
}
