/**
 * One agent's lifecycle, without the editor: which start counts (a start that a later stop, restart or switch
 * overtook is dropped), crash restarts with backoff and the breaker, which session the next start reattaches,
 * and what a stop does to a running turn. Driven by its calls and the session's exit, on a clock tests control.
 * The editor's AgentSlot and the CLI both run on it; how an agent is started is theirs (`StartPlan`).
 */
import { AgentExitedError, describeExit, type ExitInfo } from '../core/agentProcess';
import { Listeners } from '../core/listeners';
import type { Logger } from '../core/log';
import type { AgentSession, AgentState } from './agentSession';
import type { ContentPart } from './sessionModel';
import type { SelectionTaskRequest } from './selectionTask';

/** Time as the lifecycle sees it: the system's, or one a test moves by hand. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * After a crash the agent is started again after 1 s, 2 s, 4 s …; a third crash within a minute opens the
 * breaker (no more automatic starts until the person starts it).
 */
export const CRASH_POLICY = { backoffMs: [1000, 2000, 4000], breakAfter: 3, windowMs: 60_000 };

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

/** The agent crashed under a running turn: the turn is lost (what it did so far stays in the transcript). */
export class TurnInterruptedError extends AgentExitedError {
  constructor(agent: string, exit: ExitInfo) {
    super(exit);
    this.message = exit.disconnected
      ? `The connection to agent "${agent}" dropped during the turn, which is lost (${exit.disconnected})`
      : `Agent "${agent}" exited during the turn, which is lost: ${describeExit(exit)}`;
  }
}

/** The agent was stopped (stop, restart, switch, tab closed) while a turn ran: the turn ends with it. */
export class TurnStoppedError extends AgentExitedError {
  constructor(agent: string, exit: ExitInfo) {
    super(exit);
    this.message = `Agent "${agent}" was stopped during the turn`;
  }
}

/** A session to reattach (kept with the tabs across restarts and reloads), and its title. */
export interface LastSession {
  agent: string;
  sessionId: string;
  title?: string;
}

/** Which earlier session a start asks the agent for (resume → load → new is the adapter's ladder). */
export interface AttachRequest {
  sessionId: string;
  /** Keep what `session/load` replays (a session opened from history). */
  replay?: boolean;
}

/** What one start runs: the agent (by name, for the reattach choice) and how to launch it. */
export interface StartPlan {
  agent: string;
  launch(attach: AttachRequest | undefined): Promise<AgentSession>;
}

/** What the person reads when the agent crashes (the editor localizes them). */
export interface LifecycleTexts {
  restarting(agent: string, how: string, seconds: number): string;
  breaker(agent: string, crashes: number, windowSeconds: number, exit: string): string;
  superseded(agent: string): string;
  /** How the agent went away (the breaker's "last exit", the restart's reason). */
  exit(exit: ExitInfo): string;
}

export const ENGLISH_TEXTS: LifecycleTexts = {
  restarting: (agent, how, seconds) => `Agent "${agent}" exited (${how}); starting it again in ${seconds} s`,
  breaker: (agent, n, window, exit) => `Agent "${agent}" crashed ${n} times within ${window} s, so it is not started again. Last exit: ${exit}`,
  superseded: (agent) => `Agent "${agent}" was stopped while it started`,
  exit: describeExit,
};

/** A crash as the lifecycle took it: a restart after `restartInMs`, or (undefined) the breaker opened. */
export interface CrashEvent {
  agent: string;
  exit: ExitInfo;
  crashes: number;
  restartInMs?: number;
  /** A turn was running. */
  midTurn: boolean;
  message: string;
}

export interface LifecycleOptions<P extends StartPlan = StartPlan> {
  log: Logger;
  /** What the next start runs; throws when nothing can start (no agent, no folder, Restricted Mode). */
  plan(): P | Promise<P>;
  /** The session became current: what the host hangs on it (listeners); what it returns is called when the session goes. */
  attached?(session: AgentSession, plan: P): (() => void) | undefined;
  /** Before the session counts as ready (a new session gets the agent's defaults). */
  prepare?(session: AgentSession, plan: P): Promise<void>;
  /** The error state's text for a start that failed with `error`; undefined leaves the state as it is. */
  describeFailure?(error: Error): string | undefined;
  /** The session to reattach (or its title) changed: persist it. */
  remember?(): void;
  clock?: Clock;
  texts?: LifecycleTexts;
  policy?: typeof CRASH_POLICY;
}

/** Stops, restarts and opens sessions; every start is numbered so only the newest one becomes current. */
export class AgentLifecycle<P extends StartPlan = StartPlan> {
  private session: AgentSession | undefined;
  private starting: Promise<AgentSession> | undefined;
  /** Bumped by every stop; a start that finishes under an older generation shuts its agent down. */
  private generation = 0;
  private _state: AgentState = 'stopped';
  private lastError: string | undefined;
  private unresponsive: string | undefined;
  /** What the current session's host hooks and our listeners hang on it, undone when it goes. */
  private detach: (() => void)[] = [];
  /** When the agent crashed recently (a crash loop opens the breaker). */
  private crashes: number[] = [];
  private scheduled: { handle: unknown; done: Promise<AgentSession>; cancel: () => void } | undefined;
  /** What the next start opens: a new session, a session from history, or (neither) the remembered one. */
  private next: { fresh?: boolean; attach?: AttachRequest } = {};
  /** Sessions we stopped: their turns end as stopped, not crashed. */
  private readonly stopped = new WeakSet<AgentSession>();
  private turns = 0;
  /** The agent of the last start, by its configured name. */
  private planned: string | undefined;
  private readonly clock: Clock;
  private readonly texts: LifecycleTexts;
  private readonly policy: typeof CRASH_POLICY;
  private readonly stateListeners = new Listeners<AgentState>();
  private readonly sessionListeners = new Listeners<AgentSession | undefined>();
  private readonly crashListeners = new Listeners<CrashEvent>();
  /** Kept across restarts (and by the host across reloads): the session to reattach, and its title. */
  remembered: LastSession | undefined;

  constructor(
    private readonly options: LifecycleOptions<P>,
    remembered?: LastSession,
  ) {
    this.remembered = remembered;
    this.clock = options.clock ?? systemClock;
    this.texts = options.texts ?? ENGLISH_TEXTS;
    this.policy = options.policy ?? CRASH_POLICY;
  }

  get state(): AgentState {
    return this._state;
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
  /** The start a crash scheduled (its session, or its failure); undefined when none waits. */
  get pendingRestart(): Promise<AgentSession> | undefined {
    return this.scheduled?.done;
  }

  onState(listener: (state: AgentState) => void): () => void {
    return this.stateListeners.add(listener);
  }
  /** A new session became current, or the session went away (undefined). */
  onSession(listener: (session: AgentSession | undefined) => void): () => void {
    return this.sessionListeners.add(listener);
  }
  onCrash(listener: (crash: CrashEvent) => void): () => void {
    return this.crashListeners.add(listener);
  }

  /** The running session, starting the agent if needed. */
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

  /** Stops and starts the agent (the same session reattached unless `fresh`); the person's restart closes the breaker. */
  async restart(options: { fresh?: boolean } = {}): Promise<AgentSession> {
    await this.stop({ fresh: options.fresh === true });
    this.crashes = [];
    return this.ensureStarted();
  }

  /**
   * A new session of the same agent, warm when it runs: the new session opens on the running process first
   * (ACP agents share it per folder), then the old one is closed. Anything else is a cold restart.
   */
  async newSession(): Promise<AgentSession> {
    const old = this.session;
    if (!old?.sessionsShareProcess) return this.restart({ fresh: true });
    this.generation++;
    this.cancelRestart();
    this.next = { fresh: true };
    this.crashes = [];
    this.drop(true);
    try {
      return await this.ensureStarted();
    } finally {
      await old.shutdown().catch((error: Error) => this.options.log.warn(`Closing the previous session failed: ${error.message}`));
    }
  }

  /** Starts `agent`'s earlier session `sessionId` (from history), keeping what a load replays; the tab takes `title`. */
  async openSession(agent: string, sessionId: string, title?: string): Promise<AgentSession> {
    this.remembered = { agent, sessionId, ...(title ? { title } : {}) };
    await this.stop({ attach: { sessionId, replay: true } });
    this.crashes = [];
    return this.ensureStarted();
  }

  /**
   * Stops the agent: a start in flight is dropped when it lands, a scheduled restart is cancelled, a running
   * turn fails with TurnStoppedError (its requests fail as the agent goes). `next` is what the next start
   * opens, set at once: a view may start the agent again while this one is still shutting down.
   */
  async stop(next: { fresh?: boolean; attach?: AttachRequest } = {}): Promise<void> {
    this.generation++;
    this.cancelRestart();
    this.next = next;
    // Taken at once: a start made while this stop waits (a prompt sent meanwhile) is not this stop's to end.
    const pending = this.starting;
    this.starting = undefined;
    const s = this.drop(true);
    if (pending)
      await pending.then(
        (late) => late.shutdown(),
        () => undefined,
      );
    if (s) await s.shutdown();
    if (!this.session && !this.starting) this.setState('stopped');
  }

  /** Sends one prompt and resolves with the stop reason; `before` runs once the agent is ready, before the prompt goes. */
  /** `task`: the same request as a structured selection task, sent as such to an agent that runs them itself. */
  async prompt(parts: ContentPart[], display?: ContentPart[], before?: (session: AgentSession) => Promise<void>, task?: SelectionTaskRequest): Promise<string> {
    const session = await this.ensureStarted();
    const agent = session.agentInfo.name;
    this.setState('busy');
    this.turns++;
    try {
      await before?.(session);
      const tasks = task ? session.selectionTasks : undefined;
      return (await (tasks ? tasks.run(task!, display ?? parts) : session.prompt(parts, display))).stopReason;
    } catch (error) {
      if (!(error instanceof AgentExitedError) || error instanceof TurnInterruptedError || error instanceof TurnStoppedError) throw error;
      // The exit is taken (crash counted, restart scheduled) before the caller hears of the lost turn.
      if (this.session === session) await new Promise<void>((resolve) => session.onExit(() => resolve()));
      throw this.stopped.has(session) ? new TurnStoppedError(this.planned ?? agent, error.exit) : new TurnInterruptedError(this.planned ?? agent, error.exit);
    } finally {
      this.turns--;
      // A task the agent cancelled for a newer one ends while that one still runs.
      if (this.session === session) this.setState(this.turns > 0 ? 'busy' : 'ready');
    }
  }

  async cancel(): Promise<void> {
    await this.session?.cancel();
  }

  /** The session is closed for good (when the agent offers it), then the agent stops. */
  async close(): Promise<void> {
    await this.session?.close?.().catch((error: Error) => this.options.log.warn(`session/close failed: ${error.message}`));
    await this.stop();
  }

  private async start(generation: number): Promise<AgentSession> {
    let plan: P;
    try {
      plan = await this.options.plan();
    } catch (error) {
      this.failed(error as Error);
      throw error;
    }
    this.planned = plan.agent;
    this.setState('starting');
    const attach = this.chooseAttach(plan.agent);
    try {
      const session = await plan.launch(attach);
      if (generation !== this.generation) {
        // Stopped or restarted while it started (e.g. another agent was picked): never becomes current.
        await session.shutdown();
        throw new SupersededStartError(this.texts.superseded(plan.agent));
      }
      this.session = session;
      this.sessionListeners.fire(session);
      this.detach = [
        // A fork at a message goes on under a new id: a reload reattaches the fork.
        session.model.on((e) => {
          if (e.type !== 'truncated' || !this.remembered || this.remembered.sessionId === session.sessionId) return;
          this.remembered = { ...this.remembered, sessionId: session.sessionId };
          this.options.remember?.();
        }),
        session.onHealth((health, detail) => {
          this.unresponsive = health === 'unresponsive' ? detail : undefined;
          this.stateListeners.fire(this._state);
        }),
        session.onExit((exit) => {
          if (this.session !== session) return;
          const midTurn = this.turns > 0;
          this.drop();
          if (exit.code === 0 && !exit.signal) this.setState('stopped', describeExit(exit));
          else this.afterCrash(plan.agent, exit, midTurn);
        }),
      ];
      const undo = this.options.attached?.(session, plan);
      if (undo) this.detach.push(undo);
      await this.options.prepare?.(session, plan);
      if (generation !== this.generation) throw new SupersededStartError(this.texts.superseded(plan.agent));
      if (this.session !== session) return session; // it exited meanwhile: the exit handler owns the state
      this.setState('ready');
      const title = (this.remembered?.sessionId === session.sessionId ? this.remembered.title : undefined) ?? session.model.messages('user')[0]?.text;
      this.remembered = { agent: plan.agent, sessionId: session.sessionId, ...(title ? { title } : {}) };
      this.options.remember?.();
      const how = session.attach.requested ? ` (${session.attach.how}; asked for ${session.attach.requested})` : '';
      this.options.log.info(`Agent "${plan.agent}" ready: session ${session.sessionId}${how}`);
      return session;
    } catch (error) {
      if (generation !== this.generation) throw error; // superseded: the newer start owns the state
      // It went away while starting (a crash loop when it keeps doing so): same backoff and breaker.
      if (error instanceof AgentExitedError) this.afterCrash(plan.agent, error.exit, false);
      else this.failed(error as Error);
      throw error;
    }
  }

  /** The reattach choice: a session from history, else nothing when fresh, else the remembered one of this agent. */
  private chooseAttach(agent: string): AttachRequest | undefined {
    const { fresh, attach } = this.next;
    this.next = {};
    if (attach) return attach;
    const last = this.remembered;
    return !fresh && last?.agent === agent && last.sessionId ? { sessionId: last.sessionId } : undefined;
  }

  /** Counts the crash, then starts the agent again after the backoff, or opens the breaker and says why. */
  private afterCrash(agent: string, exit: ExitInfo, midTurn: boolean): void {
    if (exit.spawnError) {
      // Not a crash: it cannot run at all (a wrong path). Starting it again would fail the same way.
      this.setState('error', describeExit(exit));
      return;
    }
    const now = this.clock.now();
    this.crashes = [...this.crashes.filter((t) => now - t < this.policy.windowMs), now];
    const n = this.crashes.length;
    if (n >= this.policy.breakAfter) {
      const message = this.texts.breaker(agent, n, this.policy.windowMs / 1000, this.texts.exit(exit));
      this.options.log.error(message);
      this.setState('error', message);
      this.crashListeners.fire({ agent, exit, crashes: n, midTurn, message });
      return;
    }
    const delay = this.policy.backoffMs[Math.min(n - 1, this.policy.backoffMs.length - 1)]!;
    const [how, ...tail] = this.texts.exit(exit).split('\n');
    const message = this.texts.restarting(agent, how!, delay / 1000);
    this.options.log.warn(message);
    // The stderr tail under it for the chat's notice (the header shows the first line; the log has each stderr line).
    this.setState('error', [message, ...tail].join('\n'));
    this.scheduleRestart(delay);
    this.crashListeners.fire({ agent, exit, crashes: n, restartInMs: delay, midTurn, message });
  }

  private scheduleRestart(delay: number): void {
    this.cancelRestart();
    const generation = this.generation;
    let settle!: { resolve: (s: AgentSession) => void; reject: (e: Error) => void };
    const done = new Promise<AgentSession>((resolve, reject) => (settle = { resolve, reject }));
    done.catch(() => undefined); // nobody need wait for it: failures are logged below
    const handle = this.clock.setTimeout(() => {
      if (this.scheduled?.handle === handle) this.scheduled = undefined;
      if (generation !== this.generation) return settle.reject(new SupersededStartError(this.texts.superseded(this.planned ?? '')));
      this.ensureStarted().then(settle.resolve, (e: Error) => {
        this.options.log.warn(`Restart after a crash failed: ${e.message}`);
        settle.reject(e);
      });
    }, delay);
    this.scheduled = { handle, done, cancel: () => settle.reject(new SupersededStartError(this.texts.superseded(this.planned ?? ''))) };
  }

  private cancelRestart(): void {
    if (!this.scheduled) return;
    this.clock.clearTimeout(this.scheduled.handle);
    this.scheduled.cancel();
    this.scheduled = undefined;
  }

  /** The current session stops being current (its listeners go); returned so a stop can shut it down. */
  private drop(stopping = false): AgentSession | undefined {
    const s = this.session;
    this.session = undefined;
    for (const undo of this.detach.splice(0)) undo();
    if (s) {
      if (stopping) this.stopped.add(s);
      this.sessionListeners.fire(undefined);
    }
    return s;
  }

  private failed(error: Error): void {
    const message = this.options.describeFailure ? this.options.describeFailure(error) : error.message;
    if (message !== undefined) this.setState('error', message);
  }

  private setState(state: AgentState, error?: string): void {
    this._state = state;
    if (state === 'stopped' || state === 'starting') this.unresponsive = undefined;
    this.lastError = error;
    this.stateListeners.fire(state);
  }
}
