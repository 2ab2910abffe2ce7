import * as vscode from 'vscode';
import { AuthRequiredError } from './acp/acpSession';
import { describeExit } from './core/agentProcess';
import { parseAgentConfigs, type AgentConfig } from './session/agentConfig';
import type { AgentSession } from './session/agentSession';
import { startAgentSession, type StartSessionOptions } from './session/startSession';
import type { ContentPart, SessionEvent } from './session/sessionModel';
import { modalPermissionDecider } from './views/permissionDialog';

/**
 * What the editor lends a session (permissions UI, files, terminals, MCP servers, extension dialogs,
 * host tools). Called at every agent start, so settings changes apply on restart.
 */
export type SessionServices = (agent: AgentConfig, cwd: string) => Partial<StartSessionOptions>;

export type AgentState = 'stopped' | 'starting' | 'ready' | 'busy' | 'error';

/** Owns the configured agents and the one running session; views listen to its events. */
export class AgentManager implements vscode.Disposable {
  private session: AgentSession | undefined;
  private starting: Promise<AgentSession> | undefined;
  private currentName: string | undefined;
  private _state: AgentState = 'stopped';
  private lastError: string | undefined;
  private unresponsive: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<AgentState>();
  private readonly eventEmitter = new vscode.EventEmitter<SessionEvent>();
  private readonly sessionEmitter = new vscode.EventEmitter<AgentSession | undefined>();
  private services: SessionServices[] = [];
  /** Disposed on every agent restart (the per-process lifetime). */
  private processDisposables: (() => void)[] = [];

  readonly onDidChangeState = this.stateEmitter.event;
  readonly onSessionEvent = this.eventEmitter.event;
  /** A new session started (views re-render from its model) or the session went away (undefined). */
  readonly onDidChangeSession = this.sessionEmitter.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  get state(): AgentState {
    return this._state;
  }

  get agentName(): string | undefined {
    return this.currentName ?? this.defaultAgent()?.name;
  }

  get error(): string | undefined {
    return this.lastError;
  }

  /** Why the agent counts as not answering (a request timed out), until it answers again. */
  get notAnswering(): string | undefined {
    return this.unresponsive;
  }

  get current(): AgentSession | undefined {
    return this.session;
  }

  agents(): AgentConfig[] {
    const raw = vscode.workspace.getConfiguration('agentHost').get<unknown>('agents', []);
    try {
      return parseAgentConfigs(raw);
    } catch (error) {
      this.log.error(`Invalid agentHost.agents setting: ${(error as Error).message}`);
      return [];
    }
  }

  defaultAgent(): AgentConfig | undefined {
    const agents = this.agents();
    const name = vscode.workspace.getConfiguration('agentHost').get<string>('defaultAgent', '');
    return agents.find((a) => a.name === (this.currentName ?? name)) ?? agents[0];
  }

  /** Adds a provider of session services; later providers override earlier ones key by key. */
  addSessionServices(services: SessionServices): vscode.Disposable {
    this.services.push(services);
    return new vscode.Disposable(() => {
      this.services = this.services.filter((s) => s !== services);
    });
  }

  select(name: string): void {
    this.currentName = name;
    this.stateEmitter.fire(this._state);
  }

  /** The running session, starting the selected agent if needed. */
  ensureStarted(): Promise<AgentSession> {
    if (this.session) return Promise.resolve(this.session);
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(): Promise<AgentSession> {
    await this.stop();
    return this.ensureStarted();
  }

  async stop(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    for (const d of this.processDisposables.splice(0)) d();
    if (s) {
      this.sessionEmitter.fire(undefined);
      await s.shutdown();
    }
    this.setState('stopped');
  }

  /** Sends one prompt (text, or content blocks with context) and resolves with the stop reason. */
  async prompt(input: string | ContentPart[]): Promise<string> {
    const session = await this.ensureStarted();
    const parts = typeof input === 'string' ? [{ type: 'text', text: input }] : input;
    this.setState('busy');
    try {
      return (await session.prompt(parts)).stopReason;
    } finally {
      if (this.session === session) this.setState('ready');
    }
  }

  async cancel(): Promise<void> {
    await this.session?.cancel();
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.eventEmitter.dispose();
    this.sessionEmitter.dispose();
  }

  private async start(): Promise<AgentSession> {
    const agent = this.defaultAgent();
    if (!agent) {
      const message = vscode.l10n.t('No agent is configured. Add one to the "agentHost.agents" setting.');
      this.setState('error', message);
      throw new Error(message);
    }
    const folders = vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [];
    const cwd = folders[0];
    if (!cwd) {
      const message = vscode.l10n.t('Open a folder first: the agent works inside the workspace.');
      this.setState('error', message);
      throw new Error(message);
    }
    const config = vscode.workspace.getConfiguration('agentHost');
    this.currentName = agent.name;
    this.setState('starting');
    try {
      const extra = Object.assign({}, ...this.services.map((s) => s(agent, cwd))) as Partial<StartSessionOptions>;
      const session = await startAgentSession(agent, {
        decidePermission: modalPermissionDecider,
        ...extra,
        logger: this.log,
        cwd,
        roots: folders,
        requestTimeoutMs: config.get<number>('requestTimeoutSeconds', 60) * 1000,
        initializeTimeoutMs: config.get<number>('initializeTimeoutSeconds', 60) * 1000,
        maxLineBytes: config.get<number>('maxLineBytes', 64 * 1024 * 1024),
      });
      this.session = session;
      this.sessionEmitter.fire(session);
      this.processDisposables.push(
        session.model.on((e) => this.eventEmitter.fire(e)),
        session.onHealth((health, detail) => {
          this.unresponsive = health === 'unresponsive' ? detail : undefined;
          this.stateEmitter.fire(this._state);
        }),
        session.onExit((exit) => {
          if (this.session !== session) return;
          this.session = undefined;
          this.sessionEmitter.fire(undefined);
          this.setState(exit.code === 0 ? 'stopped' : 'error', describeExit(exit));
        }),
      );
      this.setState('ready');
      this.log.info(`Agent "${agent.name}" ready: session ${session.model.sessionId}`);
      return session;
    } catch (error) {
      const message =
        error instanceof AuthRequiredError
          ? `${error.message}: ${error.methods.map((m) => m.name).join(', ')}`
          : (error as Error).message;
      this.setState('error', message);
      throw error;
    }
  }

  private setState(state: AgentState, error?: string): void {
    this._state = state;
    if (state === 'stopped' || state === 'starting') this.unresponsive = undefined;
    this.lastError = error;
    this.stateEmitter.fire(state);
  }
}
