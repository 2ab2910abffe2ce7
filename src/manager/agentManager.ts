import * as vscode from 'vscode';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentSession, AgentState } from '../session/agentSession';
import type { SignInHandler } from '../session/sessionHost';
import type { ContentPart, SessionEvent } from '../session/sessionModel';
import type { SelectionTaskRequest } from '../session/selectionTask';
import type { TrafficLog } from '../session/traffic';
import { AgentDefaults, type AgentChoices } from './agentDefaults';
import { AgentSlot, type LastSession, type PinnedWorkspace, type ProcessContext, type SessionServices, type SlotHost, type StartAgent, type TabAttention, type TurnHook } from './agentSlot';
import { AgentProblemReporter, type AgentList, readAgentList, type SettingsFiles } from './agentSources';

export { CRASH_POLICY, SupersededStartError, unlessSuperseded } from './agentSlot';
export { RestrictedModeError, restrictedModeMessage } from './workspaceTrust';
export type { AgentEnvironment, PinnedWorkspace, ProcessContext, SessionServices, StartAgent, TabAttention, TurnHook, TurnTab } from './agentSlot';
export type { SignInHandler };
export type { AgentState };

/** The open tabs and which one is shown, kept per workspace so a reload brings them back. */
const TABS_KEY = 'agentHost.tabs';
/** Before tabs: the one session the chat showed. Read once to carry it over. */
const LEGACY_LAST_KEY = 'agentHost.session.last';
interface SavedTabs {
  tabs: { id: string; last?: LastSession; agent?: string }[];
  active: string;
}

/** One tab as views show it. */
export interface TabInfo {
  id: string;
  title: string;
  agent?: string;
  state: AgentState;
  active: boolean;
  attention?: TabAttention;
  /** The folder of a tab pinned to one (a fan-out run's worktree). */
  folder?: string;
}

/**
 * Owns the configured agents and the open conversations (tabs), each an `AgentSlot` with its own process
 * and session; every tab streams on its own, switching never stops a turn. Everything views read — the
 * session, its state, prompt, cancel, stop, restart — is the active tab's; its events are forwarded.
 */
export class AgentManager implements vscode.Disposable {
  private slots: AgentSlot[] = [];
  private active!: AgentSlot;
  private tabCount = 0;
  private readonly subs = new Map<AgentSlot, vscode.Disposable[]>();
  private readonly stateEmitter = new vscode.EventEmitter<AgentState>();
  private readonly eventEmitter = new vscode.EventEmitter<SessionEvent>();
  private readonly sessionEmitter = new vscode.EventEmitter<AgentSession | undefined>();
  private readonly tabsEmitter = new vscode.EventEmitter<{ switched: boolean }>();
  private services: SessionServices[] = [];
  private signInHandler: SignInHandler | undefined;
  private beforeTurnHooks: TurnHook[] = [];
  private afterTurnHooks: TurnHook[] = [];
  private processHooks: ((session: AgentSession, context: ProcessContext) => vscode.Disposable)[] = [];
  private readonly host: SlotHost;
  /** An agent added or the default changed (Add Agent…, settings): views show the new list at once. */
  private listCache: AgentList | undefined;
  private readonly problems: AgentProblemReporter;
  private readonly configListener = vscode.Disposable.from(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentHost.agents')) this.listCache = undefined;
      if (e.affectsConfiguration('agentHost.agents') || e.affectsConfiguration('agentHost.defaultAgent')) this.stateEmitter.fire(this.state);
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      this.listCache = undefined;
      this.stateEmitter.fire(this.state);
    }),
  );
  /** Per-agent defaults and the cache of each agent's last offer (global state). */
  readonly defaults: AgentDefaults;

  readonly onDidChangeState = this.stateEmitter.event;
  readonly onSessionEvent = this.eventEmitter.event;
  /** A new session started in the active tab (views re-render from its model), or it went away (undefined). */
  readonly onDidChangeSession = this.sessionEmitter.event;
  /** Tabs opened, closed, renamed, badged, or (`switched`) another tab became the active one. */
  readonly onDidChangeTabs = this.tabsEmitter.event;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    startAgent: StartAgent,
    /** Where the tabs and their sessions are kept (workspace state); without it nothing is reattached. */
    private readonly memento?: vscode.Memento,
    /** Where per-agent defaults and offers are kept (global state). */
    globalMemento?: vscode.Memento,
    /** The User and Remote settings files, read to merge agents across both (see agentSources.ts). */
    private readonly settingsFiles: SettingsFiles = {},
  ) {
    this.problems = new AgentProblemReporter(log);
    this.defaults = new AgentDefaults(globalMemento);
    this.host = {
      log,
      startAgent,
      agents: () => this.agents(),
      services: () => this.services,
      signIn: () => this.signInHandler,
      beforeTurn: () => this.beforeTurnHooks,
      afterTurn: () => this.afterTurnHooks,
      processHooks: () => this.processHooks,
      remember: () => this.save(),
      prepareNew: async (session, agent) => {
        const { applied, skipped } = await this.defaults.apply(session, agent);
        if (applied.length || skipped.length) {
          log.info(`Agent "${agent.name}": defaults applied to the new session: ${applied.join(', ') || 'none'}${skipped.length ? `; not applied: ${skipped.join('; ')}` : ''}`);
        }
      },
    };
    const saved = memento?.get<SavedTabs>(TABS_KEY);
    if (saved?.tabs.length) {
      for (const t of saved.tabs) this.add(t.id, t.last ?? (t.agent ? { agent: t.agent, sessionId: '' } : undefined));
      this.active = this.slots.find((s) => s.id === saved.active) ?? this.slots[0]!;
    } else {
      const legacy = memento?.get<LastSession>(LEGACY_LAST_KEY);
      this.active = this.add(undefined, legacy);
    }
    for (const s of this.slots) s.setBackground(s !== this.active);
  }

  // ------------------------------------------------------------------ the active tab, for every view

  get state(): AgentState {
    return this.active.state;
  }
  get agentName(): string | undefined {
    return this.active.agentName;
  }
  get error(): string | undefined {
    return this.active.error;
  }
  /** Why the agent counts as not answering (a request timed out), until it answers again. */
  get notAnswering(): string | undefined {
    return this.active.notAnswering;
  }
  /** Whole seconds the running turn has heard nothing from the agent, once past the setting; else undefined. */
  get silentFor(): number | undefined {
    return this.active.silence.seconds;
  }
  get current(): AgentSession | undefined {
    return this.active.current;
  }
  get activeTabId(): string {
    return this.active.id;
  }

  defaultAgent(): AgentConfig | undefined {
    return this.active.defaultAgent();
  }
  select(name: string): void {
    this.active.select(name);
  }
  ensureStarted(): Promise<AgentSession> {
    return this.active.ensureStarted();
  }
  /**
   * A choice made in the header (mode, model, a config option): applied to the active tab's session and
   * remembered as that agent's default. Made while the agent starts, it is only remembered and applies
   * when the new session comes. Resolves whether a running session took it.
   */
  async choose(choice: AgentChoices, apply: (session: AgentSession) => Promise<void>): Promise<boolean> {
    const agent = this.agentName;
    const session = this.current;
    if (session) await apply(session);
    else if (!agent || this.state !== 'starting') throw new Error(vscode.l10n.t('The agent is not running.'));
    if (agent) await this.defaults.remember(agent, choice);
    return session !== undefined;
  }

  /** The active tab's protocol stream (the traffic view follows the active tab). */
  get traffic(): TrafficLog {
    return this.active.traffic;
  }

  /** A new session in the active tab (warm: on the running process when the agent shares it). */
  newSession(): Promise<AgentSession> {
    return this.active.newSession();
  }

  restart(options: { fresh?: boolean } = {}): Promise<AgentSession> {
    return this.active.restart(options);
  }
  openSession(agentName: string, sessionId: string, title?: string): Promise<AgentSession> {
    return this.active.openSession(agentName, sessionId, title);
  }
  stop(next: Parameters<AgentSlot['stop']>[0] = {}): Promise<void> {
    return this.active.stop(next);
  }
  prompt(input: string | ContentPart[], display?: ContentPart[], task?: SelectionTaskRequest): Promise<string> {
    return this.active.prompt(input, display, task);
  }
  cancel(): Promise<void> {
    return this.active.cancel();
  }

  // ------------------------------------------------------------------ tabs

  tabs(): TabInfo[] {
    return this.slots.map((s) => ({
      id: s.id,
      title: s.title,
      ...(s.agentName ? { agent: s.agentName } : {}),
      state: s.state,
      active: s === this.active,
      ...(s.attention ? { attention: s.attention } : {}),
      ...(s.pinned ? { folder: s.pinned.folder } : {}),
    }));
  }

  /** Opens a new tab (with `agentName`, else the active tab's agent) and shows it; its agent starts. */
  newTab(agentName?: string): string {
    const slot = this.add(undefined, undefined);
    slot.select(agentName ?? this.active.agentName ?? '');
    this.show(slot);
    slot.ensureStarted().catch((e: Error) => this.log.warn(`New tab: the agent did not start: ${e.message}`));
    return slot.id;
  }

  /**
   * Opens a tab that works in a folder of its own (a fan-out run's worktree) with `agentName`, in the background
   * unless `show`; its agent starts. Resolves with the tab's id once its session is ready (rejects when it fails).
   */
  async openPinnedTab(agentName: string, pinned: PinnedWorkspace, show = false): Promise<string> {
    const slot = this.add(undefined, undefined, pinned);
    slot.select(agentName);
    slot.setBackground(true);
    if (show) this.show(slot);
    else this.changed(false);
    await slot.ensureStarted();
    return slot.id;
  }

  /**
   * Opens a tab in the background with `agentName` — continuing its session `sessionId` when given (replayed or
   * resumed as the sidebar's history does) — for a conversation held outside the sidebar (VS Code's Chat view).
   * Resolves with the tab's id once its session is ready (rejects when it fails; the tab stays, saying why).
   */
  async openBackgroundTab(agentName: string, sessionId?: string): Promise<string> {
    const slot = this.add(undefined, undefined);
    slot.select(agentName);
    slot.setBackground(true);
    this.changed(false);
    if (sessionId) await slot.openSession(agentName, sessionId);
    else await slot.ensureStarted();
    return slot.id;
  }

  /** Whether tab `id` is open. */
  hasTab(id: string): boolean {
    return this.slots.some((s) => s.id === id);
  }

  /** Sends a prompt in tab `id` (shown or not); resolves with how the turn ended. */
  promptIn(id: string, input: string | ContentPart[]): Promise<string> {
    const slot = this.slots.find((s) => s.id === id);
    if (!slot) return Promise.reject(new Error(`no tab ${id}`));
    return slot.prompt(input);
  }

  /** Tab `id`'s running session, if any. */
  sessionIn(id: string): AgentSession | undefined {
    return this.slots.find((s) => s.id === id)?.current;
  }

  /** Cancels the turn running in tab `id`. */
  cancelIn(id: string): Promise<void> {
    return this.slots.find((s) => s.id === id)?.cancel() ?? Promise.resolve();
  }

  /** Shows another tab; nothing stops — the tab left keeps streaming in the background. */
  switchTab(id: string): void {
    const slot = this.slots.find((s) => s.id === id);
    if (slot && slot !== this.active) this.show(slot);
  }

  /** Closes a tab and stops its agent; the last tab is never closed (it starts a fresh session instead). */
  async closeTab(id: string): Promise<void> {
    const slot = this.slots.find((s) => s.id === id);
    if (!slot) return;
    if (this.slots.length === 1) {
      await slot.restart({ fresh: true }).catch(() => undefined);
      return;
    }
    const i = this.slots.indexOf(slot);
    this.slots.splice(i, 1);
    for (const d of this.subs.get(slot) ?? []) d.dispose();
    this.subs.delete(slot);
    // Saved at once, whichever tab closes: a reload must not bring a closed tab back.
    if (slot === this.active) this.show(this.slots[Math.min(i, this.slots.length - 1)]!);
    else {
      this.save();
      this.changed(false);
    }
    await slot.close();
    slot.dispose();
  }

  // ------------------------------------------------------------------ configuration and host hooks

  /** The agents of every settings layer, merged by name (src/manager/agentSources.ts); read again on change. */
  agents(): AgentConfig[] {
    return this.agentList().agents;
  }

  /** Where an agent's entry comes from ("User", "Remote", "Workspace", "Folder <name>"). */
  agentSource(name: string): string | undefined {
    return this.agentList().sources.get(name);
  }

  private agentList(): AgentList {
    if (!this.listCache) {
      this.listCache = readAgentList(this.settingsFiles);
      this.problems.report(this.listCache.problems);
    }
    return this.listCache;
  }

  /** Adds a provider of session services; later providers override earlier ones key by key. */
  addSessionServices(services: SessionServices): vscode.Disposable {
    this.services.push(services);
    return new vscode.Disposable(() => {
      this.services = this.services.filter((s) => s !== services);
    });
  }

  /** Awaited before every prompt is sent (e.g. the snapshot the turn's disk changes are measured against). */
  addBeforeTurn(hook: TurnHook): vscode.Disposable {
    this.beforeTurnHooks.push(hook);
    return new vscode.Disposable(() => {
      this.beforeTurnHooks = this.beforeTurnHooks.filter((h) => h !== hook);
    });
  }

  /** Awaited when a turn ends, before its prompt settles (e.g. the summary of the files it changed). */
  addAfterTurn(hook: TurnHook): vscode.Disposable {
    this.afterTurnHooks.push(hook);
    return new vscode.Disposable(() => {
      this.afterTurnHooks = this.afterTurnHooks.filter((h) => h !== hook);
    });
  }

  /** Called for every agent process that starts (in any tab); what it returns is disposed when that process goes. */
  onEachProcess(hook: (session: AgentSession, context: ProcessContext) => vscode.Disposable): vscode.Disposable {
    this.processHooks.push(hook);
    return new vscode.Disposable(() => {
      this.processHooks = this.processHooks.filter((h) => h !== hook);
    });
  }

  setSignIn(handler: SignInHandler | undefined): vscode.Disposable {
    this.signInHandler = handler;
    return new vscode.Disposable(() => {
      if (this.signInHandler === handler) this.signInHandler = undefined;
    });
  }

  dispose(): void {
    this.configListener.dispose();
    for (const s of this.slots) s.dispose();
    for (const list of this.subs.values()) for (const d of list) d.dispose();
    this.stateEmitter.dispose();
    this.eventEmitter.dispose();
    this.sessionEmitter.dispose();
    this.tabsEmitter.dispose();
  }

  /** Stops every tab's agent (the extension host is going). */
  async stopAll(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.stop()));
  }

  // ------------------------------------------------------------------ inside

  private add(id: string | undefined, last: LastSession | undefined, pinned?: PinnedWorkspace): AgentSlot {
    const tabId = id ?? this.nextId();
    this.tabCount = Math.max(this.tabCount, Number(tabId.replace(/^t/, '')) || 0);
    const slot = new AgentSlot(tabId, this.host, last?.sessionId ? last : undefined, pinned);
    if (last && !last.sessionId) slot.select(last.agent);
    const forward = <T>(event: vscode.Event<T>, emitter: vscode.EventEmitter<T>) => event((v) => slot === this.active && emitter.fire(v));
    this.subs.set(slot, [
      forward(slot.onDidChangeState, this.stateEmitter),
      forward(slot.onSessionEvent, this.eventEmitter),
      forward(slot.onDidChangeSession, this.sessionEmitter),
      slot.onDidChangeState(() => this.changed(false)),
      slot.onDidChangeAttention(() => this.changed(false)),
    ]);
    this.slots.push(slot);
    this.save();
    return slot;
  }

  private nextId(): string {
    return `t${++this.tabCount}`;
  }

  private show(slot: AgentSlot): void {
    this.active.setBackground(true);
    this.active = slot;
    slot.setBackground(false);
    this.save();
    this.changed(true);
    this.sessionEmitter.fire(slot.current);
    this.stateEmitter.fire(slot.state);
  }

  private changed(switched: boolean): void {
    this.tabsEmitter.fire({ switched });
  }

  private save(): void {
    if (!this.memento || !this.active) return;
    // A tab pinned to a run's worktree is not brought back by a reload (the run's view lists kept runs).
    const kept = this.slots.filter((s) => !s.pinned);
    const saved: SavedTabs = {
      tabs: kept.map((s) => ({ id: s.id, ...(s.remembered ? { last: s.remembered } : s.agentName ? { agent: s.agentName } : {}) })),
      active: this.active.pinned ? (kept[0]?.id ?? '') : this.active.id,
    };
    void this.memento.update(TABS_KEY, saved);
  }
}
