import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { forgetGroup, inSandbox, killGroup, type SandboxLaunch, spawnInGroup } from '../core/agentProcess';
import { truncate } from '../core/log';
import { HostRequestError, type TerminalAccess, type TerminalCreated, type TerminalEvents, type TerminalExitStatus, type TerminalOutput, type TerminalSpec } from '../session/sessionHost';
import { HARMLESS_ENV, plainValue } from './envRules';
import { resolveInWorkspace } from './workspacePaths';

const DEFAULT_OUTPUT_LIMIT = 1024 * 1024;
/** Terminal commands one agent may have running at once. */
export const MAX_LIVE_TERMINALS = 32;
/** The most output one terminal keeps, whatever `outputByteLimit` the agent asks for. */
export const MAX_OUTPUT_LIMIT = 16 * 1024 * 1024;

/** The agent's `outputByteLimit`, or the default, capped at MAX_OUTPUT_LIMIT. */
export function outputLimit(requested: number | null | undefined): number {
  const n = typeof requested === 'number' && Number.isFinite(requested) && requested >= 0 ? Math.floor(requested) : DEFAULT_OUTPUT_LIMIT;
  return Math.min(n, MAX_OUTPUT_LIMIT);
}

/** Size of the blocks OutputBuffer keeps output in. */
const BLOCK = 64 * 1024;

/**
 * Keeps at most `limit` bytes of output (capped at MAX_OUTPUT_LIMIT), dropping from the beginning and never
 * starting inside a UTF-8 character. A ring of fixed 64 KiB blocks: each byte pushed is copied once, into the
 * last block; trimming releases whole blocks (or moves an offset into the first) from the front, so what is
 * kept is never copied again — pushing N bytes costs O(N) whatever the limit. Tiny chunks (a command writing
 * byte by byte) share blocks, so the memory held stays near the limit.
 */
export class OutputBuffer {
  readonly limit: number;
  private blocks: (Buffer | undefined)[] = [];
  /** The first kept block, the bytes of it already dropped, and the bytes used in the last block. */
  private head = 0;
  private offset = 0;
  private fill = 0;
  private size = 0;
  truncated = false;

  constructor(limit: number = DEFAULT_OUTPUT_LIMIT) {
    this.limit = outputLimit(limit);
  }

  /** Bytes kept. */
  get byteLength(): number {
    return this.size;
  }

  push(data: Buffer): void {
    if (data.length === 0) return;
    if (data.length > this.limit) {
      // Only the tail can survive: the head of this chunk is never copied.
      data = data.subarray(data.length - this.limit);
      this.truncated = true;
    }
    let pos = 0;
    while (pos < data.length) {
      let last = this.blocks[this.blocks.length - 1];
      if (!last || this.fill === BLOCK || this.blocks.length - 1 < this.head) {
        last = Buffer.allocUnsafe(BLOCK);
        this.blocks.push(last);
        this.fill = 0;
      }
      const n = Math.min(BLOCK - this.fill, data.length - pos);
      data.copy(last, this.fill, pos, pos + n);
      this.fill += n;
      pos += n;
    }
    this.size += data.length;
    if (this.size > this.limit) {
      this.drop(this.size - this.limit);
      this.truncated = true;
    }
    if (this.truncated) {
      // Skip UTF-8 continuation bytes (10xxxxxx) so the text starts on a character.
      while (this.size > 0 && (this.blocks[this.head]![this.offset]! & 0xc0) === 0x80) this.drop(1);
    }
    if (this.head > 64 && this.head * 2 > this.blocks.length) {
      this.blocks = this.blocks.slice(this.head);
      this.head = 0;
    }
  }

  text(): string {
    if (this.size === 0) return '';
    const parts: Buffer[] = [];
    const last = this.blocks.length - 1;
    for (let i = this.head; i <= last; i++) {
      parts.push(this.blocks[i]!.subarray(i === this.head ? this.offset : 0, i === last ? this.fill : BLOCK));
    }
    return Buffer.concat(parts, this.size).toString('utf8');
  }

  /** Drops `n` bytes from the front: whole blocks, then an offset into the first kept one. */
  private drop(n: number): void {
    this.size -= n;
    const last = this.blocks.length - 1;
    while (n > 0) {
      const used = (this.head === last ? this.fill : BLOCK) - this.offset;
      if (n < used) {
        this.offset += n;
        return;
      }
      n -= used;
      this.blocks[this.head] = undefined;
      this.head++;
      this.offset = 0;
    }
    if (this.size === 0) {
      this.blocks = [];
      this.head = 0;
      this.offset = 0;
      this.fill = 0;
    }
  }
}

interface Term {
  child: ChildProcess;
  output: OutputBuffer;
  exit: Promise<TerminalExitStatus>;
  status?: TerminalExitStatus;
}

export interface TerminalServiceOptions {
  /** The environment commands start from: the agent's own (same `inheritEnv` and sign-in rules). Default: the host's. */
  baseEnv?: () => Record<string, string>;
  /** Variables beyond HARMLESS_ENV the user allows the agent to set (by name). */
  allowedEnv?: () => readonly string[];
  /** Where the user allows more variables, named when some are dropped (the setting, or the CLI's flag). */
  allowedEnvSource?: string;
  /** Decides a command before it starts (the CLI's policy); throws a HostRequestError to refuse. */
  guard?: (spec: TerminalSpec) => Promise<void>;
  /** The agent's sandbox, when it runs in one: its commands run in the same (docs/sandbox.md). */
  sandbox?: () => SandboxLaunch | undefined;
}

/**
 * How to start what the agent asked for: argv as given; but a whole shell line in `command` with no `args`
 * (several real agents send `printf '%s' hi > a.txt` that way) runs through `/bin/sh -c` — never the user's
 * `$SHELL`, whose syntax (zsh's `=(…)` and glob qualifiers) permission rules do not check — or
 * `cmd.exe /d /s /c` on Windows, unless `command` names an existing file.
 */
export function commandToRun(spec: TerminalSpec, cwd: string, env: NodeJS.ProcessEnv): { command: string; args: string[]; shell: boolean } {
  const args = spec.args ?? [];
  const looksLikeLine = args.length === 0 && /[\s;&|<>()$`'"*?~]/.test(spec.command);
  if (!looksLikeLine || existsSync(path.resolve(cwd, spec.command))) return { command: spec.command, args, shell: false };
  if (process.platform === 'win32') return { command: env.ComSpec ?? 'cmd.exe', args: ['/d', '/s', '/c', spec.command], shell: true };
  return { command: '/bin/sh', args: ['-c', spec.command], shell: true };
}

/** The agent's commands: run without a shell (but see commandToRun), in the workspace, each in its own process group. */
export class TerminalService implements TerminalAccess {
  private readonly terms = new Map<string, Term>();

  constructor(
    private readonly roots: () => readonly string[],
    private readonly events: TerminalEvents = {},
    private readonly options: TerminalServiceOptions = {},
  ) {}

  /**
   * The command's environment: the agent's own, plus of what the agent asked for only HARMLESS_ENV with plain
   * values and the variables the user allowed by name. The rest is dropped; asking for a value the variable
   * already has changes nothing and is not counted as dropped.
   */
  environment(requested: TerminalSpec['env']): { env: NodeJS.ProcessEnv; dropped: string[] } {
    const env: NodeJS.ProcessEnv = { ...(this.options.baseEnv?.() ?? process.env) };
    const allowed = new Set(this.options.allowedEnv?.() ?? []);
    const dropped: string[] = [];
    for (const v of requested ?? []) {
      if (allowed.has(v.name) || (HARMLESS_ENV.test(v.name) && plainValue(v.name, v.value))) env[v.name] = v.value;
      else if (env[v.name] !== v.value && !dropped.includes(v.name)) dropped.push(v.name);
    }
    return { env, dropped };
  }

  async create(params: TerminalSpec): Promise<TerminalCreated> {
    await this.options.guard?.(params);
    const live = [...this.terms.values()].filter((t) => !t.status).length;
    if (live >= MAX_LIVE_TERMINALS) {
      throw new HostRequestError('refused', `Refused: ${live} terminal commands of this agent are still running (at most ${MAX_LIVE_TERMINALS}); release or kill one first`);
    }
    const roots = this.roots();
    const cwd = params.cwd ? resolveInWorkspace(params.cwd, roots) : (roots[0] ?? process.cwd());
    const { env, dropped } = this.environment(params.env);
    const id = `term-${randomUUID()}`;
    const output = new OutputBuffer(outputLimit(params.outputByteLimit));
    const { command, args, shell } = commandToRun(params, cwd, env);
    // A sandboxed agent's commands run in its sandbox: through the same launcher, with the same policy.
    const sandbox = this.options.sandbox?.();
    const child = sandbox
      ? spawnInGroup(...inSandbox(sandbox, command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }))
      : spawnInGroup(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (data: Buffer) => {
      output.push(data);
      this.events.onOutput?.(id, data.toString('utf8'));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    const term: Term = {
      child,
      output,
      exit: new Promise<TerminalExitStatus>((resolve) => {
        child.once('error', (error) => {
          onData(Buffer.from(`${error.message}\n`));
          resolve({ exitCode: 127, signal: null });
        });
        // Normally the pipes close right after the exit; a background child (`setsid`, `&`) may hold them for
        // hours, so the exit counts once its output has had a moment to drain.
        child.once('exit', (code, signal) => {
          const settle = () => resolve({ exitCode: code, signal });
          const grace = setTimeout(settle, 250);
          child.once('close', () => {
            clearTimeout(grace);
            settle();
          });
        });
      }).then((status) => {
        term.status = status;
        this.events.onExit?.(id, status);
        return status;
      }),
    };
    this.terms.set(id, term);
    this.events.onCreate?.(id, shell ? `${command} ${args.slice(0, -1).join(' ')} ${JSON.stringify(params.command)}` : [command, ...args].join(' '));
    if (!dropped.length) return { terminalId: id };
    // Names and command are the agent's text: odd ones quoted, a flood of names cut.
    const names = dropped.slice(0, 20).map((n) => (/^[\w.-]+$/.test(n) ? n : JSON.stringify(n)));
    const more = dropped.length > 20 ? ` and ${dropped.length - 20} more` : '';
    const source = this.options.allowedEnvSource ?? 'agentHost.terminals.allowedEnv';
    return {
      terminalId: id,
      droppedEnv: `${JSON.stringify(truncate(params.command, 120))} ran without ${names.join(', ')}${more}: an agent may set only colour, size, locale, time zone and CI variables (plain values) and those allowed in ${source}`,
    };
  }

  async output(terminalId: string): Promise<TerminalOutput> {
    const t = this.get(terminalId);
    return {
      output: t.output.text(),
      truncated: t.output.truncated,
      ...(t.status ? { exitStatus: t.status } : {}),
    };
  }

  async waitForExit(terminalId: string): Promise<TerminalExitStatus> {
    return this.get(terminalId).exit;
  }

  async kill(terminalId: string): Promise<void> {
    this.signal(this.get(terminalId));
  }

  async release(terminalId: string): Promise<void> {
    const t = this.get(terminalId);
    this.signal(t);
    this.forget(t);
    this.terms.delete(terminalId);
    this.events.onRelease?.(terminalId);
  }

  running(): string[] {
    return [...this.terms].filter(([, t]) => !t.status).map(([id]) => id);
  }

  /** Kills every live command; used when the agent goes away. */
  disposeAll(): void {
    for (const [id, t] of this.terms) {
      this.signal(t);
      this.forget(t);
      this.events.onRelease?.(id);
    }
    this.terms.clear();
  }

  /**
   * SIGKILL to the command's group and to what left it (`setsid`, daemons): even after the command itself
   * ended, what it started in the background is ended with it.
   */
  private signal(t: Term): void {
    if (t.child.pid !== undefined) killGroup(t.child.pid, 'SIGKILL');
  }

  private forget(t: Term): void {
    if (t.child.pid !== undefined) forgetGroup(t.child.pid);
  }

  private get(id: string): Term {
    const t = this.terms.get(id);
    if (!t) throw new HostRequestError('not_found', `Unknown terminal ${id}`);
    return t;
  }
}
