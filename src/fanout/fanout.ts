/**
 * One prompt on several agents at once, each in a worktree of its own (docs/fanout.md): at most `maxParallel` runs
 * at a time (the rest wait their turn), then each run's changes against the shared base and, when asked, the
 * user's check command in its worktree. How a turn runs is the caller's (the CLI's prompt runner, the editor's
 * tabs); this file knows worktrees, the queue and the check. No vscode.
 */
import { spawnInGroup, killGroup } from '../core/processGroups';
import type { Usage } from '../session/timelineTypes';
import type { FileChange, RunWorktree, RunWorktrees } from './worktrees';

export interface RunSpec {
  /** What the run is called in rows and tabs: the agent's name, with its model when one is asked for. */
  label: string;
  agent: string;
  model?: string;
}

export interface TurnOutcome {
  /** How the turn ended: end_turn, refusal, cancelled, start_failed, agent_exited, error, … */
  outcome: string;
  exitCode: number;
  error?: string;
  usage?: Usage;
}

export interface CheckResult {
  command: string;
  exitCode: number | null;
  signal?: string;
  /** The last lines of its output (stdout and stderr together), at most CHECK_TAIL bytes. */
  tail: string;
  ms: number;
}

export interface RunRow {
  id: string;
  label: string;
  agent: string;
  model?: string;
  worktree: string;
  outcome: string;
  exitCode: number;
  error?: string;
  wallMs: number;
  usage?: Usage;
  files: FileChange[];
  added: number;
  removed: number;
  /** The snapshot of the worktree at the run's end (what apply puts into the user's tree). */
  result?: string;
  check?: CheckResult;
}

export interface FanoutOptions {
  repo: string;
  worktrees: RunWorktrees;
  runs: RunSpec[];
  maxParallel: number;
  /** Runs one turn of `spec` with `cwd` as its workspace. */
  turn(spec: RunSpec, run: RunWorktree, signal: AbortSignal): Promise<TurnOutcome>;
  /** The user's check command (a shell command line), run in each worktree after its turn. */
  check?: string;
  checkTimeoutMs?: number;
  signal?: AbortSignal;
  /** A run's progress: queued → running → checking → done. */
  onProgress?(row: Pick<RunRow, 'id' | 'label'>, state: 'created' | 'running' | 'checking' | 'done', detail?: RunRow): void;
}

export const CHECK_TAIL = 4096;
export const MAX_RUNS = 8;

/** The base snapshot, one worktree per run, the runs (`maxParallel` at a time), their changes and checks. */
export async function runFanout(o: FanoutOptions): Promise<{ base: string; rows: RunRow[]; worktrees: RunWorktree[] }> {
  if (o.runs.length < 1 || o.runs.length > MAX_RUNS) throw new Error(`give 1 to ${MAX_RUNS} runs (got ${o.runs.length})`);
  const base = await o.worktrees.snapshot(o.repo);
  const stamp = Date.now().toString(36);
  const worktrees: RunWorktree[] = [];
  for (const [i, spec] of o.runs.entries()) {
    const id = `${stamp}-${i + 1}-${spec.agent.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 24)}`;
    worktrees.push(await o.worktrees.create(o.repo, base, id));
    o.onProgress?.({ id, label: spec.label }, 'created');
  }
  const rows: RunRow[] = new Array(o.runs.length);
  let next = 0;
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= o.runs.length) return;
      rows[i] = await oneRun(o, o.runs[i]!, worktrees[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.maxParallel, o.runs.length)) }, lane));
  return { base, rows, worktrees };
}

async function oneRun(o: FanoutOptions, spec: RunSpec, wt: RunWorktree): Promise<RunRow> {
  const row: RunRow = {
    id: wt.id,
    label: spec.label,
    agent: spec.agent,
    ...(spec.model ? { model: spec.model } : {}),
    worktree: wt.path,
    outcome: 'cancelled',
    exitCode: 7,
    wallMs: 0,
    files: [],
    added: 0,
    removed: 0,
  };
  if (o.signal?.aborted) return row;
  o.onProgress?.(row, 'running');
  const started = Date.now();
  try {
    const t = await o.turn(spec, wt, o.signal ?? new AbortController().signal);
    Object.assign(row, { outcome: t.outcome, exitCode: t.exitCode, ...(t.error ? { error: t.error } : {}), ...(t.usage ? { usage: t.usage } : {}) });
  } catch (error) {
    Object.assign(row, { outcome: 'error', exitCode: 1, error: (error as Error).message });
  }
  row.wallMs = Date.now() - started;
  try {
    const changes = await o.worktrees.changes(wt);
    Object.assign(row, { files: changes.files, added: changes.added, removed: changes.removed, result: changes.result });
  } catch (error) {
    row.error = [row.error, `its changes could not be read: ${(error as Error).message}`].filter(Boolean).join('\n');
  }
  if (o.check && !o.signal?.aborted) {
    o.onProgress?.(row, 'checking');
    row.check = await runCheck(o.check, wt.path, o.checkTimeoutMs ?? 10 * 60_000, o.signal);
  }
  o.onProgress?.(row, 'done', row);
  return row;
}

/** The check command line through the system shell in `cwd`, its output's tail kept; killed (its group) at the timeout or on abort. */
export function runCheck(command: string, cwd: string, timeoutMs: number, signal?: AbortSignal): Promise<CheckResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const shell = process.platform === 'win32' ? (process.env.ComSpec ?? 'cmd.exe') : '/bin/sh';
    const args = process.platform === 'win32' ? ['/d', '/s', '/c', command] : ['-c', command];
    let tail = Buffer.alloc(0);
    const keep = (chunk: Buffer) => {
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > CHECK_TAIL * 2) tail = tail.subarray(tail.length - CHECK_TAIL);
    };
    let child: ReturnType<typeof spawnInGroup>;
    try {
      child = spawnInGroup(shell, args, { cwd, env: { ...process.env, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      resolve({ command, exitCode: null, tail: (error as Error).message, ms: 0 });
      return;
    }
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const stop = () => {
      if (child.pid) killGroup(child.pid, 'SIGKILL');
    };
    const timer = setTimeout(() => {
      keep(Buffer.from(`\n[the check was stopped after ${Math.round(timeoutMs / 1000)} s]\n`));
      stop();
    }, timeoutMs);
    signal?.addEventListener('abort', stop, { once: true });
    child.on('error', (error) => keep(Buffer.from(`\n${error.message}\n`)));
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      const text = tail.subarray(Math.max(0, tail.length - CHECK_TAIL)).toString('utf8');
      resolve({ command, exitCode: code, ...(sig ? { signal: sig } : {}), tail: text, ms: Date.now() - started });
    });
  });
}
