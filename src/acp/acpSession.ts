import { ResponseError } from 'vscode-jsonrpc/node';
import type { ExitInfo } from '../core/agentProcess';
import { describeExit } from '../core/agentProcess';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentExtras, AgentSession, PromptCapabilities } from '../session/agentSession';
import { AuthRequiredError, type AgentStartOptions, type TerminalAccess } from '../session/sessionHost';
import { describeToolCallChange, isMaterialChange, optionContradicts, snapshotToolCall } from '../session/permissions';
import { SessionModel, type ContentPart } from '../session/sessionModel';
import { AcpClient, ErrorCodes } from './acpClient';
import { applyAcpUpdate, applyToolCall } from './applyUpdate';
import { fileHandlers, terminalHandlers } from './hostHandlers';
import type { ClientCapabilities, ContentBlock, McpServer, NewSessionResponse, RequestPermissionRequest } from './types';

/** What we tell the agent we can do: only what this start was given services for. */
export function clientCapabilities(options: Pick<AgentStartOptions, 'files' | 'terminals'>): ClientCapabilities {
  return {
    fs: { readTextFile: !!options.files, writeTextFile: !!options.files },
    terminal: !!options.terminals,
    auth: { terminal: true },
    _meta: { ...(options.terminals ? { terminal_output: true } : {}), 'terminal-auth': true },
  };
}

/** One agent process with one ACP session, mapped into a SessionModel. */
export class AcpSession implements AgentSession {
  readonly model: SessionModel;
  private readonly terminals: TerminalAccess | undefined;
  private permissionCount = 0;

  private constructor(
    readonly client: AcpClient,
    readonly sessionId: string,
    private readonly options: AgentStartOptions,
    private readonly agentName: string,
  ) {
    this.model = new SessionModel(sessionId);
    this.terminals = options.terminals;
    client.onExit((exit) => {
      options.terminals?.disposeAll();
      if (exit.code !== 0 || this.model.turn !== 'idle') this.model.notice('error', 'Agent exited', describeExit(exit));
    });
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

  /** Spawns the agent, initializes, and opens a new session in `options.cwd`. */
  static async start(config: AgentConfig, options: AgentStartOptions): Promise<AcpSession> {
    // The session exists only after session/new, but permission requests need it: bind late.
    let session: AcpSession | undefined;
    const client = AcpClient.spawn(
      {
        command: config.command,
        args: config.args ?? [],
        env: { ...(config.env ?? {}), ...(options.env ?? {}) },
        cwd: config.cwd ?? options.cwd,
        ...(config.inheritEnv === false ? { inheritEnv: false } : {}),
      },
      {
        logger: options.logger,
        ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
        ...(options.initializeTimeoutMs ? { initializeTimeoutMs: options.initializeTimeoutMs } : {}),
        ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
        ...(options.frameTap ? { frameTap: options.frameTap } : {}),
        handlers: {
          requestPermission: async (params, signal) => {
            if (!session) return { outcome: { outcome: 'cancelled' } };
            return session.onPermission(params, signal);
          },
          ...(options.files ? fileHandlers(options.files) : {}),
          ...(options.terminals ? { terminal: terminalHandlers(options.terminals) } : {}),
          ...(options.extRequests ? { extRequests: options.extRequests } : {}),
        },
      },
    );
    try {
      await client.initialize(clientCapabilities(options));
      const created = await AcpSession.newSessionSigningIn(client, options);
      session = new AcpSession(client, created.sessionId, options, config.name);
      session.applySessionSetup(created);
      const s = session;
      client.onSessionUpdate((n) => {
        if (n.sessionId === s.sessionId) applyAcpUpdate(s.model, n.update);
        else options.logger.debug(`Update for unknown session ${n.sessionId} ignored`);
      });
      return session;
    } catch (error) {
      options.terminals?.disposeAll();
      await client.shutdown();
      throw error;
    }
  }

  /** `session/new`; on -32000 asks `onAuthRequired`, calls `authenticate` and retries in the same process. */
  private static async newSessionSigningIn(client: AcpClient, options: AgentStartOptions): Promise<NewSessionResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await client.newSession(options.cwd, (options.mcpServers ?? []) as McpServer[]);
      } catch (error) {
        if (!(error instanceof ResponseError && error.code === ErrorCodes.AuthRequired)) throw error;
        const methods = client.authMethods;
        const methodId = attempt < 3 && methods.length ? await options.onAuthRequired?.(methods, error.message) : undefined;
        if (!methodId) throw new AuthRequiredError(methods, error.message);
        options.logger.info(`Signing in with "${methodId}"`);
        await client.authenticate(methodId);
      }
    }
  }

  async prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }> {
    if (this.model.turn !== 'idle') throw new Error('A turn is already running in this session');
    this.model.beginTurn();
    for (const part of display ?? parts) this.model.appendChunk('user', part, `user-${Date.now()}`);
    try {
      const result = await this.client.prompt(this.sessionId, parts as ContentBlock[]);
      this.model.endTurn(result.stopReason);
      return { stopReason: result.stopReason };
    } catch (error) {
      this.model.endTurn(undefined, (error as Error).message);
      throw error;
    }
  }

  async cancel(): Promise<void> {
    if (this.model.turn === 'idle') return;
    this.model.requestCancel();
    await this.client.cancel(this.sessionId);
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

  shutdown(): Promise<ExitInfo> {
    this.terminals?.disposeAll();
    return this.client.shutdown();
  }

  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.client.onExit(listener);
  }

  onHealth(listener: (health: 'ok' | 'unresponsive', detail: string) => void): () => void {
    return this.client.onHealth(listener);
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
        if (!isMaterialChange(toolCall, e.entity)) return;
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
        return { outcome: { outcome: 'cancelled' as const } };
      }
      this.options.logger.info(`Permission for "${toolCall.title}" answered ${decision.optionId} (by ${decision.by}${decision.rule ? `: ${decision.rule}` : ''})`);
      record('answered', decision.optionId);
      this.model.upsertToolCall({
        id: toolCallId,
        permission: { optionId: decision.optionId, outcome: 'selected', by: decision.by, ...(decision.rule ? { rule: decision.rule } : {}) },
      });
      return { outcome: { outcome: 'selected' as const, optionId: decision.optionId } };
    }
  }
}
