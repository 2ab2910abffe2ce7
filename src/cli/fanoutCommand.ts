/**
 * `agent-host fanout`: one prompt on several agents in parallel, each in a git worktree of its own made from the
 * user's tree as it is (docs/fanout.md). Prints one row per run (agent, how its turn ended, files changed, lines
 * added and removed, the check command's exit code, tokens, wall time), in text or as one JSON array; `--apply RUN`
 * puts one run's changes into the working tree (exit 5 where the user changed the same lines meanwhile, nothing
 * written). Without `--keep` every worktree is removed before exit, on Ctrl-C too.
 */
import * as path from 'node:path';
import type { Logger } from '../core/log';
import { oneLine } from '../core/visibleText';
import { MAX_RUNS, runFanout, type RunRow, type RunSpec, type TurnOutcome } from '../fanout/fanout';
import { ApplyConflictError, NotAGitRepositoryError, ProtectedFilesError, repositoryOf, type RunWorktree, RunWorktrees } from '../fanout/worktrees';
import type { AgentConfig } from '../session/agentConfig';
import { TURN_EXIT_CODES, type AgentSession } from '../session/agentSession';
import type { AgentStartOptions } from '../session/sessionHost';
import type { Usage } from '../session/timelineTypes';
import { parseArgs } from 'node:util';
import { defaultStateDir, SessionStore } from '../session/sessionStore';
import { AGENT_OPTIONS, type AgentValues, agentFromFile } from './agentOptions';
import { runPrompt } from './runPrompt';
import { stderr, stdout } from './terminal';

export const FANOUT_USAGE = `Usage: agent-host fanout --config FILE --agent A --agent B [--agent A --model M] [--check CMD] [--keep]
                         [--apply RUN] [--max-parallel N] [agent options] <prompt…>
       agent-host fanout --list | --apply RUN | --remove RUN|all   [--cwd DIR] [--worktrees DIR]

Runs one prompt on several agents at once (2 to ${MAX_RUNS} runs), each in a git worktree of its own made from --cwd's
repository as it is now: HEAD plus your uncommitted changes, tracked and untracked (.gitignore honoured). Your
tree, index and branches are not touched until --apply. Prints one row per run when all are done.

  --agent NAME         a run of the agent NAME of --config (repeatable; the same agent twice is two runs)
  --model M            the model of the run named by the --agent just before it
  --check CMD          a shell command run in each worktree after its run (e.g. "npm test"): its exit code and
                       the end of its output are in the row
  --max-parallel N     runs at a time (default 4); the rest wait their turn
  --worktrees DIR      where the worktrees are kept (default: STATE_DIR/worktrees, outside your tree)
  --keep               keep the worktrees (and each run's changes) after exit; otherwise each is removed, on
                       Ctrl-C too
  --apply RUN          put run RUN's changes into your working tree: after the runs, RUN is its number (1, 2, …);
                       alone, the id of a kept run (--list). Refused, writing nothing, when you changed the same
                       lines meanwhile (exit 5), or when the run changed a protected file (.git*, .vscode/,
                       .github/workflows/, .env*, … as for an agent's writes) and --allow-protected is not given
  --list               the kept runs of this repository, with the disk each uses
  --remove RUN|all     remove a kept run's worktree (or all of this repository's)
  --format text|json   rows as a table (default) or one JSON array of rows

Agent options as for a prompt (agent-host --help): --approve-all|--approve-reads|--deny-all (default),
--allow-protected, --sandbox (each run's worktree is its writable folder), --mcp-config, --timeout,
--log-level, --state-dir. Each run's session is recorded in the session index with its worktree as its folder.

Exit codes: 0 every run ended its turn, 1 a run did not (its row says why), 2 usage (or --cwd is not in a git
repository), 5 --apply refused, 7 cancelled (Ctrl-C).`;

export interface FanoutCommand {
  runs: RunSpec[];
  prompt: string;
  cwd: string;
  worktreesDir: string;
  check?: string;
  keep: boolean;
  apply?: string;
  /** --allow-protected: --apply may write the protected files a run changed. */
  allowProtected?: boolean;
  maxParallel: number;
  format: 'text' | 'json';
  store: SessionStore;
  /** The agent of one run and how it starts, with `cwd` as its workspace (the CLI's agent options). */
  prepare(spec: RunSpec, cwd: string): Promise<{ agent: AgentConfig; options: AgentStartOptions; logger: Logger }>;
  startAgent(config: AgentConfig, options: AgentStartOptions): Promise<AgentSession>;
}

export class FanoutUsageError extends Error {}

/** The runs named by `--agent` and `--model` tokens in order: a `--model` belongs to the `--agent` before it. */
export function runSpecsOf(tokens: ReadonlyArray<{ kind: string; name?: string | undefined; value?: string | boolean | undefined }>): RunSpec[] {
  const runs: RunSpec[] = [];
  for (const t of tokens) {
    if (t.kind !== 'option' || typeof t.value !== 'string') continue;
    if (t.name === 'agent') runs.push({ label: t.value, agent: t.value });
    else if (t.name === 'model') {
      const last = runs[runs.length - 1];
      if (!last) throw new FanoutUsageError('--model names the model of the --agent before it: give --agent first');
      if (last.model) throw new FanoutUsageError(`--agent ${last.agent} has two --model`);
      last.model = t.value;
      last.label = `${last.agent} (${t.value})`;
    }
  }
  return runs;
}

export async function runFanoutCommand(c: FanoutCommand): Promise<number> {
  let repo: string;
  try {
    repo = await repositoryOf(c.cwd);
  } catch (error) {
    if (error instanceof NotAGitRepositoryError) {
      stderr(`agent-host: ${error.message}\n`);
      return TURN_EXIT_CODES.usage!;
    }
    throw error;
  }
  const worktrees = new RunWorktrees(c.worktreesDir);
  const cancel = new AbortController();
  const stop = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    stderr(interrupts === 1 ? 'agent-host: cancelling the runs (Ctrl-C again stops the agents)\n' : 'agent-host: stopping the agents\n');
    (interrupts === 1 ? cancel : stop).abort();
  };
  process.on('SIGINT', onInterrupt);
  const onTerm = () => {
    cancel.abort();
    stop.abort();
  };
  process.once('SIGTERM', onTerm);
  process.once('SIGHUP', onTerm);

  let made: RunWorktree[] = [];
  let rows: RunRow[] = [];
  try {
    const result = await runFanout({
      repo,
      worktrees,
      runs: c.runs,
      maxParallel: c.maxParallel,
      signal: cancel.signal,
      ...(c.check ? { check: c.check } : {}),
      onProgress: (row, state, done) => {
        if (state === 'created') made.push({ id: row.id } as RunWorktree);
        if (c.format === 'text' && state !== 'created') stderr(`agent-host: [${oneLine(row.label)}] ${state === 'done' && done ? `done: ${done.outcome}` : state}\n`);
      },
      turn: (spec, wt, signal) => turn(c, spec, wt, signal, stop.signal),
    });
    made = result.worktrees;
    rows = result.rows;
  } catch (error) {
    // Worktrees made before the failure go with it.
    stderr(`agent-host: ${(error as Error).message}\n`);
    if (!c.keep) await removeAll(worktrees, repo, made);
    return cancel.signal.aborted ? TURN_EXIT_CODES.cancelled! : TURN_EXIT_CODES.error!;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onTerm);
  }

  let code = cancel.signal.aborted ? TURN_EXIT_CODES.cancelled! : rows.every((r) => r.exitCode === 0) ? 0 : TURN_EXIT_CODES.error!;
  let applied: { run: string; error?: string } | undefined;
  if (c.apply !== undefined && !cancel.signal.aborted) {
    const n = Number(c.apply);
    const row = Number.isInteger(n) && n >= 1 && n <= rows.length ? rows[n - 1] : rows.find((r) => r.id === c.apply);
    const wt = row && made.find((w) => w.id === row.id);
    if (!row || !wt || !row.result) {
      applied = { run: c.apply, error: `no run ${c.apply} with changes to apply (runs 1–${rows.length})` };
      code = TURN_EXIT_CODES.usage!;
    } else {
      try {
        await worktrees.apply(wt, row.result, { allowProtected: c.allowProtected === true });
        applied = { run: row.id };
      } catch (error) {
        applied = { run: row.id, error: refusalText(error) };
        code = isRefusal(error) ? TURN_EXIT_CODES.refusal! : TURN_EXIT_CODES.error!;
      }
    }
  }
  if (!c.keep) await removeAll(worktrees, repo, made);

  if (c.format === 'json') {
    stdout(`${JSON.stringify(rows.map((r, i) => ({ run: i + 1, ...r, tokens: tokensOf(r.usage) ?? null, kept: c.keep })))}\n`);
  } else {
    stdout(table(rows));
    stdout(c.keep ? `Kept in ${worktrees.folderOf(repo)} (agent-host fanout --list; --apply ID; --remove ID|all)\n` : `Removed the ${made.length} worktrees.\n`);
  }
  if (applied?.error) stderr(`agent-host: --apply ${oneLine(applied.run)}: ${applied.error}\n`);
  else if (applied) stderr(`agent-host: applied run ${oneLine(applied.run)} to ${repo}\n`);
  return code;
}

/** One run's turn: the CLI's prompt runner with the worktree as its workspace, quiet; what it reports is kept. */
async function turn(c: FanoutCommand, spec: RunSpec, wt: RunWorktree, cancel: AbortSignal, stop: AbortSignal): Promise<TurnOutcome> {
  const { agent, options, logger } = await c.prepare(spec, wt.path);
  let usage: Usage | undefined;
  let outcome = 'error';
  let error: string | undefined;
  const exitCode = await runPrompt({
    agent,
    options,
    prompt: c.prompt,
    cwd: wt.path,
    store: c.store,
    logger,
    format: 'json',
    signals: { cancel, stop },
    ...(spec.model ? { model: spec.model } : {}),
    emit: (event) => {
      const e = event as { type?: string; usage?: Usage; outcome?: string; error?: string };
      if (e.type === 'usage' && e.usage) usage = e.usage;
      if (e.type === 'result') {
        outcome = e.outcome ?? outcome;
        error = e.error;
      }
    },
    startAgent: c.startAgent,
  });
  return { outcome, exitCode, ...(error ? { error } : {}), ...(usage ? { usage } : {}) };
}

async function removeAll(worktrees: RunWorktrees, repo: string, made: Array<Pick<RunWorktree, 'id'> & Partial<RunWorktree>>): Promise<void> {
  for (const w of made) {
    await worktrees
      .remove({ id: w.id, repo, path: w.path ?? path.join(worktrees.folderOf(repo), w.id) })
      .catch((error: Error) => stderr(`agent-host: could not remove the worktree of run ${oneLine(w.id)}: ${error.message}\n`));
  }
}

const tokensOf = (u: Usage | undefined): number | undefined => (u ? (u.inputTokens ?? 0) + (u.outputTokens ?? 0) || u.used || undefined : undefined);

function table(rows: RunRow[]): string {
  const head = ['#', 'RUN', 'OUTCOME', 'FILES', '+/-', 'CHECK', 'TOKENS', 'TIME'];
  const body = rows.map((r, i) => [
    String(i + 1),
    r.label,
    r.outcome,
    String(r.files.length),
    `+${r.added} -${r.removed}`,
    r.check ? (r.check.exitCode === null ? (r.check.signal ?? 'failed') : String(r.check.exitCode)) : '-',
    String(tokensOf(r.usage) ?? '-'),
    `${(r.wallMs / 1000).toFixed(1)} s`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    `${cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  let out = line(head) + body.map(line).join('');
  for (const [i, r] of rows.entries()) {
    if (r.error) out += `run ${i + 1}: ${r.error.split('\n')[0]}\n`;
    if (r.check && r.check.exitCode !== 0) out += `run ${i + 1} check: ${r.check.tail.trim().split('\n').slice(-3).join(' | ') || `exit ${r.check.exitCode ?? r.check.signal}, no output`}\n`;
  }
  return out;
}

/** An apply refused, writing nothing: the user changed the same lines, or the run changed protected files. */
function isRefusal(error: unknown): boolean {
  return error instanceof ApplyConflictError || error instanceof ProtectedFilesError;
}

function refusalText(error: unknown): string {
  const message = (error as Error).message;
  return error instanceof ProtectedFilesError ? `${message}; --allow-protected applies them (look first: --keep leaves the run's worktree to read)` : message;
}

/** `--list`, `--remove RUN|all`, `--apply RUN` without a prompt: on the runs kept for --cwd's repository. */
export async function keptRunsCommand(o: { cwd: string; worktreesDir: string; list?: boolean; remove?: string; apply?: string; allowProtected?: boolean; format: 'text' | 'json' }): Promise<number> {
  let repo: string;
  try {
    repo = await repositoryOf(o.cwd);
  } catch (error) {
    stderr(`agent-host: ${(error as Error).message}\n`);
    return TURN_EXIT_CODES.usage!;
  }
  const worktrees = new RunWorktrees(o.worktreesDir);
  const kept = await worktrees.list(repo);
  if (o.list) {
    if (o.format === 'json') stdout(`${JSON.stringify(kept)}\n`);
    else if (!kept.length) stdout('No kept runs.\n');
    else for (const k of kept) stdout(`${k.id}  ${(k.bytes / (1024 * 1024)).toFixed(1)} MiB  ${k.path}\n`);
    return 0;
  }
  if (o.remove !== undefined) {
    const which = o.remove === 'all' ? kept : kept.filter((k) => k.id === o.remove);
    if (!which.length) {
      stderr(`agent-host: no kept run ${oneLine(o.remove)} (agent-host fanout --list)\n`);
      return TURN_EXIT_CODES.usage!;
    }
    for (const k of which) await worktrees.remove(k);
    stdout(`Removed ${which.length} run(s).\n`);
    return 0;
  }
  const run = kept.find((k) => k.id === o.apply);
  if (!run?.base) {
    stderr(`agent-host: no kept run ${oneLine(o.apply ?? '')} (agent-host fanout --list)\n`);
    return TURN_EXIT_CODES.usage!;
  }
  const changes = await worktrees.changes(run);
  try {
    await worktrees.apply(run, changes.result, { allowProtected: o.allowProtected === true });
  } catch (error) {
    stderr(`agent-host: --apply ${oneLine(run.id)}: ${refusalText(error)}\n`);
    return isRefusal(error) ? TURN_EXIT_CODES.refusal! : TURN_EXIT_CODES.error!;
  }
  stderr(`agent-host: applied run ${oneLine(run.id)} (${changes.files.length} files, +${changes.added} -${changes.removed}) to ${repo}\n`);
  return 0;
}

/** `agent-host fanout …`: its options checked (each a usage error, exit 2), then the runs, or a kept run listed, applied or removed. */
export async function fanoutVerb(
  argv: string[],
  o: {
    fail(message: string, code: number): never;
    /** One run's agent and how it starts: the prompt mode's agent options with `--agent` and `--cwd` set for the run. */
    prepare(values: AgentValues, spec: RunSpec, cwd: string): Promise<{ agent: AgentConfig; options: AgentStartOptions; logger: Logger }>;
    startAgent(config: AgentConfig, options: AgentStartOptions): Promise<AgentSession>;
  },
): Promise<number> {
  const usage = (message: string): never => o.fail(`fanout: ${message}\n\n${FANOUT_USAGE}`, TURN_EXIT_CODES.usage!);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      tokens: true,
      options: {
        ...AGENT_OPTIONS,
        agent: { type: 'string', multiple: true },
        model: { type: 'string', multiple: true },
        check: { type: 'string' },
        keep: { type: 'boolean' },
        apply: { type: 'string' },
        list: { type: 'boolean' },
        remove: { type: 'string' },
        'max-parallel': { type: 'string' },
        worktrees: { type: 'string' },
        'state-dir': { type: 'string' },
      },
    });
  } catch (error) {
    return usage((error as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  if (values.help) {
    stdout(`${FANOUT_USAGE}\n`);
    return 0;
  }
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') return usage('--format must be text or json');
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const stateDir = values['state-dir'] ? path.resolve(values['state-dir']) : defaultStateDir();
  const worktreesDir = values.worktrees ? path.resolve(values.worktrees) : path.join(stateDir, 'worktrees');
  const prompt = positionals.join(' ').trim();
  if (!prompt) {
    const asked = [values.list, values.remove !== undefined, values.apply !== undefined].filter(Boolean).length;
    if (asked !== 1) return usage('give a prompt with two or more --agent, or one of --list, --apply RUN, --remove RUN|all');
    return keptRunsCommand({
      cwd,
      worktreesDir,
      format,
      ...(values.list ? { list: true } : {}),
      ...(values.remove !== undefined ? { remove: values.remove } : {}),
      ...(values.apply !== undefined ? { apply: values.apply } : {}),
      ...(values['allow-protected'] ? { allowProtected: true } : {}),
    });
  }
  if (values.list || values.remove !== undefined) return usage('--list and --remove take no prompt');
  if (typeof values.config !== 'string') return usage('give --config FILE with the agents the runs name');
  if (values.command || values.url) return usage('runs name agents of --config (--command and --url are not taken)');
  let runs;
  try {
    runs = runSpecsOf(tokens ?? []);
  } catch (error) {
    return usage((error as Error).message);
  }
  if (runs.length < 2 || runs.length > MAX_RUNS) return usage(`give 2 to ${MAX_RUNS} runs (--agent NAME each), not ${runs.length}`);
  for (const r of runs) {
    try {
      agentFromFile(values.config, r.agent);
    } catch (error) {
      return usage((error as Error).message);
    }
  }
  const maxParallel = values['max-parallel'] ? Number(values['max-parallel']) : 4;
  if (!Number.isInteger(maxParallel) || maxParallel < 1 || maxParallel > MAX_RUNS) return usage(`--max-parallel must be 1 to ${MAX_RUNS}`);
  const store = new SessionStore(stateDir);
  return runFanoutCommand({
    runs,
    prompt,
    cwd,
    worktreesDir,
    ...(values.check ? { check: values.check } : {}),
    keep: values.keep === true,
    ...(values.apply !== undefined ? { apply: values.apply } : {}),
    ...(values['allow-protected'] ? { allowProtected: true } : {}),
    maxParallel,
    format,
    store,
    prepare: (spec, runCwd) => {
      const { agent: _agents, model: _models, ...agentValues } = values;
      return o.prepare(agentValues as AgentValues, spec, runCwd);
    },
    startAgent: o.startAgent,
  });
}
