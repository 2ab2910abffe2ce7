import type { ChildProcessWithoutNullStreams, StdioOptions } from 'node:child_process';
import * as fs from 'node:fs';
import type { Logger } from './log';
import { forgetGroup, groupAlive, groupCgroup, killGroup, spawnInGroup } from './processGroups';

export { forgetGroup, groupAlive, killGroup, processAlive, spawnInGroup } from './processGroups';

export interface AgentSpawnSpec {
  command: string;
  args?: string[];
  /** Added to (and overriding) the host's environment. */
  env?: Record<string, string>;
  /** false: `env` is the whole environment (tests keep real credentials away from agents). */
  inheritEnv?: boolean;
  cwd: string;
  /** It does not exit when its stdin closes (codex-acp): a stop sends SIGTERM at once instead of after the grace period. */
  ignoresInputClose?: boolean;
  /** Run inside a sandbox: through the launcher (src/sandbox/launcher.ts) with these settings. */
  sandbox?: SandboxLaunch;
}

/** How to start an agent inside the sandbox (docs/sandbox.md). */
export interface SandboxLaunch {
  /** A Node (or Electron run as Node) that runs the launcher. */
  node: string;
  /** dist/sandbox.mjs. */
  launcher: string;
  /** The policy's name, for the log (`workspace-write`, `read-only`). */
  mode: string;
  /** What it allows, in one line (the chat header's tooltip). */
  description?: string;
  /** `@anthropic-ai/sandbox-runtime`'s settings (src/session/sandboxPolicy.ts). */
  settings: object;
  /** Told each report of the launcher (a refused connection, a failed setup). */
  onReport?: (report: SandboxReport) => void;
}

/**
 * `command args` run by the sandbox launcher with `launch`'s policy, as spawnInGroup's arguments: Electron runs it as
 * Node (the launcher drops the variable before the command); `reportsFd` is the pipe it reports on, when there is one.
 */
export function inSandbox(
  launch: SandboxLaunch,
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdio: StdioOptions },
  reportsFd?: number,
): [string, string[], { cwd: string; env: NodeJS.ProcessEnv; stdio: StdioOptions }] {
  const reports = reportsFd === undefined ? [] : ['--reports-fd', String(reportsFd)];
  return [launch.node, [launch.launcher, ...reports, JSON.stringify(launch.settings), '--', command, ...args], { ...options, env: { ...options.env, ELECTRON_RUN_AS_NODE: '1' } }];
}

/** What the sandbox launcher reports on its own channel (fd 3): never from inside the sandbox. */
export type SandboxReport = { type: 'ready' } | { type: 'network'; host: string; port?: number } | { type: 'failed'; reason: string };

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (ENOENT, EACCES…). */
  spawnError?: string;
  /** It closed its output while still running and was stopped for that. */
  closedOutput?: boolean;
  /** It stopped reading its input while still running and was stopped for that. */
  closedInput?: boolean;
  /** A remote agent: its connection closed, and how (the close code and reason, or the socket error). */
  disconnected?: string;
  stderrTail: string;
}

/** Raised for every request still pending when the agent goes away. */
export class AgentExitedError extends Error {
  constructor(readonly exit: ExitInfo) {
    super(describeExit(exit));
    this.name = 'AgentExitedError';
  }
}

export function describeExit(exit: ExitInfo): string {
  const how = exit.disconnected
    ? `connection closed: ${exit.disconnected}`
    : exit.spawnError
      ? `could not be started: ${exit.spawnError}`
      : exit.closedOutput
        ? `closed its output while running and was stopped (${exit.signal ?? `code ${exit.code}`})`
        : exit.closedInput
          ? `stopped reading its input while running and was stopped (${exit.signal ?? `code ${exit.code}`})`
          : exit.signal
            ? `was killed by ${exit.signal}`
            : `exited with code ${exit.code}`;
  const tail = exit.stderrTail.trim();
  return `Agent ${how}${tail ? `\n--- last stderr ---\n${tail}` : ''}`;
}

/** Keeps the last `capacity` bytes of a stream as text. */
export class RingBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly capacity: number) {}

  push(data: Buffer): void {
    this.chunks.push(data);
    this.size += data.length;
    while (this.size > this.capacity && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  /** The last `maxLines` lines. */
  tail(maxLines = 40): string {
    let text = Buffer.concat(this.chunks).toString('utf8');
    if (text.length > this.capacity) text = text.slice(text.length - this.capacity);
    return text
      .split('\n')
      .slice(-maxLines - 1)
      .join('\n');
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Whether `promise` settles within `ms`; the timer goes when it does (a library user's process need not wait it out). */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]).finally(() => clearTimeout(timer));
}

export interface ShutdownTimings {
  /** After closing stdin, how long to wait before SIGTERM to the process group. */
  termAfterMs: number;
  /** After SIGTERM, how long to wait before SIGKILL. */
  killAfterMs: number;
}
export const DEFAULT_SHUTDOWN: ShutdownTimings = { termAfterMs: 500, killAfterMs: 3000 };

/**
 * An agent subprocess in its own process group. stdout is left to the protocol reader;
 * stderr is logged and kept in a ring buffer for error reports.
 */
export class AgentProcess {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;
  private readonly stderr = new RingBuffer(64 * 1024);
  private stderrPartial = '';
  private shuttingDown: Promise<ExitInfo> | undefined;
  /** Stopped because it closed its output while running (said in the exit description). */
  private closedOutput = false;
  /** Stopped because it closed its input while running. */
  private closedInput = false;
  /** Why the sandbox launcher could not start the agent (its `failed` report). */
  private sandboxFailure: string | undefined;
  private readonly sandboxListeners = new Set<(report: SandboxReport) => void>();

  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly logger: Logger,
    readonly spec: AgentSpawnSpec,
  ) {
    const pid = child.pid;
    child.stderr.on('data', (data: Buffer) => this.onStderr(data));
    if (spec.sandbox) this.readSandboxReports();
    this.exited = new Promise<ExitInfo>((resolve) => {
      const finish = (info: Omit<ExitInfo, 'stderrTail'>) => {
        if (this.exitInfo) return;
        // The launcher could not set the sandbox up: it said why, and the agent never started.
        if (this.sandboxFailure !== undefined) info = { code: info.code, signal: info.signal, spawnError: `the sandbox could not be set up: ${this.sandboxFailure}` };
        if (this.stderrPartial) this.logger.info(`[agent stderr] ${this.stderrPartial}`);
        this.exitInfo = {
          ...info,
          ...(this.closedOutput ? { closedOutput: true } : {}),
          ...(this.closedInput ? { closedInput: true } : {}),
          stderrTail: this.stderr.tail(),
        };
        resolve(this.exitInfo);
        // The leader is gone; its group (npm launchers leave native children behind) goes too.
        if (pid !== undefined) void this.reapGroup(pid);
      };
      child.once('error', (error) => finish({ code: null, signal: null, spawnError: explainSpawnError(error, spec) }));
      child.once('exit', (code, signal) => finish({ code, signal }));
    });
    // EPIPE: the agent closed its input. Dead, its exit fails what is pending; alive, it can read nothing
    // more, so it is stopped (else every request written to it would wait forever).
    child.stdin.on('error', (error) => {
      this.logger.debug(`agent stdin: ${error.message}`);
      if (this.ending) return;
      setImmediate(() => {
        if (this.ending) return;
        this.closedInput = true;
        this.logger.error(`The agent stopped reading its input (${error.message}) but is still running: stopping it`);
        void this.shutdown();
      });
    });
  }

  static spawn(spec: AgentSpawnSpec, logger: Logger): AgentProcess {
    const sandbox = spec.sandbox;
    logger.info(`Starting agent: ${spec.command} ${(spec.args ?? []).join(' ')} (cwd ${spec.cwd})${sandbox ? ` in the sandbox (${sandbox.mode})` : ''}`);
    const env: NodeJS.ProcessEnv = spec.inheritEnv === false ? { ...spec.env } : { ...process.env, ...spec.env };
    // Own process group, so shutdown reaches every descendant. A sandboxed agent runs under the launcher, which
    // passes stdin, stdout and stderr through and reports on a fourth pipe.
    // A command that is not there fails as it would unsandboxed (the launcher would only say the shell's "not found").
    const child = (
      sandbox && runnable(spec.command, env.PATH, spec.cwd)
        ? spawnInGroup(...inSandbox(sandbox, spec.command, spec.args ?? [], { cwd: spec.cwd, env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] }, 3))
        : spawnInGroup(spec.command, spec.args ?? [], { cwd: spec.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
    ) as ChildProcessWithoutNullStreams;
    if (child.pid !== undefined) {
      const cgroup = groupCgroup(child.pid);
      logger.debug(`Agent ${child.pid}: its processes are found at stop ${cgroup ? `in cgroup ${cgroup}` : 'by process group, marker variable, stdio pipes and parentage (no cgroup here)'}`);
    }
    const agent = new AgentProcess(child, logger, spec);
    if (sandbox?.onReport) agent.onSandboxReport(sandbox.onReport);
    return agent;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The sandbox launcher's reports (a refused connection, …); nothing for an agent run without the sandbox. */
  onSandboxReport(listener: (report: SandboxReport) => void): () => void {
    this.sandboxListeners.add(listener);
    return () => this.sandboxListeners.delete(listener);
  }

  private readSandboxReports(): void {
    const channel = this.child.stdio[3] as NodeJS.ReadableStream | null | undefined;
    if (!channel) return;
    let partial = '';
    channel.on('data', (data: Buffer) => {
      const lines = (partial + data.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > 65536) partial = '';
      for (const line of lines) {
        let report: SandboxReport;
        try {
          report = JSON.parse(line) as SandboxReport;
        } catch {
          continue;
        }
        if (report.type === 'failed') this.sandboxFailure = String(report.reason);
        if (report.type === 'network') this.logger.warn(`Sandbox: refused a connection to ${report.host}${report.port ? `:${report.port}` : ''}`);
        else if (report.type === 'failed') this.logger.error(`Sandbox: could not be set up: ${report.reason}`);
        else this.logger.debug(`Sandbox: ${line}`);
        for (const l of this.sandboxListeners) l(report);
      }
    });
    channel.on('error', () => {});
  }

  /** It exited, or its shutdown has begun: nothing more to stop it for. */
  private get ending(): boolean {
    return this.exitInfo !== undefined || this.shuttingDown !== undefined;
  }

  /**
   * The agent's stdout ended. An agent that exits does so right after; one still running a moment later can
   * answer nothing more, so it is stopped — its pending requests then fail with its exit, never hang.
   */
  outputClosed(graceMs = 1000): void {
    if (this.ending) return;
    const timer = setTimeout(() => {
      if (this.ending) return;
      this.closedOutput = true;
      this.logger.error('The agent closed its output but is still running: stopping it');
      void this.shutdown();
    }, graceMs);
    void this.exited.then(() => clearTimeout(timer));
  }

  /**
   * The agent has read nothing of its input for `ms` while `bytes` wait for it: it can take no request or
   * answer more, so it is stopped (else what waits, and every request behind it, would wait forever).
   */
  inputStalled(bytes: number, ms: number): void {
    if (this.ending) return;
    this.closedInput = true;
    this.logger.error(`The agent has not read its input for ${ms} ms (${bytes} bytes wait for it) but is still running: stopping it`);
    void this.shutdown();
  }

  /** Its stdin takes nothing more (ended, closed or broken): it is being stopped, or has exited. */
  get inputGone(): boolean {
    const stdin = this.child.stdin;
    return stdin.destroyed || stdin.writableEnded || stdin.errored !== null;
  }

  get exitStatus(): ExitInfo | undefined {
    return this.exitInfo;
  }

  stderrTail(maxLines?: number): string {
    return this.stderr.tail(maxLines);
  }

  /** Close stdin, SIGTERM the group after a grace period (none for an agent that ignores stdin closing), SIGKILL after another. */
  shutdown(timings: ShutdownTimings = DEFAULT_SHUTDOWN): Promise<ExitInfo> {
    this.shuttingDown ??= this.doShutdown(timings);
    return this.shuttingDown;
  }

  private async doShutdown(timings: ShutdownTimings): Promise<ExitInfo> {
    const pid = this.child.pid;
    if (!this.child.stdin.destroyed) this.child.stdin.end();
    if (pid === undefined) return this.exited;
    const grace = this.spec.ignoresInputClose ? 0 : timings.termAfterMs;
    const gone = await settlesWithin(this.exited, grace);
    if (!gone) {
      this.logger.debug(`Agent ${pid} ${grace ? 'still running after stdin closed' : 'does not exit when stdin closes'}: SIGTERM to its group`);
      killGroup(pid, 'SIGTERM');
      const termed = await settlesWithin(this.exited, timings.killAfterMs);
      if (!termed) {
        this.logger.warn(`Agent ${pid} ignored SIGTERM for ${timings.killAfterMs} ms: SIGKILL to its group`);
        killGroup(pid, 'SIGKILL');
      }
    }
    const info = await this.exited;
    await this.reapGroup(pid, timings);
    return info;
  }

  /** Leftover members of the group after the leader exited get TERM, then KILL. */
  private async reapGroup(pid: number, timings: ShutdownTimings = DEFAULT_SHUTDOWN): Promise<void> {
    if (groupAlive(pid)) {
      killGroup(pid, 'SIGTERM');
      const deadline = Date.now() + timings.killAfterMs;
      while (groupAlive(pid) && Date.now() < deadline) await sleep(50);
      if (groupAlive(pid)) killGroup(pid, 'SIGKILL');
    }
    forgetGroup(pid);
  }

  private onStderr(data: Buffer): void {
    this.stderr.push(data);
    const text = this.stderrPartial + data.toString('utf8');
    const lines = text.split('\n');
    this.stderrPartial = lines.pop() ?? '';
    if (this.stderrPartial.length > 4096) {
      lines.push(this.stderrPartial);
      this.stderrPartial = '';
    }
    for (const line of lines) if (line.trim()) this.logger.info(`[agent stderr] ${line}`);
  }
}

/** Whether `command` names an executable file: a path as given, a bare name on PATH. */
function runnable(command: string, searchPath: string | undefined, cwd: string): boolean {
  const executable = (file: string) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(command.startsWith('/') ? command : `${cwd}/${command}`);
  return (searchPath ?? '').split(':').some((dir) => dir && executable(`${dir}/${command}`));
}

function explainSpawnError(error: NodeJS.ErrnoException, spec: AgentSpawnSpec): string {
  if (error.code === 'ENOENT') {
    return `command not found: "${spec.command}" (PATH=${spec.env?.PATH ?? process.env.PATH ?? ''}; cwd ${spec.cwd})`;
  }
  if (error.code === 'EACCES') return `permission denied running "${spec.command}"`;
  return error.message;
}
