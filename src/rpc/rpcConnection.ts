/**
 * The connection of the pi-family RPC mode (`<agent> --mode rpc`): JSON lines with a `type`, not JSON-RPC,
 * over a message transport (a process's stdio for `spawn`). Commands `{id, type, …}` go out through its one
 * write queue; `{type:"response", id?, command, success}` come back among events and sub-protocol frames. Responses are matched by id, or — for the
 * agent's "Unknown command" answer, which carries no id — to the oldest pending command of that name.
 */
import type { Message } from 'vscode-jsonrpc/node';
import { AgentExitedError, describeExit, type AgentSpawnSpec, type ExitInfo } from '../core/agentProcess';
import { HealthTracker, Latch, Listeners, type Health } from '../core/listeners';
import { logText, traces, truncate, type Logger } from '../core/log';
import { DecodedMessageReader, FramingError, peekFields, type DroppedLine } from '../core/ndjson';
import { StdioTransport, stdioProcess } from '../transport/stdio';
import type { MessageTransport } from '../transport/transport';
import { isRecord } from './json';

/** Any frame on the wire: a plain JSON object with a string `type`. */
export type RpcFrame = { type: string; [key: string]: unknown };

export interface RpcResponse {
  type: 'response';
  id?: string;
  command: string;
  success: boolean;
  data?: unknown;
  error?: string;
  code?: string;
}

export interface RpcConnectionOptions {
  logger: Logger;
  /** Default per-command timeout (ms; 0 = none). */
  commandTimeoutMs?: number;
  /** `spawn`'s stdio transport: the longest line read. */
  maxLineBytes?: number;
  /** `spawn`'s stdio transport: how long a write may wait for the agent to read its input before it is stopped (ms; 0 = never). */
  writeStallMs?: number;
  /** Sees every frame in both directions (protocol traces, tests). */
  frameTap?: (direction: 'in' | 'out', frame: unknown) => void;
}

/** The agent answered `success: false`. */
export class RpcCommandError extends Error {
  constructor(
    readonly command: string,
    readonly response: RpcResponse,
  ) {
    super(`${command} failed: ${response.error ?? 'no reason given'}`);
    this.name = 'RpcCommandError';
  }

  /** The agent did not know the command (its id-less "Unknown command: x" answer). */
  get unknownCommand(): boolean {
    return /^Unknown command\b/i.test(this.response.error ?? '');
  }
}

export class RpcTimeoutError extends Error {
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`The agent did not answer ${command} within ${Math.round(timeoutMs / 100) / 10} s`);
    this.name = 'RpcTimeoutError';
  }
}

interface Pending {
  id: string;
  command: string;
  sentAt: number;
  resolve: (response: RpcResponse) => void;
  reject: (error: Error) => void;
}

export interface SendOptions {
  /** Overrides the default timeout (ms; 0 = none). */
  timeoutMs?: number;
}

/** A dropped line that was a response (its ends show it): a failed response in its place, so the command fails. */
function answerDropped(line: DroppedLine): Message | undefined {
  const f = peekFields(line.head, line.tail);
  if (f.type !== 'response' || typeof f.id !== 'string') return undefined;
  const error = `the agent's answer was ${line.bytes} bytes, over the ${line.limit}-byte line limit (maxLineBytes): dropped`;
  return { type: 'response', id: f.id, command: String(f.command ?? ''), success: false, error } as unknown as Message;
}

/** One agent speaking RPC mode over a message transport. */
export class RpcConnection {
  /** Pending commands in the order they were sent (oldest first: id-less replies match the oldest). */
  private readonly pending = new Map<string, Pending>();
  private readonly frames = new Listeners<RpcFrame>();
  private readonly exit = new Latch<ExitInfo>();
  private readonly health = new HealthTracker();
  private readonly output = new Listeners<void>();
  private nextId = 1;
  private readonly idPrefix = `ah${process.pid.toString(36)}-`;

  constructor(
    readonly transport: MessageTransport,
    private readonly options: RpcConnectionOptions,
  ) {
    const logger = options.logger;
    const reader = new DecodedMessageReader((receiver) => transport.listen(receiver), {
      onDropped: (line) => answerDropped(line),
      onRead: () => this.output.fire(),
    });
    reader.onError((error) => {
      if (error instanceof FramingError) {
        logger.error(`${error.message}${error.line ? `: ${truncate(error.line, 300)}` : ''} (dropped; connection continues)`);
      } else {
        logger.error(`Agent stdout: ${error.message}`);
      }
    });
    reader.listen((message) => this.onMessage(message));
    void transport.closed.then((exit) => this.handleExit(exit));
  }

  /** A connection over a new agent process's stdio. */
  static spawn(spec: AgentSpawnSpec, options: RpcConnectionOptions): RpcConnection {
    const { maxLineBytes, writeStallMs } = options;
    return new RpcConnection(StdioTransport.spawn(spec, options.logger, { ...(maxLineBytes ? { maxLineBytes } : {}), ...(writeStallMs !== undefined ? { writeStallMs } : {}) }), options);
  }

  /** The agent's process when the transport is its stdio (tests, the compatibility check); throws otherwise. */
  get process(): StdioTransport['process'] {
    return stdioProcess(this.transport);
  }

  get exitInfo(): ExitInfo | undefined {
    return this.exit.value;
  }

  /** A fresh command id (when the caller must know it before sending, e.g. to match `prompt_result`). */
  newId(): string {
    return `${this.idPrefix}${this.nextId++}`;
  }

  /** Whether the command sent with this id still waits for its answer. */
  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** Commands still waiting for an answer (for diagnostics and tests). */
  pendingCommands(): { id: string; command: string; ageMs: number }[] {
    const now = Date.now();
    return [...this.pending.values()].map((p) => ({ id: p.id, command: p.command, ageMs: now - p.sentAt }));
  }

  /** Every frame that is not the answer to a pending command: events, UI requests, host tool calls, late responses. */
  onFrame(listener: (frame: RpcFrame) => void): () => void {
    return this.frames.add(listener);
  }

  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.exit.add(listener);
  }

  /** The agent wrote to stdout (any frame, even a partial or malformed one). */
  onOutput(listener: () => void): () => void {
    return this.output.add(listener);
  }

  /** A command that times out marks the agent unresponsive until it answers again. */
  onHealth(listener: (health: Health, detail: string) => void): () => void {
    return this.health.add(listener);
  }

  /** Sends a command and resolves with the agent's response, successful or not. */
  send(command: { type: string; [key: string]: unknown }, options: SendOptions = {}): Promise<RpcResponse> {
    if (this.exit.value) return Promise.reject(new AgentExitedError(this.exit.value));
    const id = typeof command.id === 'string' && command.id ? command.id : this.newId();
    const timeoutMs = options.timeoutMs ?? this.options.commandTimeoutMs ?? 60_000;
    const logger = this.options.logger;
    return new Promise<RpcResponse>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const entry: Pending = {
        id,
        command: command.type,
        sentAt: Date.now(),
        resolve: (response) => {
          if (timer) clearTimeout(timer);
          this.pending.delete(id);
          this.health.set('ok', `${command.type} answered`);
          const ms = Date.now() - entry.sentAt;
          if (response.success) logger.debug(`rpc ← ${id} ${command.type} ok in ${ms} ms`);
          else logger.debug(`rpc ← ${id} ${command.type} failed in ${ms} ms: ${truncate(response.error ?? '', 300)}`);
          resolve(response);
        },
        reject: (error) => {
          if (timer) clearTimeout(timer);
          this.pending.delete(id);
          logger.debug(`rpc ✗ ${id} ${command.type} after ${Date.now() - entry.sentAt} ms: ${error.message.split('\n')[0]}`);
          reject(error);
        },
      };
      this.pending.set(id, entry);
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          logger.warn(`rpc ${id} ${command.type}: no answer in ${timeoutMs} ms`);
          this.health.set('unresponsive', `no answer to ${command.type} in ${timeoutMs} ms`);
          entry.reject(new RpcTimeoutError(command.type, timeoutMs));
        }, timeoutMs);
      }
      const frame = { ...command, id };
      if (traces(logger)) logger.trace(`rpc → ${id} ${command.type} ${logText(JSON.stringify(frame), 400)}`);
      this.write(frame).catch((error: Error) => {
        // Not written because the transport takes nothing more: it is closing, and its close fails the command.
        if (!this.pending.has(id) || (!this.transport.writable && !this.exit.value)) return;
        entry.reject(this.exit.value ? new AgentExitedError(this.exit.value) : error);
      });
    });
  }

  /** Sends a command; returns its `data`, or throws RpcCommandError when the agent answers `success: false`. */
  async call<T = unknown>(command: { type: string; [key: string]: unknown }, options?: SendOptions): Promise<T> {
    const response = await this.send(command, options);
    if (!response.success) throw new RpcCommandError(command.type, response);
    return response.data as T;
  }

  /** Writes one frame (a command or a sub-protocol answer) through the single writer queue. */
  write(frame: Record<string, unknown>): Promise<void> {
    if (this.exit.value) return Promise.reject(new AgentExitedError(this.exit.value));
    this.options.frameTap?.('out', frame);
    return this.transport.write(frame);
  }

  /** Graceful stop: the transport closes (over stdio: stdin closed, then SIGTERM, then SIGKILL to the process group). */
  async shutdown(): Promise<ExitInfo> {
    const exit = await this.transport.close();
    this.handleExit(exit);
    return exit;
  }

  private onMessage(message: Message): void {
    const frame: unknown = message;
    if (!isRecord(frame) || typeof frame.type !== 'string') {
      this.options.logger.error(`Agent sent a line that is not an RPC frame (dropped): ${truncate(JSON.stringify(frame), 300)}`);
      return;
    }
    this.options.frameTap?.('in', frame);
    if (frame.type === 'response' && this.matchResponse(frame as unknown as RpcResponse)) return;
    this.frames.fire(frame as RpcFrame, (error) => this.options.logger.error(`Handling a ${frame.type} frame failed: ${(error as Error).stack ?? String(error)}`));
  }

  /** True when the response settled a pending command. */
  private matchResponse(response: RpcResponse): boolean {
    const logger = this.options.logger;
    if (typeof response.id === 'string' && response.id) {
      const entry = this.pending.get(response.id);
      if (entry) {
        entry.resolve(response);
        return true;
      }
      // A second answer for an id already settled (e.g. a prompt that failed after its acknowledgement).
      logger.debug(`rpc ← late response for ${response.id} (${response.command}): ${response.success ? 'ok' : response.error}`);
      return false;
    }
    if (response.command === 'parse') {
      logger.error(`The agent could not parse a line we sent: ${response.error ?? 'no detail'}`);
      return true;
    }
    // No id: the agent's "Unknown command" answer (and handler errors of some versions). Oldest of that name wins.
    for (const entry of this.pending.values()) {
      if (entry.command === response.command) {
        logger.warn(`rpc ← id-less ${response.command} response matched to ${entry.id}: ${response.success ? 'ok' : response.error}`);
        entry.resolve(response);
        return true;
      }
    }
    logger.warn(`rpc ← unmatched ${response.command} response: ${truncate(JSON.stringify(response), 300)}`);
    return false;
  }

  private handleExit(exit: ExitInfo): void {
    if (this.exit.value) return;
    // 143 is SIGTERM as an exit code: the sandbox's launcher passes it on that way.
    const log = exit.code === 0 || exit.code === 143 || exit.signal === 'SIGTERM' ? this.options.logger.info : this.options.logger.error;
    log.call(this.options.logger, describeExit(exit));
    const error = new AgentExitedError(exit);
    for (const p of [...this.pending.values()]) p.reject(error);
    this.exit.fire(exit);
  }
}
