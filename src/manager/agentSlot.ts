import * as vscode from 'vscode';
import { AgentExitedError, describeExit, type ExitInfo } from '../core/agentProcess';
import { DisposableStore } from '../core/lifetime';
import { DEFAULT_MAX_LINE_BYTES } from '../core/lineSplitter';
import { redactingLogger, registerEnvSecrets } from '../core/log';
import { agentEnvironment, type AgentConfig } from '../session/agentConfig';
import type { AgentSession, AgentState } from '../session/agentSession';
import { policyDecider } from '../session/permissions';
import { AuthRequiredError, type AgentStartOptions, type SignInHandler } from '../session/sessionHost';
import type { ContentPart, SessionEvent } from '../session/sessionModel';
import { titleFrom } from '../session/sessionStore';
import { TrafficLog, trafficLogger } from '../session/traffic';
import { TurnSilence } from './turnSilence';
import { requireTrust } from './workspaceTrust';

/**
 * What the editor lends a session (permissions UI, files, terminals, MCP servers, extension dialogs,
 * host tools). Called at every agent start, so settings changes apply on restart; async for what starts on first use.
 */
type Lent = Partial<AgentStartOptions>;
export type SessionServices = (agent: AgentConfig, cwd: string, env: AgentEnvironment) => Lent | Promise<Lent>;

/** The agent's environment for this start: `extra` (sign-in keys) on top of its config; `full` what it runs with. */
export interface AgentEnvironment {
  extra: Record<string, string>;
  full: () => Record<string, string>;
}

/** Starts a configured agent with its protocol's adapter (the composition root supplies it). */
export type StartAgent = (config: AgentConfig, options: AgentStartOptions) => Promise<AgentSession>;

/**
 * A start that a later stop, restart or switch overtook: what the person asked for later wins, so callers
 * drop this error instead of showing it.
 */
export class SupersededStartError extends Error {
  override readonly name = 'SupersededStartError';
}

/** A start overtaken by a later action is not an error to show: rethrows anything else. */
export function unlessSuperseded(error: unknown): void {
  if (!(error instanceof SupersededStartError)) throw error;
}

/** Which configured agent a process runs, and in which folder. */
export interface ProcessContext {
  agent: AgentConfig;
  cwd: string;
}

/** A slot's session to reattach (kept in workspace state with the tabs), and its title. */
export interface LastSession {
  agent: string;
  sessionId: string;
  title?: string;
}

/**
 * After a crash the agent is started again after 1 s, 2 s, 4 s …; a third crash within a minute opens the
 * breaker (no more automatic starts until the person restarts it).
 */
export const CRASH_POLICY = { backoffMs: [1000, 2000, 4000], breakAfter: 3, windowMs: 60_000 };

/** What a slot borrows from the manager: the configuration, the host's hooks, and where to remember. */
export interface SlotHost {
  readonly log: vscode.LogOutputChannel;
  readonly startAgent: StartAgent;
  agents(): AgentConfig[];
  services(): SessionServices[];
  signIn(): SignInHandler | undefined;
  beforeTurn(): (() => Promise<void>)[];
  processHooks(): ((session: AgentSession, context: ProcessContext) => vscode.Disposable)[];
  /** The slot's session (or title) changed: persist the tabs. */
  remember(): void;
  /** A NEW session (not resumed or loaded) before it is ready: the agent's defaults go in. */
  prepareNew(session: AgentSession, agent: AgentConfig): Promise<void>;
}

/** What a background tab has that the person has not seen: a permission to answer, or a finished turn. */
export type TabAttention = 'permission' | 'done';

/**
 * One conversation slot (a chat tab): the agent it runs, its process and session, the crash backoff and
 * breaker, and the session to reattach on the next start. The manager holds several; views see the active
 * one through the manager.
 */
export class AgentSlot implements vscode.Disposable {
  private session: AgentSession | undefined;
  private starting: Promise<AgentSession> | undefined;
  /** Bumped by every stop; a start that finishes under an older generation shuts its agent down. */
  private generation = 0;
  private currentName: string | undefined;
  private _state: AgentState = 'stopped';
  private lastError: string | undefined;
  private unresponsive: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<AgentState>();
  private readonly eventEmitter = new vscode.EventEmitter<SessionEvent>();
  private readonly sessionEmitter = new vscode.EventEmitter<AgentSession | undefined>();
  /** The per-process lifetime: disposed when the agent stops, exits or is replaced (listeners on the old session go). */
  private process = new DisposableStore();
  /** When the agent crashed recently (a crash loop opens the breaker). */
  private crashes: number[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  /** The next start opens a new session instead of reattaching the last one. */
  private freshNext = false;
  /** The next start reattaches this session (opened from history). */
  private attachNext: { sessionId: string; replay: boolean } | undefined;
  /** Kept across restarts and reloads: the session to reattach, and the tab's title. */
  remembered: LastSession | undefined;
  /** The protocol stream of this tab's agent (frames both ways, stderr), for the traffic view. */
  readonly traffic = new TrafficLog();
  /** Forgets the running agent's env secrets (masked in the log and the traffic view while it runs). */
  private forgetSecrets: () => void = () => undefined;
  /** While the tab is not shown, what happened there that the person has not seen. */
  attention: TabAttention | undefined;
  background = false;
  private readonly attentionEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeAttention = this.attentionEmitter.event;

  readonly onDidChangeState = this.stateEmitter.event;
  readonly onSessionEvent = this.eventEmitter.event;
  /** A new session started (views re-render from its model) or the session went away (undefined). */
  readonly onDidChangeSession = this.sessionEmitter.event;
  /** How long the running turn has heard nothing from the agent (reported past `agentHost.silenceWarningSeconds`). */
  readonly silence = new TurnSilence(this.onDidChangeSession, () => this.stateEmitter.fire(this._state));

  constructor(
    readonly id: string,
    private readonly host: SlotHost,
    restored?: LastSession,
  ) {
    this.remembered = restored;
    this.currentName = restored?.agent;
  }

  private get log(): vscode.LogOutputChannel {
    return this.host.log;
  }

  /** The tab's title: its first prompt (this process's or remembered), else the agent's name. */
  get title(): string {
    // A reattached session keeps the title of its first prompt, not of the first one since the reload.
    const kept = this.remembered?.title && (!this.session || this.remembered.sessionId === this.session.sessionId) ? this.remembered.title : undefined;
    const first = kept ?? this.session?.model.messages('user')[0]?.text ?? this.remembered?.title;
    return first ? titleFrom(first) : (this.agentName ?? '');
  }

  /** Shown or not: a background tab collects attention, showing it clears it. */
  setBackground(background: boolean): void {
    this.background = background;
    // Left with a permission still waiting: that is news too.
    const next = background ? (this.session?.model.awaitingPermission ? 'permission' : this.attention) : undefined;
    if (next !== this.attention) {
      this.attention = next;
      this.attentionEmitter.fire();
    }
  }

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

  defaultAgent(): AgentConfig | undefined {
    const agents = this.host.agents();
    const name = vscode.workspace.getConfiguration('agentHost').get<string>('defaultAgent', '');
    return agents.find((a) => a.name === (this.currentName ?? name)) ?? agents[0];
  }

  select(name: string): void {
    this.currentName = name;
    this.stateEmitter.fire(this._state);
  }

  /** The running session, starting the selected agent if needed. */
  ensureStarted(): Promise<AgentSession> {
    if (this.session) return Promise.resolve(this.session);
    if (!this.starting) {
      const starting = this.start(this.generation).finally(() => {
        if (this.starting === starting) this.starting = undefined;
      });
      this.starting = starting;
    }
    return this.starting;
  }

  /**
   * Stops and starts the agent. By default the same session is reattached (resume → load → new, said in
   * the transcript); `fresh` opens a new one. A restart by the person also closes the crash breaker.
   */
  async restart(options: { fresh?: boolean } = {}): Promise<AgentSession> {
    await this.stop({ fresh: options.fresh === true });
    this.crashes = [];
    return this.ensureStarted();
  }

  /**
   * A new session of the same agent, warm when it runs: the new session opens on the running process
   * first (ACP agents share it per folder), then the old one is closed — no restart, no `initialize`.
   * Anything else (not running, an RPC agent) is a cold restart.
   */
  async newSession(): Promise<AgentSession> {
    const old = this.session;
    if (old?.agentInfo.protocol !== 'acp') return this.restart({ fresh: true });
    this.generation++;
    this.cancelRestart();
    this.freshNext = true;
    this.attachNext = undefined;
    this.crashes = [];
    this.session = undefined;
    this.process.dispose();
    this.sessionEmitter.fire(undefined);
    try {
      return await this.ensureStarted();
    } finally {
      await old.shutdown().catch((error: Error) => this.log.warn(`Closing the previous session failed: ${error.message}`));
    }
  }

  /**
   * Opens an earlier session of `agentName` (from history): that agent is started and the session
   * reattached by the ladder, with what `session/load` replays kept for the transcript. The tab takes `title`.
   */
  async openSession(agentName: string, sessionId: string, title?: string): Promise<AgentSession> {
    this.currentName = agentName;
    this.remembered = { agent: agentName, sessionId, ...(title ? { title } : {}) };
    await this.stop({ attach: { sessionId, replay: true } });
    this.crashes = [];
    return this.ensureStarted();
  }

  /**
   * Stops the agent. `next` says what the next start opens (set at once: a view may start the agent again
   * while the old one is still shutting down): a fresh session, a session from history, or by default the
   * last session again.
   */
  async stop(next: { fresh?: boolean; attach?: { sessionId: string; replay: boolean } } = {}): Promise<void> {
    // A start still in flight belongs to the agent being stopped: it must not become the session.
    this.generation++;
    this.cancelRestart();
    this.freshNext = next.fresh === true;
    this.attachNext = next.attach;
    // Taken at once: a start made while this stop waits (a prompt sent meanwhile) is not this stop's to end.
    const pending = this.starting;
    this.starting = undefined;
    const s = this.session;
    this.session = undefined;
    this.process.dispose();
    if (s) this.sessionEmitter.fire(undefined);
    if (pending)
      await pending.then(
        (late) => late.shutdown(),
        () => undefined,
      );
    if (s) await s.shutdown();
    if (!this.session && !this.starting) this.setState('stopped');
  }

  /**
   * Sends one prompt (text, or content blocks with context) and resolves with the stop reason. `display`: what
   * the transcript shows as the user's message instead (ACP sessions; RPC agents echo the prompt themselves).
   */
  async prompt(input: string | ContentPart[], display?: ContentPart[]): Promise<string> {
    const session = await this.ensureStarted();
    const parts = typeof input === 'string' ? [{ type: 'text', text: input }] : input;
    this.setState('busy');
    try {
      await Promise.all(this.host.beforeTurn().map((hook) => hook().catch((error: Error) => this.log.warn(`Before the turn: ${error.message}`))));
      return (await session.prompt(parts, display)).stopReason;
    } finally {
      if (this.session === session) this.setState('ready');
    }
  }

  /** The tab closes: its session is closed (when the agent offers it), then its process stops. */
  async close(): Promise<void> {
    const session = this.session;
    await session?.close?.().catch((error: Error) => this.log.warn(`session/close failed: ${error.message}`));
    await this.stop();
  }

  async cancel(): Promise<void> {
    await this.session?.cancel();
  }

  dispose(): void {
    this.cancelRestart();
    void this.stop().finally(() => this.forgetSecrets());
    this.silence.dispose();
    this.stateEmitter.dispose();
    this.eventEmitter.dispose();
    this.sessionEmitter.dispose();
    this.attentionEmitter.dispose();
  }

  /** In a background tab: a permission waiting, or a turn that ended, wants a look. */
  private noteUnseen(e: SessionEvent): void {
    if (e.type === 'entity' && e.entity.kind === 'permission' && e.entity.state !== 'pending' && this.attention === 'permission' && !this.session?.model.awaitingPermission) {
      // Answered elsewhere (the modal): nothing waits any more.
      this.attention = undefined;
      this.attentionEmitter.fire();
      return;
    }
    const next: TabAttention | undefined =
      e.type === 'entity' && e.entity.kind === 'permission' && e.entity.state === 'pending'
        ? 'permission'
        : e.type === 'turn' && e.state === 'idle' && this.attention !== 'permission'
          ? 'done'
          : undefined;
    if (next && next !== this.attention) {
      this.attention = next;
      this.attentionEmitter.fire();
    }
  }

  private async start(generation: number, attempt = 0): Promise<AgentSession> {
    requireTrust();
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
    const signIn = this.host.signIn();
    let restartAfterSignIn = false;
    const fresh = this.freshNext;
    this.freshNext = false;
    const last = this.remembered;
    const attach = this.attachNext ?? (!fresh && last?.agent === agent.name && last.sessionId ? { sessionId: last.sessionId } : undefined);
    this.attachNext = undefined;
    try {
      const env = signIn ? await signIn.env(agent) : {};
      this.forgetSecrets();
      this.forgetSecrets = registerEnvSecrets(agent.env, env);
      const environment: AgentEnvironment = { extra: env, full: () => agentEnvironment(agent, env) };
      const extra = Object.assign({}, ...(await Promise.all(this.host.services().map((s) => s(agent, cwd, environment))))) as Partial<AgentStartOptions>;
      if (Object.keys(env).length) extra.env = { ...(extra.env ?? {}), ...env };
      if (signIn) {
        extra.signIn = async (methods) => {
          const answer = await signIn.signIn(agent, methods);
          if (answer === 'restart') restartAfterSignIn = true;
          return typeof answer === 'object' ? answer.authenticate : undefined;
        };
      }
      const session = await this.host.startAgent(agent, {
        // Without a host that asks the person, nothing is approved.
        decidePermission: policyDecider('deny-all'),
        ...extra,
        logger: trafficLogger(redactingLogger(this.log), this.traffic),
        frameTap: (direction, frame) => this.traffic.frame(direction, frame),
        cwd,
        roots: folders,
        requestTimeoutMs: config.get<number>('requestTimeoutSeconds', 60) * 1000,
        initializeTimeoutMs: config.get<number>('initializeTimeoutSeconds', 60) * 1000,
        maxLineBytes: config.get<number>('maxLineBytes', DEFAULT_MAX_LINE_BYTES),
        ...(attach ? { attach } : {}),
        shareProcess: true,
      });
      if (generation !== this.generation) {
        // Stopped or restarted while it started (e.g. another agent was picked): never becomes current.
        await session.shutdown();
        throw new SupersededStartError(vscode.l10n.t('Agent "{0}" was stopped while it started', agent.name));
      }
      this.session = session;
      this.sessionEmitter.fire(session);
      this.process = new DisposableStore();
      this.process.addCallback(
        session.model.on((e) => {
          this.eventEmitter.fire(e);
          if (this.background) this.noteUnseen(e);
        }),
      );
      this.process.addCallback(
        session.onHealth((health, detail) => {
          this.unresponsive = health === 'unresponsive' ? detail : undefined;
          if (health === 'unresponsive') this.traffic.count('requestsTimedOut', `timed out: ${detail}`);
          this.stateEmitter.fire(this._state);
        }),
      );
      this.process.addCallback(
        session.onExit((exit) => {
          if (this.session !== session) return;
          this.session = undefined;
          this.process.dispose();
          this.sessionEmitter.fire(undefined);
          if (exit.code === 0 && !exit.signal) this.setState('stopped', describeExit(exit));
          else this.afterCrash(agent, exit);
        }),
      );
      for (const hook of this.host.processHooks()) this.process.add(hook(session, { agent, cwd }));
      if (session.attach.how === 'new') await this.host.prepareNew(session, agent);
      if (generation !== this.generation) throw new SupersededStartError(vscode.l10n.t('Agent "{0}" was stopped while it started', agent.name));
      if (this.session !== session) return session; // it exited meanwhile: the exit handler owns the state
      this.setState('ready');
      const title = (this.remembered?.sessionId === session.sessionId ? this.remembered.title : undefined) ?? session.model.messages('user')[0]?.text;
      this.remembered = { agent: agent.name, sessionId: session.sessionId, ...(title ? { title } : {}) };
      this.process.addCallback(
        session.model.on((e) => {
          if (e.type === 'turn' && e.state === 'idle' && !this.remembered?.title) {
            const first = session.model.messages('user')[0]?.text;
            if (first && this.remembered) {
              this.remembered = { ...this.remembered, title: titleFrom(first) };
              this.host.remember();
            }
          }
        }),
      );
      this.host.remember();
      const how = session.attach.requested ? ` (${session.attach.how}; asked for ${session.attach.requested})` : '';
      this.log.info(`Agent "${agent.name}" ready: session ${session.sessionId}${how}`);
      return session;
    } catch (error) {
      if (generation !== this.generation) throw error; // superseded: the newer start owns the state
      if (error instanceof AuthRequiredError && restartAfterSignIn && attempt < 2) {
        this.log.info(`Signed in outside "${agent.name}": starting it again`);
        return this.start(generation, attempt + 1);
      }
      if (error instanceof AgentExitedError) {
        // It went away while starting (a crash loop when it keeps doing so): same backoff and breaker.
        this.afterCrash(agent, error.exit);
        throw error;
      }
      const message =
        error instanceof AuthRequiredError ? vscode.l10n.t('{0}: {1}. Run "Atrium: Sign In" to sign in.', error.message, error.methods.map((m) => m.name).join(', ')) : (error as Error).message;
      this.setState('error', message);
      throw error;
    }
  }

  /** Counts the crash, then starts the agent again after the backoff, or opens the breaker and says why. */
  private afterCrash(agent: AgentConfig, exit: ExitInfo): void {
    if (exit.spawnError) {
      // Not a crash: it cannot run at all (a wrong path). Starting it again would fail the same way.
      this.setState('error', describeExit(exit));
      return;
    }
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < CRASH_POLICY.windowMs), now];
    const n = this.crashes.length;
    if (n >= CRASH_POLICY.breakAfter) {
      const message = vscode.l10n.t('Agent "{0}" crashed {1} times within {2} s, so it is not started again. Last exit: {3}', agent.name, n, CRASH_POLICY.windowMs / 1000, describeExit(exit));
      this.log.error(message);
      this.setState('error', message);
      return;
    }
    const delay = CRASH_POLICY.backoffMs[Math.min(n - 1, CRASH_POLICY.backoffMs.length - 1)]!;
    const [how, ...tail] = describeExit(exit).split('\n');
    const message = vscode.l10n.t('Agent "{0}" exited ({1}); starting it again in {2} s', agent.name, how!, delay / 1000);
    this.log.warn(message);
    this.traffic.count('restarts', message);
    // The stderr tail under it for the chat's notice (the header shows the first line; the log has each stderr line).
    this.setState('error', [message, ...tail].join('\n'));
    this.cancelRestart();
    const generation = this.generation;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (generation !== this.generation || this.session || this.starting) return;
      this.ensureStarted().catch((e: Error) => this.log.warn(`Restart after a crash failed: ${e.message}`));
    }, delay);
  }

  private cancelRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private setState(state: AgentState, error?: string): void {
    this._state = state;
    if (state === 'stopped' || state === 'starting') this.unresponsive = undefined;
    this.lastError = error;
    this.stateEmitter.fire(state);
  }
}
