// Checkpoints (src/host/checkpoints.ts) on a workspace of 10,000 files with 100 changed (80 modified, 10 created,
// 10 deleted), against a plain `git stash` of the same changes in the same run: the time and disk of one
// checkpoint, of a files-only restore, and of `git stash push -u` / `git stash apply`, median of BENCH_RUNS (3).
// The workspace is a git repository of its own in a temp folder (the stash is that repository's, no other).
// `node bench/checkpoints.mjs` after `npm run build`; appends a section to bench/RESULTS.md (BENCH_NO_WRITE=1: print only).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLine, machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { CheckpointStore, DEFAULT_CHECKPOINT_LIMITS } = await import(path.join(root, 'out', 'src', 'host', 'checkpoints.js'));
const FILES = Number(process.env.BENCH_FILES ?? 10000);
const CHANGED = 100;
const runs = Number(process.env.BENCH_RUNS ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-host-bench-cp-'));
const ws = path.join(base, 'ws');
const storage = path.join(base, 'storage');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_')));
Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' });
const git = (...args) =>
  execFileSync('git', ['-c', `core.hooksPath=${os.devNull}`, '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', ...args], { cwd: ws, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

/** Source-like text of 1-4 KiB, the same for the same seed. */
const text = (seed) => {
  const h = createHash('sha256').update(String(seed)).digest('hex');
  return `// file ${seed}\n${`export const v${h.slice(0, 8)} = "${h}";\n`.repeat(15 + (Number.parseInt(h.slice(0, 2), 16) % 45))}`;
};
const rel = (i) => path.join(`dir${String(i % 100).padStart(2, '0')}`, `file${i}.ts`);

/** Bytes on disk under a folder (allocated blocks). */
function du(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? du(p) : fs.lstatSync(p).blocks * 512;
  }
  return total;
}

/** A digest of every file but .git: what byte for byte compares. */
function digest() {
  const h = createHash('sha256');
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name === '.git') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(`${path.relative(ws, p)}\0`).update(fs.readFileSync(p));
    }
  };
  walk(ws);
  return h.digest('hex');
}

/** 100 changes: 80 modified, 10 created, 10 deleted (different files each run). */
function change(run) {
  for (let k = 0; k < 80; k++) fs.writeFileSync(path.join(ws, rel(run * 1000 + k * 7)), text(`m${run}-${k}`));
  for (let k = 0; k < 10; k++) fs.writeFileSync(path.join(ws, `dir0${k}`, `new-${run}-${k}.ts`), text(`c${run}-${k}`));
  for (let k = 0; k < 10; k++) fs.rmSync(path.join(ws, rel(run * 1000 + 600 + k)));
}

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const time = async (fn) => {
  const t0 = process.hrtime.bigint();
  await fn();
  return ms(t0);
};

const loadBefore = os.loadavg();
fs.mkdirSync(ws);
for (let d = 0; d < 100; d++) fs.mkdirSync(path.join(ws, `dir${String(d).padStart(2, '0')}`));
for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(ws, rel(i)), text(i));
git('init', '-q');
git('add', '-A');
git('commit', '-q', '-m', 'workspace');
git('gc', '-q');
const store = new CheckpointStore(storage);
const wsBytes = du(ws) - du(path.join(ws, '.git'));
fs.mkdirSync(storage);
let storeBytes = du(storage);
// When an agent starts, the store reads the folder (warm); the objects are packed after it, in the background.
const warmMs = await time(() => store.warm(ws));
const packMs = await time(() => store.list(ws));
const firstMs = await time(() => store.create(ws, 'first'));
const firstDisk = du(storage) - storeBytes;
const rows = [];
for (let run = 0; run < runs; run++) {
  const before = await store.create(ws, `before ${run}`);
  const clean = digest();
  change(run);
  const changed = digest();
  storeBytes = du(storage);
  const checkpointMs = await time(() => store.create(ws, `after ${run}`));
  const checkpointDisk = du(storage) - storeBytes;
  const restoreMs = await time(() => store.restoreFiles(ws, before.id));
  if (digest() !== clean) throw new Error('the restore did not bring the workspace back byte for byte');
  // The same 100 changes again, for git stash (push saves them and reverts, apply brings them back).
  change(run);
  if (digest() !== changed) throw new Error('the changes were not made the same twice');
  const gitBytes = du(path.join(ws, '.git'));
  const stashMs = await time(() => git('stash', 'push', '-q', '-u'));
  const stashDisk = du(path.join(ws, '.git')) - gitBytes;
  if (digest() !== clean) throw new Error('git stash did not revert the changes');
  const applyMs = await time(() => git('stash', 'apply', '-q'));
  if (digest() !== changed) throw new Error('git stash apply did not bring the changes back');
  git('stash', 'drop', '-q');
  git('reset', '-q', '--hard');
  git('clean', '-q', '-fd');
  rows.push({ checkpointMs, checkpointDisk, restoreMs, stashMs, stashDisk, applyMs });
}
const loadAfter = os.loadavg();
fs.rmSync(base, { recursive: true, force: true });

const m = (k) => median(rows.map((r) => r[k]));
const kib = (b) => (b / 1024).toFixed(0);
const mib = (b) => (b / 2 ** 20).toFixed(1);
const r = { checkpointMs: m('checkpointMs'), checkpointDisk: m('checkpointDisk'), restoreMs: m('restoreMs'), stashMs: m('stashMs'), stashDisk: m('stashDisk'), applyMs: m('applyMs') };
const section = `
## Checkpoints: 10,000 files, 100 changed, against \`git stash\`

Written by \`node bench/checkpoints.mjs\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${machine()}; ${loadLine(loadBefore, loadAfter)}.

A workspace of ${FILES.toLocaleString('en')} source files (${mib(wsBytes)} MiB on disk, a git repository of its own); ${CHANGED} changed
(80 modified, 10 created, 10 deleted). The checkpoint store (a shadow repository in the extension's storage)
against \`git stash push -u\` (saves the same changes and reverts them) and \`git stash apply\` (brings them back) in
the same run; median of ${runs} runs. Every restore was checked byte for byte (a digest of every file).
Size bound: files over ${DEFAULT_CHECKPOINT_LIMITS.maxFileBytes / 2 ** 20} MiB are not kept; a checkpoint whose changed files add
up to more than ${DEFAULT_CHECKPOINT_LIMITS.maxChangedBytes / 2 ** 20} MiB is not taken; the last ${DEFAULT_CHECKPOINT_LIMITS.keep} per folder are kept.

| what | time ms | disk KiB |
|---|---|---|
| the folder read into the store when the agent starts (every file) | ${warmMs.toFixed(0)} | |
| its objects packed after it (in the background) | ${packMs.toFixed(0)} | |
| first checkpoint (the store as packed; disk: the whole store) | ${firstMs.toFixed(0)} | ${kib(firstDisk)} |
| checkpoint, 100 changed | ${r.checkpointMs.toFixed(0)} | ${kib(r.checkpointDisk)} |
| \`git stash push -u\`, the same 100 | ${r.stashMs.toFixed(0)} | ${kib(r.stashDisk)} |
| files-only restore (100 files back) | ${r.restoreMs.toFixed(0)} | |
| \`git stash apply\` (100 files back) | ${r.applyMs.toFixed(0)} | |

Checkpoint / stash push: **${(r.checkpointMs / r.stashMs).toFixed(2)}×** the time, ${(r.checkpointDisk / Math.max(1, r.stashDisk)).toFixed(2)}× the disk;
files-only restore / stash apply: **${(r.restoreMs / r.applyMs).toFixed(2)}×** the time (a restore runs seven git commands: the disk into
the store's index, the checkpoint's tree less what is ignored now, then the index moves to it; \`stash apply\` runs one).
`;
console.log(JSON.stringify({ warmMs, packMs, firstMs, firstDisk, wsBytes, ...r, rows }));
console.log(section);
if (process.env.BENCH_NO_WRITE !== '1') fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), section);
