/**
 * One ACP agent process and the sessions it serves. ACP lets a client open several sessions on one
 * connection, so the editor shares a process between the tabs that run the same agent in the same folder
 * (`AgentStartOptions.shareProcess`): requests from the agent are routed by their `sessionId` to the
 * session (and its host services) that owns it, updates likewise, and the process ends when the last
 * session lets go. A request naming a session this connection never opened is refused (permission:
 * `cancelled`; files and terminals: an error) — unless the connection serves exactly one session, which
 * then answers it as before (its own dialog, its own workspace checks).
 */
import { ResponseError } from 'vscode-jsonrpc/node';
import type { ExitInfo } from '../core/agentProcess';
import { spawnSpecOf, type AgentConfig } from '../session/agentConfig';
import type { QuestionRecord } from '../session/questionRecord';
import type { AgentStartOptions } from '../session/sessionHost';
import { AcpClient, type AcpClientHandlers, type AcpClientOptions } from './acpClient';
import { ErrorCodes } from './acpErrors';
import { fileHandlers, terminalHandlers, type OnRefused } from './hostHandlers';
import { QUESTION_METHODS } from './questions';
import { connectRemote, isRemoteAcp, remoteStartFailure } from './remoteAcp';
import type { ClientCapabilities, RequestPermissionRequest, RequestPermissionResponse, SessionNotification } from './types';

/** What one session lends the connection: its permission handler, update sink and host services. */
export interface ConnectionMember {
  options: AgentStartOptions;
  permission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  update(n: SessionNotification): void;
  /** A request of this session's agent the host refused: shown and logged, not only answered. */
  refused?: OnRefused;
  /** The person answered (or cancelled) a question of this session's agent. */
  asked?(record: QuestionRecord): void;
}

type ClientStartOptions = Pick<
  AgentStartOptions,
  'logger' | 'cwd' | 'env' | 'sandbox' | 'requestTimeoutMs' | 'initializeTimeoutMs' | 'maxLineBytes' | 'writeStallMs' | 'frameTap' | 'apiKey' | 'onKeyRefused'
>;

function clientOptions(options: ClientStartOptions, handlers: AcpClientHandlers): AcpClientOptions {
  return {
    logger: options.logger,
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.initializeTimeoutMs ? { initializeTimeoutMs: options.initializeTimeoutMs } : {}),
    ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
    ...(options.writeStallMs !== undefined ? { writeStallMs: options.writeStallMs } : {}),
    ...(options.frameTap ? { frameTap: options.frameTap } : {}),
    handlers,
  };
}

/** Spawns the configured agent as an ACP client with `handlers` (the options' logger, limits and tap). */
export function spawnClient(config: AgentConfig, options: ClientStartOptions, handlers: AcpClientHandlers): AcpClient {
  return AcpClient.spawn(spawnSpecOf(config, options.cwd, options.env, options.sandbox), clientOptions(options, handlers));
}

/** The configured agent as an ACP client: over the transport its `url` names (remote), else a spawned process's stdio. */
export async function openClient(config: AgentConfig, options: ClientStartOptions, handlers: AcpClientHandlers): Promise<AcpClient> {
  if (!isRemoteAcp(config)) return spawnClient(config, options, handlers);
  return new AcpClient(await connectRemote(config, options), clientOptions(options, handlers));
}

/** `initialize`; a start that fails shuts the client down and says why (a remote transport's refused token, say). */
export async function initialized(config: AgentConfig, options: ClientStartOptions, client: AcpClient, capabilities: ClientCapabilities): Promise<AcpClient> {
  try {
    await client.initialize(capabilities);
    return client;
  } catch (error) {
    await client.shutdown();
    throw isRemoteAcp(config) ? remoteStartFailure(config, options, client.transport, error) : error;
  }
}

/** Updates for a session id nobody has claimed yet (a load's replay, an update before session/new answers). */
const MAX_EARLY = 10_000;

export class AcpConnection {
  private static readonly pool = new Map<string, Promise<AcpConnection>>();
  private readonly members = new Set<ConnectionMember>();
  private readonly bySession = new Map<string, ConnectionMember>();
  private readonly early = new Map<string, SessionNotification[]>();
  private earlyCount = 0;
  /** This connection's place in the pool, given up when the last session leaves. */
  private release: (() => void) | undefined;
  readonly client: AcpClient;

  private constructor(options: AgentStartOptions, client: (handlers: AcpClientHandlers) => AcpClient) {
    const route = (sessionId: string | undefined) => this.route(sessionId);
    const refuse = (sessionId: string | undefined): never => {
      throw new ResponseError(ErrorCodes.InvalidParams, `Unknown session ${String(sessionId)}: this client did not open it`);
    };
    const files = (sessionId: string) => {
      const m = route(sessionId);
      const f = m?.options.files;
      return f ? fileHandlers(f, m.refused) : refuse(sessionId);
    };
    const terms = (sessionId: string) => {
      const m = route(sessionId);
      const t = m?.options.terminals;
      return t ? terminalHandlers(t, m.refused) : refuse(sessionId);
    };
    const handlers: AcpClientHandlers = {
      requestPermission: async (params, signal) => {
        const m = route(params.sessionId);
        if (!m) {
          options.logger.warn(`Permission request for unknown session ${params.sessionId}: answered cancelled`);
          return { outcome: { outcome: 'cancelled' } };
        }
        return m.permission(params, signal);
      },
      ...(options.files ? { readTextFile: (p) => files(p.sessionId).readTextFile!(p), writeTextFile: (p) => files(p.sessionId).writeTextFile!(p) } : {}),
      ...(options.terminals
        ? {
            terminal: {
              create: (p) => terms(p.sessionId).create(p),
              output: (p) => terms(p.sessionId).output(p),
              waitForExit: (p) => terms(p.sessionId).waitForExit(p),
              kill: (p) => terms(p.sessionId).kill(p),
              release: (p) => terms(p.sessionId).release(p),
            },
          }
        : {}),
      // Served by the asking session's services; each question and its answer is recorded in its transcript.
      extRequests: Object.fromEntries(
        Object.entries(QUESTION_METHODS).map(([method, serve]) => [
          method,
          async (params: unknown, signal: AbortSignal) => {
            const sessionId = (params as { sessionId?: string } | null)?.sessionId;
            const m = route(sessionId);
            if (!m) return refuse(sessionId);
            const { result, record } = await serve(m.options, params, signal);
            m.asked?.(record);
            return result;
          },
        ]),
      ),
    };
    this.client = client(handlers);
    this.client.onSessionUpdate((n) => {
      const m = this.bySession.get(n.sessionId);
      if (m) return m.update(n);
      // Held only while a session is being opened (its id may not be known yet); otherwise it is nobody's.
      const opening = this.members.size > new Set(this.bySession.values()).size;
      if (!opening || this.earlyCount >= MAX_EARLY) return options.logger.debug(`Update for unknown session ${n.sessionId} ignored`);
      this.earlyCount++;
      const list = this.early.get(n.sessionId) ?? [];
      list.push(n);
      this.early.set(n.sessionId, list);
    });
  }

  /**
   * A connection for `config` in `options.cwd`: a new process, or — with `shareProcess` — the one already
   * serving the same agent command, arguments, environment and folder. `capabilities` are what the first
   * session's services offer (every start of one editor offers the same). A remote agent gets a connection
   * of its own per session: there is no process of ours to share, and each connection is its own agent.
   */
  static async open(config: AgentConfig, options: AgentStartOptions, capabilities: ClientCapabilities): Promise<AcpConnection> {
    if (!options.shareProcess || isRemoteAcp(config)) return AcpConnection.spawn(config, options, capabilities);
    const key = JSON.stringify([config.command, config.args ?? [], config.env ?? {}, options.env ?? {}, config.cwd ?? options.cwd, config.inheritEnv !== false]);
    let pending = AcpConnection.pool.get(key);
    if (!pending) {
      pending = AcpConnection.spawn(config, options, capabilities);
      AcpConnection.pool.set(key, pending);
      const forget = () => {
        if (AcpConnection.pool.get(key) === pending) AcpConnection.pool.delete(key);
      };
      pending.then((c) => {
        c.release = forget;
        c.client.onExit(forget);
      }, forget);
    }
    return pending;
  }

  private static async spawn(config: AgentConfig, options: AgentStartOptions, capabilities: ClientCapabilities): Promise<AcpConnection> {
    const transport = isRemoteAcp(config) ? await connectRemote(config, options) : undefined;
    const connection = new AcpConnection(options, (handlers) => (transport ? new AcpClient(transport, clientOptions(options, handlers)) : spawnClient(config, options, handlers)));
    await initialized(config, options, connection.client, capabilities);
    return connection;
  }

  /** How many sessions this process serves. */
  get size(): number {
    return this.members.size;
  }

  join(member: ConnectionMember): void {
    this.members.add(member);
  }

  /** The member owns `sessionId` from now on; updates that came for it meanwhile are handed over (returned). */
  bind(member: ConnectionMember, sessionId: string): SessionNotification[] {
    this.bySession.set(sessionId, member);
    const early = this.early.get(sessionId) ?? [];
    this.early.delete(sessionId);
    this.earlyCount -= early.length;
    return early;
  }

  /** The member is done; the process ends with the last one (its exit), else keeps serving the others. */
  async leave(member: ConnectionMember): Promise<ExitInfo> {
    this.members.delete(member);
    for (const [id, m] of this.bySession) if (m === member) this.bySession.delete(id);
    if (this.members.size === 0) {
      this.release?.(); // no new session may join a process that is going
      return this.client.shutdown();
    }
    return { code: 0, signal: null, stderrTail: '' };
  }

  private route(sessionId: string | undefined): ConnectionMember | undefined {
    const owner = sessionId !== undefined ? this.bySession.get(sessionId) : undefined;
    if (owner) return owner;
    // One session on this process: it answers whatever the agent names (and Cancel settles it).
    return this.members.size === 1 ? [...this.members][0] : undefined;
  }
}
