import * as vscode from 'vscode';
import { DisposableStore } from '../core/lifetime';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentSession, AgentState } from '../session/agentSession';
import { AgentLifecycle, type AttachRequest, type LastSession, type StartPlan } from '../session/lifecycle';
import type { ContentPart, SessionEvent } from '../session/sessionModel';
import type { SelectionTaskRequest } from '../session/selectionTask';
import { titleFrom } from '../session/sessionStore';
import { TrafficLog } from '../session/traffic';
import { failureText, launchAgent, LIFECYCLE_TEXTS, type PinnedWorkspace, type SlotHost, type TurnHook, type TurnTab } from './slotStart';
import { TurnSilence } from './turnSilence';
import { requireTrust } from './workspaceTrust';

export { CRASH_POLICY, SupersededStartError, unlessSuperseded, type LastSession } from '../session/lifecycle';
export type { AgentEnvironment, PinnedWorkspace, ProcessContext, SessionServices, SlotHost, StartAgent, TurnHook, TurnTab } from './slotStart';

/** What a background tab has that the person has not seen: a permission to answer, or a finished turn. */
export type TabAttention = 'permission' | 'done';

/** One start in this editor: the configured agent, the folder it works in, and every workspace folder. */
interface SlotPlan extends StartPlan {
  config: AgentConfig;
  cwd: string;
}

/**
 * One conversation slot (a chat tab) as VS Code shows it: the agent picked, its lifecycle (generations, crash
 * restarts, breaker, reattach: src/session/lifecycle.ts), what a start lends the agent, the tab's title and
 * what a background tab has not shown. The manager holds several; views see the active one through it.
 */
export class AgentSlot implements vscode.Disposable {
  private readonly life: AgentLifecycle<SlotPlan>;
  private currentName: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<AgentState>();
  private readonly eventEmitter = new vscode.EventEmitter<SessionEvent>();
  private readonly sessionEmitter = new vscode.EventEmitter<AgentSession | undefined>();
  private readonly attentionEmitter = new vscode.EventEmitter<void>();
  /** The protocol stream of this tab's agent (frames both ways, stderr), for the traffic view. */
  readonly traffic = new TrafficLog();
  /** The running agent's env secrets, masked in the log and the traffic view while it runs. */
  private readonly secrets = { forget: () => undefined as void };
  /** While the tab is not shown, what happened there that the person has not seen. */
  attention: TabAttention | undefined;
  background = false;
  readonly onDidChangeAttention = this.attentionEmitter.event;
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onSessionEvent = this.eventEmitter.event;
  /** A new session started (views re-render from its model) or the session went away (undefined). */
  readonly onDidChangeSession = this.sessionEmitter.event;
  /** How long the running turn has heard nothing from the agent (reported past `agentHost.silenceWarningSeconds`). */
  readonly silence = new TurnSilence(this.onDidChangeSession, () => this.stateEmitter.fire(this.state));

  constructor(
    readonly id: string,
    private readonly host: SlotHost,
    restored?: LastSession,
    /** Set for a tab that works in a folder of its own (a fan-out run). */
    readonly pinned?: PinnedWorkspace,
  ) {
    this.currentName = restored?.agent;
    this.life = new AgentLifecycle<SlotPlan>(
      {
        log: host.log,
        texts: LIFECYCLE_TEXTS,
        plan: () => this.plan(),
        attached: (session, plan) => this.attached(session, plan),
        // A NEW session (not resumed or loaded) gets the agent's defaults before it is ready.
        prepare: async (session, plan) => (session.attach.how === 'new' ? this.host.prepareNew(session, plan.config) : undefined),
        describeFailure: failureText,
        remember: () => host.remember(),
      },
      restored,
    );
    this.life.onState((state) => this.stateEmitter.fire(state));
    this.life.onSession((session) => this.sessionEmitter.fire(session));
    this.life.onCrash((crash) => {
      if (crash.restartInMs !== undefined) this.traffic.count('restarts', crash.message);
    });
  }

  /** Kept across restarts and reloads: the session to reattach, and the tab's title. */
  get remembered(): LastSession | undefined {
    return this.life.remembered;
  }

  /** The tab's title: its first prompt (this process's or remembered), else the agent's name. */
  get title(): string {
    const remembered = this.remembered;
    const session = this.current;
    // A reattached session keeps the title of its first prompt, not of the first one since the reload.
    const kept = remembered?.title && (!session || remembered.sessionId === session.sessionId) ? remembered.title : undefined;
    const first = kept ?? session?.model.messages('user')[0]?.text ?? remembered?.title;
    if (this.pinned) return this.pinned.label;
    return first ? titleFrom(first) : (this.agentName ?? '');
  }

  /** Shown or not: a background tab collects attention, showing it clears it. */
  setBackground(background: boolean): void {
    this.background = background;
    // Left with a permission still waiting: that is news too.
    const next = background ? (this.current?.model.awaitingPermission ? 'permission' : this.attention) : undefined;
    if (next !== this.attention) {
      this.attention = next;
      this.attentionEmitter.fire();
    }
  }

  get state(): AgentState {
    return this.life.state;
  }
  get agentName(): string | undefined {
    return this.currentName ?? this.defaultAgent()?.name;
  }
  get error(): string | undefined {
    return this.life.error;
  }
  /** Why the agent counts as not answering (a request timed out), until it answers again. */
  get notAnswering(): string | undefined {
    return this.life.notAnswering;
  }
  get current(): AgentSession | undefined {
    return this.life.current;
  }

  defaultAgent(): AgentConfig | undefined {
    const agents = this.host.agents();
    const name = vscode.workspace.getConfiguration('agentHost').get<string>('defaultAgent', '');
    return agents.find((a) => a.name === (this.currentName ?? name)) ?? agents[0];
  }

  select(name: string): void {
    this.currentName = name;
    this.stateEmitter.fire(this.state);
  }

  /** The running session, starting the selected agent if needed. */
  ensureStarted(): Promise<AgentSession> {
    return this.life.ensureStarted();
  }
  /** Stops and starts the agent: the same session reattached (resume → load → new) unless `fresh`; closes the breaker. */
  restart(options: { fresh?: boolean } = {}): Promise<AgentSession> {
    return this.life.restart(options);
  }
  /** A new session of the same agent, warm on the running process when it can (see AgentLifecycle.newSession). */
  newSession(): Promise<AgentSession> {
    return this.life.newSession();
  }
  /** Opens an earlier session of `agentName` (from history), what a load replays kept; the tab takes `title`. */
  openSession(agentName: string, sessionId: string, title?: string): Promise<AgentSession> {
    this.currentName = agentName;
    return this.life.openSession(agentName, sessionId, title);
  }
  stop(next: { fresh?: boolean; attach?: AttachRequest } = {}): Promise<void> {
    return this.life.stop(next);
  }

  /**
   * Sends one prompt (text, or content blocks with context) and resolves with the stop reason. `display`: what
   * the transcript shows as the user's message instead (ACP sessions; RPC agents echo the prompt themselves).
   */
  prompt(input: string | ContentPart[], display?: ContentPart[], task?: SelectionTaskRequest): Promise<string> {
    const parts = typeof input === 'string' ? [{ type: 'text', text: input }] : input;
    const tab: TurnTab = { id: this.id, model: () => this.current?.model };
    const run = (hooks: TurnHook[], when: string, t: TurnTab) =>
      Promise.all(hooks.map((hook) => hook(t).catch((error: Error) => this.host.log.warn(`${when} the turn: ${error.message}`)))).then(() => undefined);
    // The after-turn hooks (the turn's summary) run before the prompt settles, so its caller sees them.
    return this.life
      .prompt(parts as ContentPart[], display, (session: AgentSession) => run(this.host.beforeTurn(), 'Before', { ...tab, session }), task)
      .finally(() => run(this.host.afterTurn(), 'After', tab));
  }

  /** The tab closes: its session is closed (when the agent offers it), then its process stops. */
  close(): Promise<void> {
    return this.life.close();
  }

  async cancel(): Promise<void> {
    await this.life.cancel();
  }

  dispose(): void {
    void this.life.stop().finally(() => this.secrets.forget());
    this.silence.dispose();
    this.stateEmitter.dispose();
    this.eventEmitter.dispose();
    this.sessionEmitter.dispose();
    this.attentionEmitter.dispose();
  }

  /** In a background tab: a permission waiting, or a turn that ended, wants a look. */
  private noteUnseen(e: SessionEvent): void {
    if (e.type === 'entity' && e.entity.kind === 'permission' && e.entity.state !== 'pending' && this.attention === 'permission' && !this.current?.model.awaitingPermission) {
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

  /** What the next start runs: the picked agent in the first workspace folder (Restricted Mode starts none). */
  private plan(): SlotPlan {
    requireTrust();
    const config = this.defaultAgent();
    if (!config) throw new Error(vscode.l10n.t('No agent is configured. Add one to the "agentHost.agents" setting.'));
    const folders = this.pinned ? [this.pinned.folder] : (vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? []);
    const cwd = folders[0];
    if (!cwd) throw new Error(vscode.l10n.t('Open a folder first: the agent works inside the workspace.'));
    this.currentName = config.name;
    return {
      agent: config.name,
      config,
      cwd,
      launch: (attach) => launchAgent(this.host, { agent: config, cwd, folders, pinned: this.pinned !== undefined, attach, traffic: this.traffic, secrets: this.secrets }),
    };
  }

  /** The session became current: its events reach the views (and a background tab's badge), the host's process hooks run. */
  private attached(session: AgentSession, plan: SlotPlan): () => void {
    const process = new DisposableStore();
    process.addCallback(
      session.model.on((e) => {
        this.eventEmitter.fire(e);
        if (this.background) this.noteUnseen(e);
        // A session without a title takes its first prompt's once that turn ends.
        const remembered = this.life.remembered;
        const first = e.type === 'turn' && e.state === 'idle' && remembered?.sessionId === session.sessionId && !remembered.title && session.model.messages('user')[0]?.text;
        if (first) {
          this.life.remembered = { ...remembered, title: titleFrom(first) };
          this.host.remember();
        }
      }),
    );
    process.addCallback(session.onHealth((health, detail) => health === 'unresponsive' && this.traffic.count('requestsTimedOut', `timed out: ${detail}`)));
    for (const hook of this.host.processHooks()) process.add(hook(session, { agent: plan.config, cwd: plan.cwd }));
    return () => process.dispose();
  }
}
