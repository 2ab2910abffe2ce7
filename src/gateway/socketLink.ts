/**
 * The gateway's WebSocket path: one WebSocket bridged straight to a fresh stdio agent, without the SDK's
 * server in between (its per-message streams and promises cost three times stdio's time on a long turn). Each
 * line the agent prints is one text frame; each text frame is one line of the agent's input. What the SDK's
 * server answers itself is answered the same here: a frame that is not JSON (-32700), a batch or a non-object
 * (-32600, `id: null`), a second `initialize` (-32600), a first message other than `initialize` (close 1002).
 * A client that does not read makes the agent wait: its output is not read while the socket holds too much.
 */
import type { RawData, WebSocket } from 'ws';
import { AgentProcess, type AgentSpawnSpec } from '../core/agentProcess';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from '../core/lineSplitter';
import type { Logger } from '../core/log';
import { IdleWatch, type Link, type LinkCounts } from './agentLink';

export interface SocketLinkOptions {
  logger: Logger;
  /** Largest line the agent may send (longer ones are dropped, as over stdio everywhere). */
  maxMessageBytes: number;
  idleTimeoutMs: number;
  /** No message either way for `idleTimeoutMs`. */
  onIdle: () => void;
}

/** Past this much unsent on the socket, the agent's output is not read until the client catches up. */
export const SOCKET_HIGH_WATER_BYTES = 1024 * 1024;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

type ErrorAnswer = { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };

const answer = (id: string | number | null, code: number, message: string, data?: unknown): ErrorAnswer => ({
  jsonrpc: '2.0',
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

export class SocketLink implements Link {
  readonly started = Date.now();
  /** Settles once the agent process has exited and its process group is gone. */
  readonly ended: Promise<void>;
  readonly counts: LinkCounts = { messagesIn: 0, messagesOut: 0, bytesIn: 0, bytesOut: 0 };
  private readonly agent: AgentProcess;
  private readonly idle: IdleWatch;
  private initialized = false;
  private stopping: Promise<unknown> | undefined;

  constructor(
    spec: AgentSpawnSpec,
    private readonly ws: WebSocket,
    private readonly options: SocketLinkOptions,
  ) {
    const { logger } = options;
    this.agent = AgentProcess.spawn(spec, logger);
    this.idle = new IdleWatch(options.idleTimeoutMs, options.onIdle);
    const out = this.agent.child.stdout;
    const limit = Math.max(DEFAULT_MAX_LINE_BYTES, options.maxMessageBytes);
    const lines = new LineSplitter(
      limit,
      (line) => this.fromAgent(line),
      (bytes) => logger.warn(`The agent sent a line of ${bytes} bytes, over the ${limit}-byte limit; dropped`),
    );
    out.on('data', (data: Buffer) => {
      this.idle.touch();
      this.counts.bytesOut += data.length;
      lines.push(data);
    });
    out.on('end', () => {
      lines.end();
      this.agent.outputClosed();
    });
    ws.on('message', (data, isBinary) => this.fromClient(data, isBinary));
    ws.once('close', () => void this.stop());
    // A broken frame or socket: \`ws\` closes it (1009 for one over the limit) and says why here.
    ws.on('error', (error) => logger.debug(`Gateway WebSocket: ${error.message}`));
    this.ended = this.agent.exited.then(async (exit) => {
      this.idle.stop();
      // The client is told the agent is gone, and how (1011 when it failed); a close reason holds 123 bytes at most.
      let reason = `the agent ended (${this.exit})`;
      while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
      ws.close(exit.code === 0 ? 1000 : 1011, reason);
      await this.stop();
      if (exit.spawnError) logger.error(`The agent could not be started: ${exit.spawnError}`);
    });
  }

  get pid(): number | undefined {
    return this.agent.pid;
  }

  get exit(): string | undefined {
    const e = this.agent.exitStatus;
    return e ? (e.spawnError ?? (e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`)) : undefined;
  }

  /** Stops the agent: stdin closed, SIGTERM to its group, SIGKILL if it lingers (once; later calls wait for the same). */
  stop(): Promise<unknown> {
    this.stopping ??= this.agent.shutdown();
    return this.stopping;
  }

  /**
   * One line of the agent's goes out as one frame, as it is. A line between `{` and `}` is sent unparsed (parsing
   * each would cost about a tenth of stdio's time on a long turn; the client parses it anyway); any other line is
   * parsed, and dropped and said unless it is a JSON object (a banner, a log line, an array).
   */
  private fromAgent(line: string): void {
    if ((line.charCodeAt(0) !== OPEN_BRACE || line.charCodeAt(line.length - 1) !== CLOSE_BRACE) && !isJsonObject(line)) {
      this.options.logger.warn(`The agent sent a line that is not a JSON-RPC message; dropped: ${line.slice(0, 200)}`);
      return;
    }
    this.counts.messagesOut++;
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount < SOCKET_HIGH_WATER_BYTES) {
      this.ws.send(line);
      return;
    }
    // The client is behind: the agent's output waits in its pipe until this frame has left for the client.
    const out = this.agent.child.stdout;
    out.pause();
    this.ws.send(line, () => {
      if (out.isPaused() && this.ws.bufferedAmount < SOCKET_HIGH_WATER_BYTES) out.resume();
    });
  }

  /** One frame of the client's, checked as the SDK's server checks it, then one line of the agent's input. */
  private fromClient(data: RawData, isBinary: boolean): void {
    this.idle.touch();
    if (isBinary) {
      this.options.logger.warn('Ignoring non-text ACP WebSocket frame');
      return;
    }
    const text = data.toString();
    const message = this.admit(text);
    if (!message || this.agent.inputGone) return;
    this.counts.messagesIn++;
    // Re-encoded: a frame may hold JSON over several lines, and the agent reads one message a line.
    const line = `${text.includes('\n') ? JSON.stringify(message) : text}\n`;
    this.counts.bytesIn += Buffer.byteLength(line);
    const stdin = this.agent.child.stdin;
    // An agent not reading its input makes the client wait: its frames are not read meanwhile.
    if (!stdin.write(line)) {
      this.ws.pause();
      stdin.once('drain', () => this.ws.resume());
    }
  }

  /** The frame's message for the agent, or undefined when it was answered (or the socket closed) here instead. */
  private admit(text: string): Record<string, unknown> | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.refuse(answer(null, -32700, 'Parse error'));
    }
    if (Array.isArray(value)) return this.refuse(answer(null, -32600, 'Invalid request: JSON-RPC batches are not supported'));
    if (typeof value !== 'object' || value === null) return this.refuse(answer(null, -32600, 'Invalid request', value));
    const message = value as Record<string, unknown>;
    if (!this.initialized) {
      // Before initialize, an answer has nothing to answer, and anything else is refused as the SDK's server does.
      if (typeof message.method !== 'string') return 'result' in message || 'error' in message ? undefined : this.refuse(answer(null, -32600, 'Invalid request', message));
      if (message.method !== 'initialize') return this.closeWith(1002, 'First message must be initialize');
      if (message.id === undefined || message.id === null) return this.closeWith(1002, 'Initialize request must include an ID');
      this.initialized = true;
    } else if (message.method === 'initialize' && message.id !== undefined) {
      this.options.logger.warn('Ignoring ACP WebSocket message: Initialize not allowed on existing connection');
      return this.refuse(answer(message.id as string | number | null, -32600, 'Initialize not allowed on existing connection'));
    }
    return message;
  }

  private refuse(message: ErrorAnswer): undefined {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
    return undefined;
  }

  private closeWith(code: number, reason: string): undefined {
    this.ws.close(code, reason);
    return undefined;
  }
}
