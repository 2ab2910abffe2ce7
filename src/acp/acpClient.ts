import { createMessageConnection, ResponseError, Trace, type Message, type MessageConnection } from 'vscode-jsonrpc/node';
import { AgentExitedError, describeExit, type AgentSpawnSpec, type ExitInfo } from '../core/agentProcess';
import { HealthTracker, Latch, Listeners, type Health } from '../core/listeners';
import { levelEvent, logText, traces, truncate, type Logger } from '../core/log';
import { DecodedMessageReader, FramingError, peekFields, SendingMessageWriter, type DroppedLine } from '../core/ndjson';
import { StdioTransport, stdioProcess } from '../transport/stdio';
import type { MessageTransport } from '../transport/transport';
import { acpChunkCoalescer } from './coalesce';
import { clearError, ErrorCodes, ProtocolVersionError, RequestTimeoutError } from './acpErrors';
import type {
  AgentCapabilities,
  AuthMethod,
  ClientCapabilities,
  ContentBlock,
  CreateTerminalRequest,
  CreateTerminalResponse,
  InitializeRequest,
  InitializeResponse,
  KillTerminalRequest,
  ListSessionsResponse,
  LoadSessionResponse,
  McpServer,
  NewSessionResponse,
  PromptResponse,
  ReadTextFileRequest,
  ReadTextFileResponse,
  ReleaseTerminalRequest,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
  WriteTextFileRequest,
  WriteTextFileResponse,
} from './types';

/** The ACP version this client speaks, and the oldest it accepts from an agent. */
export const ACP_PROTOCOL_VERSION = 1;
export const ACP_MIN_PROTOCOL_VERSION = 1;

/** Agent→client requests served at once (permissions, files, terminals, questions); more are refused. */
export const MAX_AGENT_REQUESTS = 256;

/** What the client does when the agent asks something of it. Each may throw a ResponseError. */
export interface AcpClientHandlers {
  requestPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  readTextFile?(params: ReadTextFileRequest): Promise<ReadTextFileResponse>;
  writeTextFile?(params: WriteTextFileRequest): Promise<WriteTextFileResponse>;
  terminal?: {
    create(params: CreateTerminalRequest): Promise<CreateTerminalResponse>;
    output(params: TerminalOutputRequest): Promise<TerminalOutputResponse>;
    waitForExit(params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse>;
    kill(params: KillTerminalRequest): Promise<Record<string, never>>;
    release(params: ReleaseTerminalRequest): Promise<Record<string, never>>;
  };
  /** Extension requests (`_vendor/method`) the host understands, e.g. `_agentao.cn/ask_user`. */
  extRequests?: Record<string, (params: unknown, signal: AbortSignal) => Promise<unknown>>;
}

export interface AcpClientOptions {
  logger: Logger;
  handlers: AcpClientHandlers;
  clientInfo?: { name: string; version: string; title?: string };
  requestTimeoutMs?: number;
  initializeTimeoutMs?: number;
  /** `spawn`'s stdio transport: the longest line read. */
  maxLineBytes?: number;
  /** `spawn`'s stdio transport: how long a write may wait for the agent to read its input before it is stopped (ms; 0 = never). */
  writeStallMs?: number;
  /** Sees every frame in both directions (protocol traces, tests). */
  frameTap?: (direction: 'in' | 'out', frame: unknown, text?: string) => void;
}

export type { Health };

type Pending = { method: string; reject: (error: Error) => void };

/** Pending agent→client requests that `session/cancel` must answer first. */
type Interruptible = {
  sessionId: string | undefined;
  abort: AbortController;
  /** The answer that means "cancelled" for this method. */
  cancelled: unknown;
  settle: (value: unknown) => void;
};

const PERMISSION_CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };
/** How a cancelled turn answers the other interruptible requests: elicitation as MCP does, the rest flat. */
const cancelledAnswer = (method: string): unknown => (method === 'elicitation/create' ? { action: 'cancel' } : { outcome: 'cancelled' });

/**
 * The client side of one ACP connection to one agent over a message transport: dispatch by shape, id
 * matching, timeouts, tracing, and failing everything pending when the transport closes.
 */
export class AcpClient {
  readonly connection: MessageConnection;
  private readonly pending = new Set<Pending>();
  private readonly interruptible = new Set<Interruptible>();
  private servingRequests = 0;
  /** Sessions opened (new, load, resume) on this connection. */
  private readonly sessions = new Set<string>();
  private readonly updates = new Listeners<SessionNotification>();
  private readonly exit = new Latch<ExitInfo>();
  private readonly health: HealthTracker;
  private readonly activity = new Listeners<boolean>();
  private init: InitializeResponse | undefined;
  private readonly writer: SendingMessageWriter;

  constructor(
    readonly transport: MessageTransport,
    private readonly options: AcpClientOptions,
  ) {
    const logger = options.logger;
    this.health = new HealthTracker((health, detail) => (health === 'unresponsive' ? logger.warn(`Agent is not answering: ${detail}`) : logger.info(`Agent is answering again: ${detail}`)));
    const tap = options.frameTap;
    const reader = new DecodedMessageReader((receiver) => transport.listen(receiver), {
      onRead: () => this.activity.fire(this.servingRequests > 0),
      ...(tap ? { tap: (m, text) => tap('in', m, text) } : {}),
      coalesce: acpChunkCoalescer,
      onDropped: (line) => this.answerDropped(line),
    });
    const writer = new SendingMessageWriter((m) => transport.write(m), tap ? (m) => tap('out', m) : undefined);
    this.writer = writer;
    this.connection = createMessageConnection(reader, writer, {
      error: (m) => logger.error(m),
      warn: (m) => logger.warn(m),
      info: (m) => logger.info(m),
      log: (m) => logger.debug(m),
    });
    reader.onError((error) => {
      if (error instanceof FramingError) {
        logger.error(`${error.message}${error.line ? `: ${truncate(error.line, 300)}` : ''} (dropped; connection continues)`);
      } else {
        logger.error(`Agent stdout: ${error.message}`);
      }
    });
    // Tracing makes vscode-jsonrpc stringify every message's params: on only while the log shows traces
    // (a LogOutputChannel says when its level changes).
    const tracer = {
      log: (message: unknown, data?: string) => {
        // Params carry secrets (the IDE tools' token in session/new): redacted before they are cut and shown.
        if (typeof message === 'string' && traces(logger)) logger.trace(`rpc ${logText(message, 400)}${data ? ` ${logText(data, 400)}` : ''}`);
      },
    };
    const retrace = () => void this.connection.trace(traces(logger) ? Trace.Compact : Trace.Off, tracer).catch(() => undefined);
    retrace();
    const levels = levelEvent(logger);
    if (levels) {
      const sub = levels(retrace);
      void transport.closed.then(() => sub.dispose());
    }
    this.connection.onUnhandledNotification((n) => logger.debug(`Ignored notification ${n.method}`));
    this.registerHandlers();
    this.connection.listen();
    void transport.closed.then((exit) => this.handleExit(exit));
  }

  /** A client over a new agent process's stdio. */
  static spawn(spec: AgentSpawnSpec, options: AcpClientOptions): AcpClient {
    const { maxLineBytes, writeStallMs } = options;
    return new AcpClient(StdioTransport.spawn(spec, options.logger, { ...(maxLineBytes ? { maxLineBytes } : {}), ...(writeStallMs !== undefined ? { writeStallMs } : {}) }), options);
  }

  /** The agent's process when the transport is its stdio (tests, the compatibility check); throws otherwise. */
  get process(): StdioTransport['process'] {
    return stdioProcess(this.transport);
  }

  get initializeResult(): InitializeResponse | undefined {
    return this.init;
  }

  get agentCapabilities(): AgentCapabilities {
    return this.init?.agentCapabilities ?? {};
  }

  get authMethods(): AuthMethod[] {
    return this.init?.authMethods ?? [];
  }

  get exitInfo(): ExitInfo | undefined {
    return this.exit.value;
  }

  get currentHealth(): Health {
    return this.health.current;
  }

  onSessionUpdate(listener: (n: SessionNotification) => void): () => void {
    return this.updates.add(listener);
  }

  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.exit.add(listener);
  }

  onHealth(listener: (health: Health, detail: string) => void): () => void {
    return this.health.add(listener);
  }

  /** See AgentSession.onActivity: output from the agent, and the host starting or finishing an answer to it. */
  onActivity(listener: (waitingOnHost: boolean) => void): () => void {
    return this.activity.add(listener);
  }

  /** `initialize`, with honest capabilities and version negotiation. */
  async initialize(capabilities: ClientCapabilities): Promise<InitializeResponse> {
    const params: InitializeRequest = {
      protocolVersion: ACP_PROTOCOL_VERSION,
      clientCapabilities: capabilities,
      clientInfo: this.options.clientInfo ?? { name: 'agent-host', version: '0.1.0', title: 'Atrium' },
    };
    const result = await this.request<InitializeResponse>('initialize', params, this.options.initializeTimeoutMs ?? 60_000);
    const v = result?.protocolVersion;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < ACP_MIN_PROTOCOL_VERSION || v > ACP_PROTOCOL_VERSION) {
      throw new ProtocolVersionError(v, { min: ACP_MIN_PROTOCOL_VERSION, max: ACP_PROTOCOL_VERSION });
    }
    this.init = result;
    return result;
  }

  authenticate(methodId: string): Promise<unknown> {
    return this.request('authenticate', { methodId }, 0);
  }

  async newSession(cwd: string, mcpServers: McpServer[] = []): Promise<NewSessionResponse> {
    const created = await this.request<NewSessionResponse>('session/new', { cwd, mcpServers });
    this.sessions.add(created.sessionId);
    return created;
  }

  async loadSession(sessionId: string, cwd: string, mcpServers: McpServer[] = []): Promise<LoadSessionResponse> {
    this.require(this.agentCapabilities.loadSession === true, 'session/load', 'loadSession');
    this.sessions.add(sessionId);
    // The agent replays history before it answers: no timeout.
    return this.request('session/load', { sessionId, cwd, mcpServers }, 0);
  }

  async resumeSession(sessionId: string, cwd: string, mcpServers: McpServer[] = []): Promise<unknown> {
    this.require(!!this.agentCapabilities.sessionCapabilities?.resume, 'session/resume', 'sessionCapabilities.resume');
    this.sessions.add(sessionId);
    return this.request('session/resume', { sessionId, cwd, mcpServers });
  }

  /** The agent offers `session/fork` (unstable: not in the stable types' SessionCapabilities). */
  get canFork(): boolean {
    return !!(this.agentCapabilities.sessionCapabilities as { fork?: unknown } | null | undefined)?.fork;
  }

  /** `session/fork` (unstable): a new session with the conversation so far; `meta` is the agent's own (`_meta`). */
  async forkSession(sessionId: string, cwd: string, mcpServers: McpServer[] = [], meta?: Record<string, unknown>): Promise<NewSessionResponse> {
    this.require(this.canFork, 'session/fork', 'sessionCapabilities.fork');
    const forked = await this.request<NewSessionResponse>('session/fork', { sessionId, cwd, mcpServers, ...(meta ? { _meta: meta } : {}) });
    this.sessions.add(forked.sessionId);
    return forked;
  }

  listSessions(params: { cwd?: string; cursor?: string } = {}): Promise<ListSessionsResponse> {
    this.require(!!this.agentCapabilities.sessionCapabilities?.list, 'session/list', 'sessionCapabilities.list');
    return this.request('session/list', params);
  }

  deleteSession(sessionId: string): Promise<unknown> {
    this.require(!!this.agentCapabilities.sessionCapabilities?.delete, 'session/delete', 'sessionCapabilities.delete');
    return this.request('session/delete', { sessionId });
  }

  closeSession(sessionId: string): Promise<unknown> {
    this.require(!!this.agentCapabilities.sessionCapabilities?.close, 'session/close', 'sessionCapabilities.close');
    return this.request('session/close', { sessionId });
  }

  /** A prompt turn has no timeout: it ends with a stop reason, a cancel, or the agent's exit. */
  prompt(sessionId: string, prompt: ContentBlock[]): Promise<PromptResponse> {
    return this.request('session/prompt', { sessionId, prompt }, 0);
  }

  /**
   * Answers every pending permission (and other interruptible) request of the session with `cancelled`, then
   * notifies. Requests that name no session, or a session this client never opened, go too: an agent must
   * not keep a dialog alive past Stop by naming another session.
   */
  async cancel(sessionId: string): Promise<void> {
    for (const entry of [...this.interruptible]) {
      if (entry.sessionId === undefined || entry.sessionId === sessionId || !this.sessions.has(entry.sessionId)) {
        entry.abort.abort();
        entry.settle(entry.cancelled);
      }
    }
    // The answers are queued by promise callbacks; let them reach the writer before the notification.
    await new Promise((resolve) => setImmediate(resolve));
    await this.notify('session/cancel', { sessionId });
  }

  setMode(sessionId: string, modeId: string): Promise<unknown> {
    return this.request('session/set_mode', { sessionId, modeId });
  }

  setConfigOption(sessionId: string, configId: string, value: string | boolean): Promise<unknown> {
    return this.request('session/set_config_option', { sessionId, configId, value });
  }

  /** Removed from the spec, still expected by agents that advertise `models`. */
  setModel(sessionId: string, modelId: string): Promise<unknown> {
    return this.request('session/set_model', { sessionId, modelId });
  }

  async notify(method: string, params: unknown): Promise<void> {
    if (this.exit.value) throw new AgentExitedError(this.exit.value);
    try {
      await this.connection.sendNotification(method, params);
    } catch (error) {
      // Not written (the transport takes nothing more): it is closing, and its reason says why.
      if (this.transport.writable) throw error;
      throw new AgentExitedError(await this.transport.closed);
    }
  }

  /** A request with a timeout (ms; 0 = none) that fails at once if the agent exits. */
  request<R>(method: string, params: unknown, timeoutMs = this.options.requestTimeoutMs ?? 60_000): Promise<R> {
    if (this.exit.value) return Promise.reject(new AgentExitedError(this.exit.value));
    return new Promise<R>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const entry: Pending = {
        method,
        reject: (error) => {
          if (timer) clearTimeout(timer);
          this.pending.delete(entry);
          reject(error);
        },
      };
      this.pending.add(entry);
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          this.setHealth('unresponsive', `no answer to ${method} in ${timeoutMs} ms`);
          entry.reject(new RequestTimeoutError(method, timeoutMs));
        }, timeoutMs);
      }
      this.connection.sendRequest<R>(method, params).then(
        (result) => {
          if (!this.pending.has(entry)) return; // already timed out or failed on exit
          if (timer) clearTimeout(timer);
          this.pending.delete(entry);
          this.setHealth('ok', `${method} answered`);
          resolve(result);
        },
        (error: unknown) => {
          if (!this.pending.has(entry)) return;
          // Not written (the transport takes nothing more): it is closing, and its close fails this request.
          if (!this.transport.writable) return;
          this.setHealth('ok', `${method} answered`);
          entry.reject(clearError(method, error));
        },
      );
    });
  }

  /** Requests of ours still waiting for an answer, and the agent's requests still being served. */
  outstanding(): { requests: string[]; serving: number } {
    return { requests: [...this.pending].map((p) => p.method), serving: this.servingRequests };
  }

  /** Graceful stop: the transport closes (over stdio: stdin closed, then SIGTERM, then SIGKILL to the process group). */
  async shutdown(): Promise<ExitInfo> {
    const exit = await this.transport.close();
    this.handleExit(exit);
    return exit;
  }

  /**
   * A line over the limit was dropped. If its ends show it answered one of our requests, that request fails
   * with the reason (never waits forever); if it was a request of the agent's, the agent is told so.
   */
  private answerDropped(line: DroppedLine): Message | undefined {
    const f = peekFields(line.head, line.tail);
    if (typeof f.id !== 'number' && typeof f.id !== 'string') return undefined;
    const message = `The agent sent a message of ${line.bytes} bytes, over the ${line.limit}-byte line limit (maxLineBytes): dropped`;
    if (typeof f.method === 'string') {
      void this.writer.write({ jsonrpc: '2.0', id: f.id, error: { code: ErrorCodes.InvalidRequest, message } } as Message).catch(() => undefined);
      return undefined;
    }
    return { jsonrpc: '2.0', id: f.id, error: { code: ErrorCodes.InternalError, message } } as Message;
  }

  private require(ok: boolean, method: string, capability: string): void {
    if (!ok) throw new Error(`The agent does not support ${method} (capability ${capability} not advertised)`);
  }

  private setHealth(health: Health, detail: string): void {
    this.health.set(health, detail);
  }

  private handleExit(exit: ExitInfo): void {
    if (this.exit.value) return;
    // 143 is SIGTERM as an exit code: the sandbox's launcher passes it on that way.
    const log = exit.code === 0 || exit.code === 143 || exit.signal === 'SIGTERM' ? this.options.logger.info : this.options.logger.error;
    log.call(this.options.logger, describeExit(exit));
    // The agent's own requests first: nobody can answer them now, so their handlers stop serving.
    for (const entry of [...this.interruptible]) {
      entry.abort.abort();
      entry.settle(entry.cancelled);
    }
    const error = new AgentExitedError(exit);
    for (const p of [...this.pending]) p.reject(error);
    this.connection.dispose();
    this.exit.fire(exit);
  }

  /**
   * Runs a handler for an agent→client request that `session/cancel` may answer early;
   * the handler sees an AbortSignal and its late result is dropped.
   */
  private interruptibleCall<T>(sessionId: string | undefined, cancelled: T, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const abort = new AbortController();
      let done = false;
      const entry: Interruptible = {
        sessionId,
        abort,
        cancelled,
        settle: (value) => {
          if (done) return;
          done = true;
          this.interruptible.delete(entry);
          resolve(value as T);
        },
      };
      this.interruptible.add(entry);
      run(abort.signal).then(
        (value) => entry.settle(value),
        (error: unknown) => {
          if (done) return;
          done = true;
          this.interruptible.delete(entry);
          reject(error);
        },
      );
    });
  }

  private registerHandlers(): void {
    const h = this.options.handlers;
    const c = this.connection;
    // Every agent→client request counts while it is served: past the cap the agent is told, not queued.
    const onRequest = (method: string, handler: (params: never) => unknown) =>
      c.onRequest(method, async (params: never) => {
        if (this.servingRequests >= MAX_AGENT_REQUESTS) {
          this.options.logger.warn(`Agent request ${method} refused: ${this.servingRequests} of its requests are still being served`);
          throw new ResponseError(ErrorCodes.InternalError, `Too many requests in flight (at most ${MAX_AGENT_REQUESTS}); wait for the earlier ones`);
        }
        this.servingRequests++;
        this.activity.fire(true);
        try {
          return await handler(params);
        } finally {
          this.servingRequests--;
          this.activity.fire(this.servingRequests > 0);
        }
      });
    c.onNotification('session/update', (params: SessionNotification) => {
      this.updates.fire(params, (error) => this.options.logger.error(`Applying a session update failed: ${String(error)}`));
    });
    onRequest('session/request_permission', (params: RequestPermissionRequest) => this.interruptibleCall(params?.sessionId, PERMISSION_CANCELLED, (signal) => h.requestPermission(params, signal)));
    if (h.readTextFile) {
      const read = h.readTextFile.bind(h);
      onRequest('fs/read_text_file', (params: ReadTextFileRequest) => read(params));
    }
    if (h.writeTextFile) {
      const write = h.writeTextFile.bind(h);
      onRequest('fs/write_text_file', (params: WriteTextFileRequest) => write(params));
    }
    if (h.terminal) {
      const t = h.terminal;
      onRequest('terminal/create', (p: CreateTerminalRequest) => t.create(p));
      onRequest('terminal/output', (p: TerminalOutputRequest) => t.output(p));
      onRequest('terminal/wait_for_exit', (p: WaitForTerminalExitRequest) => t.waitForExit(p));
      onRequest('terminal/kill', (p: KillTerminalRequest) => t.kill(p));
      onRequest('terminal/release', (p: ReleaseTerminalRequest) => t.release(p));
    }
    for (const [method, handler] of Object.entries(h.extRequests ?? {})) {
      onRequest(method, (params: unknown) => {
        const sessionId = (params as { sessionId?: unknown } | undefined)?.sessionId;
        return this.interruptibleCall<unknown>(typeof sessionId === 'string' ? sessionId : undefined, cancelledAnswer(method), (signal) => handler(params, signal));
      });
    }
    // Anything else (e.g. qwen's `craft/drainMidTurnQueue`) falls through to vscode-jsonrpc's -32601.
  }
}

export { ResponseError };
