import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ResponseError } from 'vscode-jsonrpc/node';
import { ErrorCodes } from '../acp/acpClient';
import type {
  CreateTerminalRequest,
  CreateTerminalResponse,
  KillTerminalRequest,
  ReleaseTerminalRequest,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
} from '../acp/types';
import { resolveInWorkspace } from './workspacePaths';

const DEFAULT_OUTPUT_LIMIT = 1024 * 1024;

export interface ExitStatus {
  exitCode: number | null;
  signal: string | null;
}

/**
 * Keeps at most `limit` bytes of output, dropping from the beginning and never splitting
 * a UTF-8 character.
 */
export class OutputBuffer {
  private buf = Buffer.alloc(0);
  truncated = false;

  constructor(private readonly limit: number) {}

  push(data: Buffer): void {
    this.buf = this.buf.length === 0 ? Buffer.from(data) : Buffer.concat([this.buf, data]);
    if (this.buf.length > this.limit) {
      let start = this.buf.length - this.limit;
      // Skip UTF-8 continuation bytes (10xxxxxx) so the text starts on a character.
      while (start < this.buf.length && (this.buf[start]! & 0xc0) === 0x80) start++;
      this.buf = this.buf.subarray(start);
      this.truncated = true;
    }
  }

  text(): string {
    return this.buf.toString('utf8');
  }
}

export interface TerminalEvents {
  onCreate?(id: string, commandLine: string): void;
  onOutput?(id: string, data: string): void;
  onExit?(id: string, status: ExitStatus): void;
}

interface Term {
  child: ChildProcess;
  output: OutputBuffer;
  exit: Promise<ExitStatus>;
  status?: ExitStatus;
}

/** ACP `terminal/*`: commands run without a shell, in the workspace, each in its own process group. */
export class TerminalService {
  private readonly terms = new Map<string, Term>();

  constructor(
    private readonly roots: () => readonly string[],
    private readonly events: TerminalEvents = {},
  ) {}

  async create(params: CreateTerminalRequest): Promise<CreateTerminalResponse> {
    const roots = this.roots();
    const cwd = params.cwd ? resolveInWorkspace(params.cwd, roots) : roots[0] ?? process.cwd();
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    const id = `term-${randomUUID()}`;
    const output = new OutputBuffer(params.outputByteLimit ?? DEFAULT_OUTPUT_LIMIT);
    const child = spawn(params.command, params.args ?? [], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (data: Buffer) => {
      output.push(data);
      this.events.onOutput?.(id, data.toString('utf8'));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    const term: Term = {
      child,
      output,
      exit: new Promise<ExitStatus>((resolve) => {
        child.once('error', (error) => {
          onData(Buffer.from(`${error.message}\n`));
          resolve({ exitCode: 127, signal: null });
        });
        child.once('close', (code, signal) => resolve({ exitCode: code, signal }));
      }).then((status) => {
        term.status = status;
        this.events.onExit?.(id, status);
        return status;
      }),
    };
    this.terms.set(id, term);
    this.events.onCreate?.(id, [params.command, ...(params.args ?? [])].join(' '));
    return { terminalId: id };
  }

  async output(params: TerminalOutputRequest): Promise<TerminalOutputResponse> {
    const t = this.get(params.terminalId);
    return {
      output: t.output.text(),
      truncated: t.output.truncated,
      ...(t.status ? { exitStatus: t.status } : {}),
    };
  }

  async waitForExit(params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse> {
    return this.get(params.terminalId).exit;
  }

  async kill(params: KillTerminalRequest): Promise<Record<string, never>> {
    this.signal(this.get(params.terminalId));
    return {};
  }

  async release(params: ReleaseTerminalRequest): Promise<Record<string, never>> {
    const t = this.get(params.terminalId);
    this.signal(t);
    this.terms.delete(params.terminalId);
    return {};
  }

  /** Kills every live command; used when the agent goes away. */
  disposeAll(): void {
    for (const t of this.terms.values()) this.signal(t);
    this.terms.clear();
  }

  private signal(t: Term): void {
    if (t.status || t.child.pid === undefined) return;
    try {
      process.kill(-t.child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }

  private get(id: string): Term {
    const t = this.terms.get(id);
    if (!t) throw new ResponseError(ErrorCodes.ResourceNotFound, `Unknown terminal ${id}`);
    return t;
  }
}
