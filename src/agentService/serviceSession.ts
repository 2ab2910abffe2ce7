/**
 * An agent service (seed 003) as an AgentSession: `list_model` fills the model picker, a chat message is an
 * `exec_chat` task, the selection commands are `exec_*` tasks (selectionTasks), each answer streams into the
 * session model as the agent's message.
 *
 * The service's rules, honoured and said: one task per connection — a task sent while another runs cancels
 * it (the transcript says which one, and why); it has no cancel command, so Stop ends the turn here and opens
 * a fresh connection (the service drops a closed connection's task); "cancelled" from the service is a stopped
 * turn, not a failure; a full queue is a failure that names itself (the editor offers to send it again). The
 * service keeps no conversation: each message stands alone, there is nothing to reattach, and a task cut by a
 * dropped connection is not sent again — the session ends (onExit) and the lifecycle connects again with its
 * backoff.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AgentExitedError, type ExitInfo } from '../core/agentProcess';
import { Listeners } from '../core/listeners';
import type { AgentConfig } from '../session/agentConfig';
import { AgentBusyError, type AgentExtras, type AgentHealth, type AgentSession, type AttachInfo, type PromptCapabilities } from '../session/agentSession';
import type { SelectionTaskRequest, SelectionTasks } from '../session/selectionTask';
import type { AgentStartOptions } from '../session/sessionHost';
import { boundedModel } from '../session/longText';
import { phrase } from '../session/notices';
import type { ContentPart } from '../session/sessionModel';
import { WebSocketConnectError, WebSocketTransport } from '../transport/webSocket';
import { ServiceConnection, ServiceError } from './serviceConnection';
import { taskFrame } from './serviceRequests';

/** How long `list_model` may take to answer before the start fails (ms). */
const LIST_MODEL_TIMEOUT_MS = 15_000;

/** The API key is missing: where to give it. */
export class ServiceKeyMissingError extends Error {
  constructor(agent: string) {
    super(`The agent service "${agent}" needs an API key (the editor asks for it; the CLI reads AGENT_SERVICE_API_KEY)`);
    this.name = 'ServiceKeyMissingError';
  }
}

/** Text an agent service takes: what the parts say, context inlined as fenced text. */
export function partsToText(parts: ContentPart[]): string {
  const out: string[] = [];
  for (const part of parts) {
    if (part.type === 'text' && part.text) out.push(part.text);
    else if (part.type === 'resource') {
      const r = part.resource as { uri?: string; text?: string } | undefined;
      if (r?.text !== undefined) out.push(`${r.uri ?? ''}\n\`\`\`\n${r.text}\n\`\`\``);
    } else if (part.type === 'resource_link' && typeof part.uri === 'string') out.push(part.uri);
  }
  return out.join('\n\n');
}

interface Running {
  id: string;
  label: string;
  connection: ServiceConnection;
  /** Puts the pieces not yet in the transcript there (before the turn ends). */
  flush(): void;
}

export class ServiceSession implements AgentSession {
  readonly sessionId = `service-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  readonly model = boundedModel(this.sessionId);
  readonly promptCapabilities: PromptCapabilities = { image: false, embeddedContext: false };
  readonly attach: AttachInfo = { how: 'new' };
  /** One connection per session: a new chat opens its own (up to the service's five per key). */
  readonly sessionsShareProcess = false;
  readonly statelessTasks = true;
  readonly selectionTasks: SelectionTasks;
  readonly agentInfo: AgentSession['agentInfo'];
  private readonly exits = new Listeners<ExitInfo>();
  private readonly activity = new Listeners<boolean>();
  private running: Running | undefined;
  /** The connection in use; a Stop swaps it for a fresh one (`ready` settles when it is open). */
  private connection: ServiceConnection;
  private ready: Promise<ServiceConnection>;
  private stopping = false;
  /** Connections a Stop let go of: their close is ours, not a drop. */
  private readonly retired = new WeakSet<ServiceConnection>();
  private exited: ExitInfo | undefined;

  private constructor(
    private readonly config: AgentConfig,
    private readonly options: AgentStartOptions,
    first: ServiceConnection,
    models: string[],
  ) {
    this.connection = first;
    this.ready = Promise.resolve(first);
    this.watch(first);
    this.agentInfo = { name: config.name, title: config.name, protocol: 'agent-service' };
    const wanted = config.defaults?.model;
    this.model.setModels({ currentModelId: wanted && models.includes(wanted) ? wanted : models[0]!, availableModels: models.map((m) => ({ modelId: m, name: m })) });
    this.selectionTasks = { run: (request, display) => this.runTask(taskFrame(request), display, labelOf(display)), newerCancelsRunning: true };
  }

  static async start(config: AgentConfig, options: AgentStartOptions): Promise<ServiceSession> {
    let connection: ServiceConnection;
    let listed: Record<string, unknown>;
    try {
      connection = await ServiceSession.connect(config, options);
      listed = await within(connection.request('list_model', {}), LIST_MODEL_TIMEOUT_MS, 'the agent service did not answer list_model').catch(async (error: Error) => {
        await connection.transport.close();
        throw error;
      });
    } catch (error) {
      const refused = (error instanceof ServiceError && error.kind === 'refused_key') || (error instanceof WebSocketConnectError && error.kind === 'unauthorized');
      if (error instanceof WebSocketConnectError && error.kind === 'untrusted_certificate' && error.fingerprint) options.onUntrustedCertificate?.(error.fingerprint);
      if (refused) {
        options.onKeyRefused?.();
        throw error instanceof ServiceError ? error : new ServiceError('refused_key', `the agent service refused the API key (${(error as Error).message})`);
      }
      throw error;
    }
    const models = Array.isArray(listed.models) ? listed.models.filter((m): m is string => typeof m === 'string' && m !== '') : [];
    if (!models.length) {
      await connection.transport.close();
      throw new Error('The agent service offers no models (list_model answered an empty list)');
    }
    options.logger.info(`Agent service ${config.url}: models ${models.join(', ')}`);
    return new ServiceSession(config, options, connection, models);
  }

  private static async connect(config: AgentConfig, options: AgentStartOptions): Promise<ServiceConnection> {
    if (!options.apiKey) throw new ServiceKeyMissingError(config.name);
    const ca = config.tls?.ca ? readFileSync(path.resolve(options.cwd, config.tls.ca), 'utf8') : undefined;
    const transport = await WebSocketTransport.connect(config.url ?? config.command, options.logger, {
      headers: { ...(options.headers ?? {}), 'X-Api-Key': options.apiKey },
      ...(ca ? { ca } : {}),
      ...(config.tls?.fingerprint ? { fingerprint: config.tls.fingerprint } : {}),
      ...(options.writeStallMs !== undefined ? { writeStallMs: options.writeStallMs } : {}),
    });
    return new ServiceConnection(transport, {
      logger: options.logger,
      ...(options.ideTools ? { ide: options.ideTools.tools } : {}),
      ...(options.frameTap ? { frameTap: options.frameTap } : {}),
    });
  }

  /** A dropped connection ends the session (the lifecycle connects again); a Stop's own close does not. */
  private watch(connection: ServiceConnection): void {
    void connection.transport.closed.then((reason) => {
      if (this.retired.has(connection) || this.stopping) return;
      this.exited = reason;
      // Said here, as a remote ACP agent's is: the chat leaves an agent's exit to the session's own notice.
      this.model.notice('error', phrase('connectionLost'), phrase('serviceClosed', reason.disconnected ?? phrase('codeN', String(reason.code))));
      this.exits.fire(reason);
    });
  }

  extras(): AgentExtras | undefined {
    return undefined;
  }

  prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }> {
    const msg = partsToText(parts);
    return this.runTask({ cmd: 'exec_chat', fields: { msg } }, display ?? parts, 'chat message');
  }

  /** Runs one task as a turn; a task running on the connection is cancelled first, and the transcript says so. */
  private async runTask(frame: { cmd: string; fields: Record<string, unknown> }, display: ContentPart[], label: string): Promise<{ stopReason: string }> {
    if (this.exited) throw new ServiceError('dropped', `the connection to the agent service dropped (${this.exited.disconnected ?? this.exited.code})`);
    const before = this.running;
    if (before) {
      this.running = undefined;
      before.flush();
      before.connection.forget(before.id, `cancelled: ${label} was sent, and the agent service runs one task per connection`);
      // Not 'cancelled': that would add a "Stopped" line, and nobody pressed Stop; the notice says what happened.
      this.model.endTurn('superseded');
      this.model.notice('info', phrase('previousCancelled'), phrase('previousCancelledDetail', label, before.label));
    }
    const connection = await this.ready;
    this.model.beginTurn();
    const stamp = Date.now();
    for (const part of display) this.model.appendChunk('user', part, `user-${stamp}`);
    const messageId = `agent-${stamp}`;
    // The pieces of one read reach the transcript as one chunk, as ACP's do (src/acp/coalesce.ts): one event, not one per frame.
    let unshown = '';
    const flush = () => {
      if (!unshown) return;
      const text = unshown;
      unshown = '';
      this.model.appendChunk('agent', { type: 'text', text }, messageId);
    };
    const task = connection.task(frame.cmd, { ...frame.fields, model: this.model.models?.currentModelId, stream: true }, (piece) => {
      this.activity.fire(false);
      if (!unshown) queueMicrotask(flush);
      unshown += piece;
    });
    const running: Running = { id: task.id, label, connection, flush };
    this.running = running;
    try {
      const reply = await task.done;
      flush();
      if (reply.gaps.length) this.model.notice('warning', phrase('partsMissing'), phrase('partsMissingDetail', reply.gaps.join(', ')));
      if (this.running === running) this.model.endTurn('end_turn');
      return { stopReason: 'end_turn' };
    } catch (error) {
      flush();
      // A task cancelled here (Stop, or a newer task) has had its turn ended already.
      const mine = this.running === running;
      if (error instanceof ServiceError && error.kind === 'cancelled') {
        if (mine) this.model.endTurn('cancelled');
        return { stopReason: 'cancelled' };
      }
      if (mine) this.model.endTurn(undefined, (error as Error).message);
      if (error instanceof ServiceError && error.kind === 'queue_full') throw new AgentBusyError(`the agent service's queue is full (${error.message})`);
      // A dropped connection is the agent going away mid-turn, as a crashed process is.
      if (error instanceof ServiceError && error.kind === 'dropped') throw new AgentExitedError({ code: null, signal: null, disconnected: error.message, stderrTail: '' });
      throw error;
    } finally {
      if (this.running === running) this.running = undefined;
    }
  }

  /** Ends the running turn here and swaps the connection: the service drops the closed one's task. */
  async cancel(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.model.requestCancel();
    this.running = undefined;
    running.flush();
    running.connection.forget(running.id, 'cancelled');
    this.model.endTurn('cancelled');
    const old = running.connection;
    this.retired.add(old);
    this.ready = ServiceSession.connect(this.config, this.options).then(
      (fresh) => {
        this.connection = fresh;
        this.watch(fresh);
        return fresh;
      },
      (error: Error) => {
        // No fresh connection: the session is over, as after a drop.
        this.exited = { code: null, signal: null, disconnected: `reconnecting after Stop failed: ${error.message}`, stderrTail: '' };
        this.exits.fire(this.exited);
        throw error;
      },
    );
    this.ready.catch(() => undefined);
    void old.transport.close().catch(() => undefined);
  }

  async setMode(modeId: string): Promise<void> {
    throw new Error(`The agent service has no modes (asked for "${modeId}")`);
  }

  async setConfigOption(configId: string): Promise<void> {
    throw new Error(`The agent service has no options (asked for "${configId}")`);
  }

  /** Models are chosen per task: the next `exec_*` carries it. */
  async setModel(modelId: string): Promise<void> {
    const models = this.model.models;
    if (!models?.availableModels.some((m) => m.modelId === modelId)) throw new Error(`The agent service offers no model "${modelId}"`);
    this.model.setModels({ ...models, currentModelId: modelId });
  }

  async shutdown(): Promise<ExitInfo> {
    this.stopping = true;
    const running = this.running;
    if (running) {
      this.running = undefined;
      running.flush();
      running.connection.forget(running.id, 'cancelled');
      if (this.model.turn !== 'idle') this.model.endTurn('cancelled');
    }
    const connection = await this.ready.catch(() => this.connection);
    const reason = await connection.transport.close();
    return this.exited ?? reason;
  }

  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.exits.add(listener);
  }

  onHealth(_listener: (health: AgentHealth, detail: string) => void): () => void {
    return () => undefined;
  }

  onActivity(listener: (waitingOnHost: boolean) => void): () => void {
    return this.activity.add(listener);
  }
}

/** What the transcript calls a task: its label (the display's first text), else "task". */
function labelOf(display: ContentPart[]): string {
  const text = display.find((p) => p.type === 'text')?.text?.trim();
  return text ? `"${text.length > 60 ? `${text.slice(0, 57)}…` : text}"` : 'task';
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
}

export type { SelectionTaskRequest };
