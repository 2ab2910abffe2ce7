import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Logger } from './log';

export interface AgentSpawnSpec {
  command: string;
  args?: string[];
  /** Added to (and overriding) the host's environment. */
  env?: Record<string, string>;
  /** false: `env` is the whole environment (tests keep real credentials away from agents). */
  inheritEnv?: boolean;
  cwd: string;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (ENOENT, EACCES…). */
  spawnError?: string;
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
  const how = exit.spawnError
    ? `could not be started: ${exit.spawnError}`
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
    return text.split('\n').slice(-maxLines - 1).join('\n');
  }
}

/** Every live agent group, so nothing survives the host process going down. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** `state` and `pgrp` of a process from /proc (Linux); undefined when it is gone. */
function procStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/**
 * Whether any non-zombie process is left in the group. Zombies count as gone: in containers
 * whose init never reaps, orphans stay zombies forever but no longer run.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return true;
  }
  return pids.some((d) => {
    const st = procStat(Number(d));
    return st !== undefined && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X';
  });
}

/** Whether a process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const st = process.platform === 'linux' ? procStat(pid) : { state: 'R', pgrp: 0 };
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly logger: Logger,
    readonly spec: AgentSpawnSpec,
  ) {
    installExitHook();
    const pid = child.pid;
    if (pid !== undefined) liveGroups.add(pid);
    child.stderr.on('data', (data: Buffer) => this.onStderr(data));
    this.exited = new Promise<ExitInfo>((resolve) => {
      const finish = (info: Omit<ExitInfo, 'stderrTail'>) => {
        if (this.exitInfo) return;
        if (this.stderrPartial) this.logger.info(`[agent stderr] ${this.stderrPartial}`);
        this.exitInfo = { ...info, stderrTail: this.stderr.tail() };
        resolve(this.exitInfo);
        // The leader is gone; its group (npm launchers leave native children behind) goes too.
        if (pid !== undefined) void this.reapGroup(pid);
      };
      child.once('error', (error) => finish({ code: null, signal: null, spawnError: explainSpawnError(error, spec) }));
      child.once('exit', (code, signal) => finish({ code, signal }));
    });
    // EPIPE on a dead agent's stdin is reported through pending requests, not as a crash.
    child.stdin.on('error', (error) => this.logger.debug(`agent stdin: ${error.message}`));
  }

  static spawn(spec: AgentSpawnSpec, logger: Logger): AgentProcess {
    logger.info(`Starting agent: ${spec.command} ${(spec.args ?? []).join(' ')} (cwd ${spec.cwd})`);
    const child = spawn(spec.command, spec.args ?? [], {
      cwd: spec.cwd,
      env: spec.inheritEnv === false ? { ...spec.env } : { ...process.env, ...spec.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // own process group, so shutdown reaches every descendant
      shell: false,
      windowsHide: true,
    });
    return new AgentProcess(child, logger, spec);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get exitStatus(): ExitInfo | undefined {
    return this.exitInfo;
  }

  stderrTail(maxLines?: number): string {
    return this.stderr.tail(maxLines);
  }

  /** Close stdin, SIGTERM the group after a grace period, SIGKILL after another. */
  shutdown(timings: ShutdownTimings = DEFAULT_SHUTDOWN): Promise<ExitInfo> {
    this.shuttingDown ??= this.doShutdown(timings);
    return this.shuttingDown;
  }

  private async doShutdown(timings: ShutdownTimings): Promise<ExitInfo> {
    const pid = this.child.pid;
    if (!this.child.stdin.destroyed) this.child.stdin.end();
    if (pid === undefined) return this.exited;
    const gone = await Promise.race([this.exited.then(() => true), sleep(timings.termAfterMs).then(() => false)]);
    if (!gone) {
      this.logger.debug(`Agent ${pid} still running after stdin closed: SIGTERM to its group`);
      killGroup(pid, 'SIGTERM');
      const termed = await Promise.race([
        this.exited.then(() => true),
        sleep(timings.killAfterMs).then(() => false),
      ]);
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
    liveGroups.delete(pid);
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

function explainSpawnError(error: NodeJS.ErrnoException, spec: AgentSpawnSpec): string {
  if (error.code === 'ENOENT') {
    return `command not found: "${spec.command}" (PATH=${spec.env?.PATH ?? process.env.PATH ?? ''}; cwd ${spec.cwd})`;
  }
  if (error.code === 'EACCES') return `permission denied running "${spec.command}"`;
  return error.message;
}
