import { ResponseError } from 'vscode-jsonrpc/node';
import type { ExitInfo } from '../core/agentProcess';
import { describeExit } from '../core/agentProcess';
import type { Logger } from '../core/log';
import type { TextDocumentStore } from '../host/fileService';
import { FileService } from '../host/fileService';
import { TerminalService, type TerminalEvents } from '../host/terminalService';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentSession } from '../session/agentSession';
import type { PermissionDecider } from '../session/permissions';
import { SessionModel, type ContentPart } from '../session/sessionModel';
import { AcpClient, ErrorCodes, type AcpClientHandlers, type AcpClientOptions } from './acpClient';
import { applyAcpUpdate, applyToolCall } from './applyUpdate';
import type { AuthMethod, ClientCapabilities, ContentBlock, McpServer, NewSessionResponse, RequestPermissionRequest } from './types';

export interface AcpSessionOptions {
  logger: Logger;
  /** The workspace: session cwd and the boundary for file and terminal requests. */
  cwd: string;
  roots?: string[];
  decidePermission: PermissionDecider;
  fileStore?: TextDocumentStore;
  onFileWrite?: (absPath: string, before: string | undefined, after: string) => void;
  terminalEvents?: TerminalEvents;
  mcpServers?: McpServer[];
  extRequests?: AcpClientHandlers['extRequests'];
  requestTimeoutMs?: number;
  initializeTimeoutMs?: number;
  maxLineBytes?: number;
  frameTap?: AcpClientOptions['frameTap'];
  /**
   * Called when `session/new` answers -32000 (sign-in needed), with the agent's `authMethods`: answer the id of
   * a method to `authenticate` with (then `session/new` is retried in the same process), or undefined to give
   * up (start fails with AuthRequiredError). Asked again if the agent still refuses, at most 3 times.
   */
  onAuthRequired?: (methods: AuthMethod[], detail: string) => Promise<string | undefined>;
  /** Added to the agent's environment (e.g. API keys from SecretStorage); wins over the config's env. */
  env?: Record<string, string>;
}

/** The agent asked for sign-in (`-32000`) before it would open a session. */
export class AuthRequiredError extends Error {
  constructor(
    readonly methods: AuthMethod[],
    detail: string,
  ) {
    super(`The agent needs you to sign in first (${detail})`);
    this.name = 'AuthRequiredError';
  }
}

export const CLIENT_CAPABILITIES: ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  auth: { terminal: true },
  _meta: { terminal_output: true, 'terminal-auth': true },
};

/** One agent process with one ACP session, mapped into a SessionModel. */
export class AcpSession implements AgentSession {
  readonly model: SessionModel;
  private readonly terminals: TerminalService;

  private constructor(
    readonly client: AcpClient,
    readonly sessionId: string,
    private readonly options: AcpSessionOptions,
    terminals: TerminalService,
  ) {
    this.model = new SessionModel(sessionId);
    this.terminals = terminals;
    client.onExit((exit) => {
      terminals.disposeAll();
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

  /** Spawns the agent, initializes, and opens a new session in `options.cwd`. */
  static async start(config: AgentConfig, options: AcpSessionOptions): Promise<AcpSession> {
    const roots = () => options.roots ?? [options.cwd];
    const files = new FileService(roots, options.fileStore, options.onFileWrite);
    const terminals = new TerminalService(roots, options.terminalEvents);
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
          readTextFile: (p) => files.readTextFile(p),
          writeTextFile: (p) => files.writeTextFile(p),
          terminal: {
            create: (p) => terminals.create(p),
            output: (p) => terminals.output(p),
            waitForExit: (p) => terminals.waitForExit(p),
            kill: (p) => terminals.kill(p),
            release: (p) => terminals.release(p),
          },
          ...(options.extRequests ? { extRequests: options.extRequests } : {}),
        },
      },
    );
    try {
      await client.initialize(CLIENT_CAPABILITIES);
      const created = await AcpSession.newSessionSigningIn(client, options);
      session = new AcpSession(client, created.sessionId, options, terminals);
      session.applySessionSetup(created);
      const s = session;
      client.onSessionUpdate((n) => {
        if (n.sessionId === s.sessionId) applyAcpUpdate(s.model, n.update);
        else options.logger.debug(`Update for unknown session ${n.sessionId} ignored`);
      });
      return session;
    } catch (error) {
      await client.shutdown();
      throw error;
    }
  }

  /** `session/new`; on -32000 asks `onAuthRequired`, calls `authenticate` and retries in the same process. */
  private static async newSessionSigningIn(client: AcpClient, options: AcpSessionOptions): Promise<NewSessionResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await client.newSession(options.cwd, options.mcpServers ?? []);
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
    this.terminals.disposeAll();
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

  private async onPermission(params: RequestPermissionRequest, signal: AbortSignal) {
    const toolCallId = params.toolCall.toolCallId;
    const toolCall = applyToolCall(this.model, params.toolCall);
    const permissionId = `${toolCallId}#${Date.now()}`;
    const options = params.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind }));
    const record = (state: 'pending' | 'answered' | 'cancelled', answer?: string) =>
      this.model.upsertPermission({ id: permissionId, toolCallId, title: toolCall.title, options, state, ...(answer ? { answer } : {}) });
    record('pending');
    const decision = await this.options.decidePermission({ sessionId: this.sessionId, toolCall, options }, signal);
    if (signal.aborted || decision.outcome === 'cancelled') {
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
