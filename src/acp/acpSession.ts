import { ResponseError } from 'vscode-jsonrpc/node';
import type { ExitInfo } from '../core/agentProcess';
import { cutByExit, exitPhrase, type Phrase, phrase } from '../session/notices';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentExtras, AgentSession, AgentSessionDirectory, AgentSessionInfo, AttachInfo, PromptCapabilities } from '../session/agentSession';
import { AuthRequiredError, type AgentStartOptions, type TerminalAccess } from '../session/sessionHost';
import { describeToolCallChange, isMaterialChange, optionContradicts, snapshotToolCall } from '../session/permissions';
import { questionNotice } from '../session/questionRecord';
import { boundedModel } from '../session/longText';
import { mcpServersFor, mcpTransports } from '../session/mcpConfig';
import type { ContentPart, MessageEntity, SessionModel } from '../session/sessionModel';
import type { AcpClient } from './acpClient';
import { ErrorCodes } from './acpErrors';
import { applyAcpUpdate, applyToolCall } from './applyUpdate';
import { AcpConnection, initialized, openClient, type ConnectionMember } from './acpConnection';
import { claudeConfigDir, claudeResumePoint, forksAtMessage, type ResumePoint } from './claudeFork';
import type { ClientCapabilities, ContentBlock, McpServer, NewSessionResponse, RequestPermissionRequest, SessionNotification } from './types';

/** What we tell the agent we can do: only what this start was given services for. */
export function clientCapabilities(options: Pick<AgentStartOptions, 'files' | 'terminals'>): ClientCapabilities {
  return {
    fs: { readTextFile: !!options.files, writeTextFile: !!options.files },
    terminal: !!options.terminals,
    auth: { terminal: true },
    _meta: { ...(options.terminals ? { terminal_output: true } : {}), 'terminal-auth': true },
  };
}

/** Claude's replay carries `<system-reminder>` user chunks the person never wrote: collapsed (left out). */
function isInjectedReminder(n: SessionNotification): boolean {
  const u = n.update as { sessionUpdate: string; content?: { type: string; text?: string } };
  return u.sessionUpdate === 'user_message_chunk' && u.content?.type === 'text' && /^\s*<system-reminder>/.test(u.content.text ?? '');
}

/** An error's message with the agent's own explanation (`data.details` / `data.message`), when it sent one. */
function errorText(error: unknown): string {
  const e = error as Error & { data?: { details?: unknown; message?: unknown } };
  const extra = e instanceof ResponseError ? (e.data?.details ?? e.data?.message) : undefined;
  return typeof extra === 'string' && extra && extra !== e.message ? `${e.message} (${extra})` : e.message;
}

function attachNotice(attach: AttachInfo): { title: Phrase; detail: Phrase } {
  const id = attach.requested ?? '';
  switch (attach.how) {
    case 'resumed':
      return { title: phrase('sessionResumed'), detail: phrase('resumedDetail', id) };
    case 'loaded':
      return { title: phrase('sessionLoaded'), detail: phrase('loadedDetail', id) };
    case 'new':
      return { title: phrase('newSession'), detail: phrase('newSessionDetail', id, attach.detail ?? phrase('noReasonGiven')) };
  }
}

/** One agent process with one ACP session, mapped into a SessionModel. */
export class AcpSession implements AgentSession {
  readonly model: SessionModel;
  readonly sessionsShareProcess = true;
  private readonly terminals: TerminalAccess | undefined;
  private permissionCount = 0;
  /** Commands already running when the current turn began (a cancel ends only the turn's own). */
  private terminalsBefore = new Set<string>();
  private readonly offExit: () => void;
  /** The MCP servers the session was opened with (a fork opens its session with them too). */
  private mcp: McpServer[] = [];
  /** claude-agent-acp's config folder, where its session files say where a fork at a message resumes. */
  private claudeDir: string | undefined;

  private constructor(
    readonly client: AcpClient,
    private id: string,
    private readonly options: AgentStartOptions,
    private readonly agentName: string,
    readonly attach: AttachInfo,
    private readonly connection: AcpConnection,
    private readonly member: ConnectionMember,
  ) {
    this.model = boundedModel(id);
    this.terminals = options.terminals;
    this.offExit = client.onExit((exit) => {
      options.terminals?.disposeAll();
      this.model.failUnfinishedToolCalls(cutByExit(exit));
      // A remote agent's dropped connection is said as such, not as an exit.
      if (exit.code !== 0 || this.model.turn !== 'idle') this.model.notice('error', phrase(exit.disconnected ? 'connectionLost' : 'agentExited'), exitPhrase(exit));
    });
  }

  get sessionId(): string {
    return this.id;
  }

  /** Going back to before a user message, when the agent forks at a message (claude-agent-acp). */
  get forkBefore(): ((message: MessageEntity) => Promise<void>) | undefined {
    const dir = this.claudeDir;
    return dir ? (message) => this.forkAt(message, dir) : undefined;
  }

  get agentInfo(): AgentSession['agentInfo'] {
    const init = this.client.initializeResult;
    return {
      name: init?.agentInfo?.name ?? 'agent',
      ...(init?.agentInfo?.title ? { title: init.agentInfo.title } : {}),
      ...(init?.agentInfo?.version ? { version: init.agentInfo.version } : {}),
      protocol: 'acp',
      ...(init ? { protocolVersion: init.protocolVersion } : {}),
    };
  }

  get promptCapabilities(): PromptCapabilities {
    const pc = this.client.initializeResult?.agentCapabilities?.promptCapabilities;
    return { image: pc?.image === true, embeddedContext: pc?.embeddedContext === true };
  }

  extras(): AgentExtras | undefined {
    return undefined;
  }

  get directory(): Omit<AgentSessionDirectory, 'close'> | undefined {
    const caps = this.client.agentCapabilities.sessionCapabilities;
    if (!caps?.list && !caps?.delete) return undefined;
    return {
      list: (cwd) => AcpSession.listSessions(this.client, cwd),
      delete: async (id) => {
        if (!caps.delete) return false;
        await this.client.deleteSession(id);
        return true;
      },
    };
  }

  /**
   * Starts the agent (or, with `shareProcess`, joins the process already serving it), then opens a new
   * session in `options.cwd` or reattaches `options.attach`.
   */
  static async start(config: AgentConfig, options: AgentStartOptions): Promise<AcpSession> {
    // The session exists only after session/new, but permission requests and updates need it: bind late.
    let session: AcpSession | undefined;
    const member: ConnectionMember = {
      options,
      permission: async (params, signal) => (session ? session.onPermission(params, signal) : { outcome: { outcome: 'cancelled' } }),
      update: (n) => session && applyAcpUpdate(session.model, n.update),
      // A refusal is said in the transcript and the log, not only answered to the agent (which may not show it).
      refused: (method, error) => {
        options.logger.warn(`Refused the agent's ${method}: ${error.message}`);
        session?.model.notice('warning', phrase('refused'), `${method}: ${error.message}`);
      },
      asked: (record) => {
        if (!session) return;
        const { title, detail } = questionNotice(config.name, record);
        session.model.notice('info', title, detail);
      },
    };
    // The IDE tools reach an ACP agent as an MCP server (the first start waits for its socket), and so do the
    // user's own servers that the agent's transports and its entry allow.
    const ide = await options.ideTools?.mcpServer();
    const connection = await AcpConnection.open(config, options, clientCapabilities(options));
    connection.join(member);
    const client = connection.client;
    const user = mcpServersFor(options.mcpServers ?? [], client.agentCapabilities.mcpCapabilities ?? undefined, config.mcpServers);
    const mcp = [...(ide ? [ide] : []), ...user.pass] as McpServer[];
    try {
      const { created, attach } = options.attach
        ? await AcpSession.reattach(client, options, mcp, options.attach.sessionId)
        : { created: await AcpSession.newSessionSigningIn(client, options, mcp), attach: { how: 'new' as const } };
      session = new AcpSession(client, created.sessionId, options, config.name, attach, connection, member);
      session.applySessionSetup(created);
      session.mcp = mcp;
      session.model.setAgentState({ mcpServers: user.passed.map((m) => ({ name: m.name, type: m.type, source: m.source })) });
      const transports = mcpTransports(client.agentCapabilities.mcpCapabilities ?? undefined);
      for (const n of user.notPassed) {
        if (n.reason !== 'transport') continue;
        session.model.notice('warning', phrase('mcpNotPassed'), phrase('mcpTransportDetail', n.name, n.type, transports));
        options.logger.warn(`MCP server ${n.name} (${n.type}) not passed to ${config.name}: it takes only ${transports} servers`);
      }
      if (user.passed.length) options.logger.info(`MCP servers passed to ${config.name}: ${user.passed.map((m) => `${m.name} (${m.type}, ${m.source})`).join(', ')}`);
      if (client.canFork && forksAtMessage(session.agentInfo.name)) {
        session.claudeDir = claudeConfigDir({ ...(config.env ?? {}), ...(options.env ?? {}) }, config.inheritEnv !== false);
      }
      // Updates that came before the session object existed (a `session/load` replay) are kept only when asked.
      // A new session's early updates (commands, modes) count; a reattached one's replay only when asked.
      const keep = attach.how === 'new' || (attach.how === 'loaded' && options.attach?.replay === true);
      for (const n of connection.bind(member, session.sessionId)) {
        if (keep && !isInjectedReminder(n)) applyAcpUpdate(session.model, n.update);
      }
      if (options.attach) {
        const { title, detail } = attachNotice(attach);
        session.model.notice(attach.how === 'new' ? 'warning' : 'info', title, detail);
      }
      return session;
    } catch (error) {
      options.terminals?.disposeAll();
      await connection.leave(member);
      throw error;
    }
  }

  /**
   * The reattach ladder: `session/resume` (context kept, nothing replayed), else `session/load` (replayed),
   * else a new session, with the reason each rung was passed over.
   */
  private static async reattach(client: AcpClient, options: AgentStartOptions, mcp: McpServer[], requested: string): Promise<{ created: NewSessionResponse; attach: AttachInfo }> {
    const caps = client.agentCapabilities;
    const why: string[] = [];
    const via = options.attach?.via;
    if (via === 'load') why.push('session/resume not tried (load asked for)');
    else if (caps.sessionCapabilities?.resume) {
      try {
        const r = (await client.resumeSession(requested, options.cwd, mcp)) as Partial<NewSessionResponse> | null;
        return { created: { ...(r ?? {}), sessionId: requested }, attach: { how: 'resumed', requested } };
      } catch (error) {
        why.push(`session/resume failed: ${errorText(error)}`);
      }
    } else why.push('the agent offers no session/resume');
    if (via === 'resume') why.push('session/load not tried (resume asked for)');
    else if (caps.loadSession) {
      try {
        const r = (await client.loadSession(requested, options.cwd, mcp)) as Partial<NewSessionResponse> | null;
        return { created: { ...(r ?? {}), sessionId: requested }, attach: { how: 'loaded', requested } };
      } catch (error) {
        why.push(`session/load failed: ${errorText(error)}`);
      }
    } else why.push('the agent offers no session/load');
    options.logger.warn(`Could not reattach session ${requested}: ${why.join('; ')}; starting a new session`);
    const created = await AcpSession.newSessionSigningIn(client, options, mcp);
    return { created, attach: { how: 'new', requested, detail: why.join('; ') } };
  }

  /** Starts the agent only to reach its session store (`session/list`, `session/delete`); no session is opened. */
  static async directory(
    config: AgentConfig,
    options: Pick<AgentStartOptions, 'logger' | 'cwd' | 'env' | 'requestTimeoutMs' | 'initializeTimeoutMs' | 'apiKey' | 'onKeyRefused'>,
  ): Promise<AgentSessionDirectory> {
    // Nothing to approve without a session: any permission request is answered cancelled.
    const client = await openClient(config, options, { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) });
    await initialized(config, options, client, clientCapabilities({}));
    return {
      list: (cwd) => AcpSession.listSessions(client, cwd),
      delete: async (id) => {
        if (!client.agentCapabilities.sessionCapabilities?.delete) return false;
        await client.deleteSession(id);
        return true;
      },
      close: async () => void (await client.shutdown()),
    };
  }

  /** The agent's own list of its sessions (ACP `session/list`, every page up to `max`); undefined when it has none. */
  static async listSessions(client: AcpClient, cwd: string | undefined, max = 1000): Promise<AgentSessionInfo[] | undefined> {
    if (!client.agentCapabilities.sessionCapabilities?.list) return undefined;
    const out: AgentSessionInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listSessions({ ...(cwd ? { cwd } : {}), ...(cursor ? { cursor } : {}) });
      for (const s of page.sessions ?? []) {
        out.push({ sessionId: s.sessionId, cwd: s.cwd, ...(s.title ? { title: s.title } : {}), ...(s.updatedAt ? { updatedAt: s.updatedAt } : {}) });
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor && out.length < max);
    return out;
  }

  /** `session/new`; on -32000 asks the `signIn` service, calls `authenticate` and retries in the same process. */
  private static async newSessionSigningIn(client: AcpClient, options: AgentStartOptions, mcp: McpServer[]): Promise<NewSessionResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await client.newSession(options.cwd, mcp);
      } catch (error) {
        if (!(error instanceof ResponseError && error.code === ErrorCodes.AuthRequired)) throw error;
        const methods = client.authMethods;
        const methodId = attempt < 3 && methods.length ? await options.signIn?.(methods, error.message) : undefined;
        if (!methodId) throw new AuthRequiredError(methods, error.message);
        options.logger.info(`Signing in with "${methodId}"`);
        await client.authenticate(methodId);
      }
    }
  }

  async prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }> {
    if (this.model.turn !== 'idle') throw new Error('A turn is already running in this session');
    this.model.beginTurn();
    this.terminalsBefore = new Set(this.terminals?.running());
    // One id for all the parts: read per part, a millisecond passing between them split the message in two.
    const messageId = `user-${Date.now()}`;
    for (const part of display ?? parts) this.model.appendChunk('user', part, messageId);
    try {
      const result = await this.client.prompt(this.sessionId, parts as ContentBlock[]);
      this.model.endTurn(result.stopReason);
      return { stopReason: result.stopReason };
    } catch (error) {
      this.model.endTurn(undefined, (error as Error).message);
      throw error;
    }
  }

  /**
   * Forks the agent's session at the record before `message` (its session file names it) and goes on in the
   * fork: the model's next request lacks that message and what followed; the transcript drops them too. The
   * first message goes back to an empty session. The old session stays in the agent's history.
   */
  private async forkAt(message: MessageEntity, configDir: string): Promise<void> {
    if (this.model.turn !== 'idle') throw new Error('Stop the running turn before going back in the conversation');
    const users = this.model.messages('user');
    const index = users.indexOf(message);
    if (index < 0) throw new Error('That message is not in the running session (the agent was restarted since)');
    const find = () => claudeResumePoint(configDir, this.id, index, users.length);
    let point: ResumePoint = find();
    // The agent writes its file a moment after a turn ends.
    for (const until = Date.now() + 5_000; 'missing' in point && Date.now() < until; point = find()) await new Promise((r) => setTimeout(r, 200));
    if ('missing' in point) throw new Error(`${this.agentName} cannot go back to that message: ${point.missing}`);
    const before = this.id;
    const created =
      'at' in point
        ? await this.client.forkSession(before, this.options.cwd, this.mcp, { claudeCode: { options: { resumeSessionAt: point.at } } })
        : await this.client.newSession(this.options.cwd, this.mcp);
    this.id = created.sessionId;
    this.model.rekey(created.sessionId);
    this.applySessionSetup(created);
    for (const n of this.connection.bind(this.member, created.sessionId)) if (!isInjectedReminder(n)) applyAcpUpdate(this.model, n.update);
    this.model.truncateFrom(message);
    this.options.logger.info(`Session ${before} forked ${'at' in point ? `at ${point.at}` : 'at its start (a new session)'}: going on as ${created.sessionId}`);
    if (this.client.agentCapabilities.sessionCapabilities?.close) {
      await this.client.closeSession(before).catch((error: Error) => this.options.logger.warn(`Could not close session ${before} after the fork: ${error.message}`));
    }
  }

  async cancel(): Promise<void> {
    if (this.model.turn === 'idle') return;
    this.model.requestCancel();
    try {
      await this.client.cancel(this.sessionId);
    } finally {
      // Commands this turn started and the agent left running (a watcher, a hung test) end with it.
      const terminals = this.terminals;
      for (const id of terminals?.running() ?? []) if (!this.terminalsBefore.has(id)) await terminals!.kill(id).catch(() => undefined);
    }
  }

  async setMode(modeId: string): Promise<void> {
    await this.client.setMode(this.sessionId, modeId);
    this.model.setCurrentMode(modeId);
  }

  async setConfigOption(configId: string, value: string | boolean): Promise<void> {
    const result = (await this.client.setConfigOption(this.sessionId, configId, value)) as { configOptions?: unknown[] } | null;
    if (result?.configOptions) this.model.setConfigOptions(result.configOptions);
  }

  async setModel(modelId: string): Promise<void> {
    await this.client.setModel(this.sessionId, modelId);
    if (this.model.models) this.model.setModels({ ...this.model.models, currentModelId: modelId });
  }

  async close(): Promise<void> {
    if (!this.client.agentCapabilities.sessionCapabilities?.close) return;
    if (this.model.turn !== 'idle') await this.cancel();
    await this.client.closeSession(this.sessionId);
  }

  /** This session lets go of its process; the process ends unless other sessions (tabs) still use it. */
  async shutdown(): Promise<ExitInfo> {
    this.terminals?.disposeAll();
    // Nothing this session hears from now on: what it left running cannot finish.
    this.model.failUnfinishedToolCalls(phrase('stoppedBeforeFinished'));
    // Others keep the process: this session is closed on the agent's side (when it can), not left behind.
    if (this.connection.size > 1) await this.close().catch((error: Error) => this.options.logger.warn(`session/close failed: ${error.message}`));
    this.offExit();
    return this.connection.leave(this.member);
  }

  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.client.onExit(listener);
  }

  onHealth(listener: (health: 'ok' | 'unresponsive', detail: string) => void): () => void {
    return this.client.onHealth(listener);
  }

  /** The process's activity: with tabs sharing it, any session's traffic counts (one agent, one pipe). */
  onActivity(listener: (waitingOnHost: boolean) => void): () => void {
    return this.client.onActivity(listener);
  }

  private applySessionSetup(created: NewSessionResponse): void {
    const legacy = created as NewSessionResponse & { models?: { currentModelId: string; availableModels: { modelId: string; name: string }[] } | null };
    if (created.modes) this.model.setModes(created.modes);
    if (legacy.models) this.model.setModels(legacy.models);
    if (created.configOptions) this.model.setConfigOptions(created.configOptions);
  }

  /**
   * One permission request. The person (or a policy) decides on a copy of the tool call taken now; if the
   * agent changes the call while the ask is open (`tool_call_update` to another kind or input), the ask is
   * withdrawn and made again, saying what changed — a rule is never made from a call nobody saw.
   */
  private async onPermission(params: RequestPermissionRequest, signal: AbortSignal) {
    const toolCallId = params.toolCall.toolCallId;
    applyToolCall(this.model, params.toolCall);
    const permissionId = `${toolCallId}#${++this.permissionCount}`;
    const options = params.options.map((o) => {
      const option = { optionId: o.optionId, name: o.name, kind: o.kind };
      return optionContradicts(option) ? { ...option, contradicts: true } : option;
    });
    let changed: string[] | undefined;
    for (let round = 0; ; round++) {
      const toolCall = snapshotToolCall(this.model.toolCall(toolCallId)!);
      const record = (state: 'pending' | 'answered' | 'cancelled', answer?: string) =>
        this.model.upsertPermission({ id: permissionId, toolCallId, title: toolCall.title, options, state, ...(answer ? { answer } : {}) });
      record('pending');
      const ask = new AbortController();
      const withdraw = () => ask.abort();
      signal.addEventListener('abort', withdraw, { once: true });
      let changedNow: string[] | undefined;
      const unsubscribe = this.model.on((e) => {
        if (e.type !== 'entity' || e.entity.kind !== 'tool_call' || e.entity.id !== toolCallId || changedNow) return;
        if (!isMaterialChange(toolCall, e.entity, this.options.cwd)) return;
        changedNow = describeToolCallChange(toolCall, e.entity);
        ask.abort();
      });
      const request = { sessionId: this.sessionId, agentName: this.agentName, toolCall, options, ...(changed ? { changed } : {}) };
      const decision = await this.options.decidePermission(request, ask.signal);
      unsubscribe();
      signal.removeEventListener('abort', withdraw);
      if (changedNow && !signal.aborted && round < 5) {
        this.options.logger.warn(`The agent changed "${toolCall.title}" while its permission was asked (${changedNow.join('; ')}): asking again`);
        changed = changedNow;
        continue;
      }
      if (signal.aborted || changedNow || decision.outcome === 'cancelled') {
        record('cancelled');
        this.model.upsertToolCall({ id: toolCallId, permission: { outcome: 'cancelled', by: signal.aborted ? 'cancel' : decision.by } });
        // The person's Cancel (the dialog's Cancel, Escape, the card's Cancel) stops the turn, as the dialog
        // says; Reject is the answer that lets the agent go on. The answer goes out first.
        if (!signal.aborted && decision.outcome === 'cancelled' && decision.by === 'user') {
          setImmediate(() => void this.cancel().catch((e: Error) => this.options.logger.warn(`Cancelling the turn after the permission's Cancel: ${e.message}`)));
        }
        return { outcome: { outcome: 'cancelled' as const } };
      }
      this.options.logger.info(`Permission for "${toolCall.title}" answered ${decision.optionId} (by ${decision.by}${decision.rule ? `: ${decision.rule}` : ''})`);
      record('answered', decision.optionId);
      this.model.upsertToolCall({
        id: toolCallId,
        permission: {
          optionId: decision.optionId,
          outcome: 'selected',
          by: decision.by,
          ...(decision.rule ? { rule: decision.rule } : {}),
          ...(decision.ruleId ? { ruleId: decision.ruleId } : {}),
          ...(options.find((o) => o.optionId === decision.optionId)?.kind.startsWith('reject') ? { rejected: true } : {}),
        },
      });
      return { outcome: { outcome: 'selected' as const, optionId: decision.optionId } };
    }
  }
}
