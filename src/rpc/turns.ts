/**
 * Turn bookkeeping of an RPC session: which agent run a prompt waits for, how a run's end settles the
 * prompts waiting on it, aborts before a run started, and prompts the agent handled without a run (slash
 * commands). A prompt resolves at the end of the first run that starts after it was sent.
 */
import type { SessionModel } from '../session/sessionModel';
import type { ImageInput, RpcCommandArgs, RpcState } from './commands';
import { runOutcome, type FrameMapper } from './frameMapper';
import { RpcCommandError, type RpcFrame, type RpcResponse } from './rpcConnection';

export interface TurnResult {
  stopReason: string;
}

type TurnCommand = 'prompt' | 'abort_and_prompt' | 'abort';

/**
 * How long a run that ended in an error waits for the agent's `auto_retry_start` before the turn ends with that error:
 * pi retries a transient model error (overloaded, 429, 5xx) by itself and says so right after the run's `agent_end`;
 * the turn then goes on with the retry's run instead of failing.
 */
export const RETRY_SETTLE_MS = 1000;

/** What the bookkeeping needs from the session: the wire, the state, and a word when a run ended. */
export interface TurnIo {
  newId(): string;
  /** Sends a command under the given id; resolves at its answer, rejects when the agent refuses it. */
  send<K extends TurnCommand>(id: string, name: K, args: RpcCommandArgs<K>): Promise<unknown>;
  /** Whether the command with this id still waits for its answer. */
  isPending(id: string): boolean;
  getState(): Promise<RpcState>;
  /** A run ended (the agent's state is worth fetching again). */
  runEnded(): void;
}

export interface RunTrackerOptions {
  /** Upstream pi runs extension slash commands without a run and says so only by not starting one. */
  slashCommandsMayRunLocally: boolean;
  /**
   * Upstream pi compacts its context right after a run's `agent_end` when it is near the window, and a prompt that
   * arrives meanwhile starts a second compaction that fails ("Cannot read properties of undefined"): the first prompt
   * after a run asks `get_state` and waits while it compacts.
   */
  compactsAfterRun: boolean;
}

interface RunWaiter {
  /** Resolves at the end of the first run that started after this run number. */
  afterRun: number;
  /** The prompt command's id, to match a late error response or `prompt_result`. */
  promptId: string;
  /** Settles when the agent answered the prompt command, either way. */
  answered: Promise<void>;
  resolve: (result: TurnResult) => void;
  reject: (error: Error) => void;
}

export class RunTracker {
  private runSeq = 0;
  private running = false;
  private runAborted = false;
  /** An abort sent while no run was running (by the id of that `abort`): the next run is the aborted prompt's. */
  private earlyAbort: { abortId: string } | undefined;
  private waiters: RunWaiter[] = [];
  /** A run that ended in an error, held for RETRY_SETTLE_MS: the agent may retry it. */
  private held: { messages: unknown; timer: NodeJS.Timeout } | undefined;
  /** The agent is retrying a failed run (between `auto_retry_start` and the retry's run): that run's messages. */
  private retrying: { messages: unknown } | undefined;
  /** The agent is compacting its context (`auto_compaction_start` seen, its end not yet): settles at the end. */
  private compaction: { done: Promise<void>; end: () => void } | undefined;
  /** A run ended since the last prompt: the next prompt checks for a compaction first (compactsAfterRun). */
  private ranSincePrompt = false;

  constructor(
    private readonly model: SessionModel,
    private readonly mapper: FrameMapper,
    private readonly io: TurnIo,
    private readonly options: RunTrackerOptions,
  ) {}

  /** A turn is on: a prompt waits or a run is running. */
  get busy(): boolean {
    return this.model.turn !== 'idle' || this.running;
  }

  /** Takes the frames that start, end or settle runs; false for every other frame. */
  handle(event: RpcFrame): boolean {
    switch (event.type) {
      case 'agent_start':
        this.runStarted();
        return true;
      case 'agent_end':
        if (event.isTerminal === false) return true; // not terminal: the session resumes on its own
        if (this.mayRetry(event.messages)) this.hold(event.messages);
        else this.runEnded(event.messages);
        return true;
      case 'auto_compaction_start':
        if (!this.compaction) {
          let end!: () => void;
          const done = new Promise<void>((resolve) => (end = resolve));
          this.compaction = { done, end };
        }
        return false; // the mapper shows it
      case 'auto_compaction_end':
        this.endCompaction();
        return false;
      case 'auto_retry_start':
        // The held run is being retried: the turn goes on (the mapper shows the retry).
        if (this.held) {
          clearTimeout(this.held.timer);
          this.retrying = { messages: this.held.messages };
          this.held = undefined;
        }
        return false;
      case 'auto_retry_end':
        // No retry after all (attempts used up, or cancelled while waiting): the failed run ends the turn.
        if (event.success === false) {
          const failed = this.held?.messages ?? this.retrying?.messages;
          this.dropFailedRun();
          if (failed !== undefined) this.runEnded(failed);
        }
        return false;
      case 'prompt_result':
        if (event.agentInvoked === false) this.finishLocalPrompt(typeof event.id === 'string' ? event.id : undefined);
        return true;
      case 'response':
        this.lateResponse(event);
        return true;
      default:
        return false;
    }
  }

  /** Sends a prompt and resolves when the agent run it started ends (`end_turn`, `cancelled`, `error`, …). */
  async prompt(message: string, images: ImageInput[]): Promise<TurnResult> {
    if (this.busy) throw new Error('A turn is already running in this session (steer or queue a follow-up instead)');
    // An abort meant for an earlier prompt must not cancel this one's run.
    this.earlyAbort = undefined;
    this.model.beginTurn();
    await this.compactionSettled();
    const before = this.runSeq;
    const promptId = this.io.newId();
    const done = this.waitForRun(promptId, () => this.io.send(promptId, 'prompt', { message, ...(images.length ? { images } : {}) }));
    try {
      await done.answered;
    } catch (error) {
      if (this.model.turn !== 'idle' && !this.running) this.model.endTurn(undefined, (error as Error).message);
      throw error;
    }
    if (this.options.slashCommandsMayRunLocally && message.startsWith('/') && this.runSeq === before) {
      const state = await this.io.getState().catch(() => undefined);
      if (state && !state.isStreaming && this.runSeq === before && !this.running) this.finishLocalPrompt(promptId);
    }
    return done.result;
  }

  /** `abort_and_prompt` in one command: resolves when the new prompt's run ends; the aborted run's prompt resolves `cancelled`. */
  async abortAndPrompt(message: string, images: ImageInput[]): Promise<TurnResult> {
    if (this.running) this.runAborted = true;
    const promptId = this.io.newId();
    const done = this.waitForRun(promptId, () => this.io.send(promptId, 'abort_and_prompt', { message, ...(images.length ? { images } : {}) }));
    await done.answered;
    return done.result;
  }

  /** The same as two commands, for dialects without `abort_and_prompt`. */
  async abortThenPrompt(message: string, images: ImageInput[]): Promise<TurnResult> {
    if (this.running) this.runAborted = true;
    await this.io.send(this.io.newId(), 'abort', {});
    return this.prompt(message, images);
  }

  /** Aborts the running turn; the pending prompt resolves `cancelled`. */
  async abort(): Promise<void> {
    this.model.requestCancel();
    const seq = this.runSeq;
    const early = !this.running;
    const abortId = this.io.newId();
    if (early) this.earlyAbort = { abortId };
    else this.runAborted = true;
    await this.io.send(abortId, 'abort', {});
    if (!early || !this.waiters.length) return;
    const started = () => this.runSeq !== seq || this.running;
    if (started()) return;
    // The agent had no run to abort. pi answers a prompt only when its run starts: wait for that answer.
    await Promise.all(this.waiters.map((w) => w.answered.catch(() => undefined)));
    if (started()) return;
    // Frames come in order on one stdout: a run that started before this answer has been seen by now.
    const state = await this.io.getState().catch(() => undefined);
    if (!state || state.isStreaming || started()) return;
    // The agent dropped the prompt without a run (omp does, for a prompt aborted before its run): settle it here.
    this.earlyAbort = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    if (this.model.turn !== 'idle') this.model.endTurn('cancelled');
    for (const w of waiters) w.resolve({ stopReason: 'cancelled' });
  }

  /** Waits while the agent compacts its context (see RunTrackerOptions.compactsAfterRun). */
  private async compactionSettled(): Promise<void> {
    const ask = this.options.compactsAfterRun && this.ranSincePrompt && !this.compaction;
    this.ranSincePrompt = false;
    // Frames come in order on one stdout: a compaction that started before this answer has been seen by now.
    if (ask) await this.io.getState().catch(() => undefined);
    await this.compaction?.done;
  }

  /** Forgets a failed run held for a retry, or being retried (its timer cleared). */
  private dropFailedRun(): void {
    if (this.held) clearTimeout(this.held.timer);
    this.held = undefined;
    this.retrying = undefined;
  }

  private endCompaction(): void {
    this.compaction?.end();
    this.compaction = undefined;
  }

  /** The agent is gone: every waiting prompt fails with `error`. */
  agentExited(error: Error): void {
    this.endCompaction();
    this.dropFailedRun();
    const waiters = this.waiters;
    this.waiters = [];
    this.running = false;
    for (const w of waiters) w.reject(error);
  }

  /** Registers the waiter, then sends: a run that starts before the answer still counts. */
  private waitForRun(promptId: string, send: () => Promise<unknown>): { answered: Promise<void>; result: Promise<TurnResult> } {
    let settle!: Pick<RunWaiter, 'resolve' | 'reject'>;
    const result = new Promise<TurnResult>((resolve, reject) => (settle = { resolve, reject }));
    let answer!: { resolve: () => void; reject: (error: unknown) => void };
    const answered = new Promise<void>((resolve, reject) => (answer = { resolve, reject }));
    this.waiters.push({ afterRun: this.runSeq, promptId, answered, ...settle });
    send().then(answer.resolve, (error: unknown) => {
      this.dropWaiter(promptId);
      answer.reject(error);
    });
    return { answered, result };
  }

  private dropWaiter(promptId: string): void {
    this.waiters = this.waiters.filter((w) => w.promptId !== promptId);
  }

  /** A run that failed with an error we did not cause may be retried by the agent (unless its auto-retry is off). */
  private mayRetry(messages: unknown): boolean {
    return !this.runAborted && this.model.agentState.autoRetryEnabled !== false && runOutcome(messages, false).stopReason === 'error';
  }

  private hold(messages: unknown): void {
    this.held = {
      messages,
      timer: setTimeout(() => {
        this.held = undefined;
        this.runEnded(messages);
      }, RETRY_SETTLE_MS),
    };
  }

  private runStarted(): void {
    // A retry's run (or any new run) supersedes a failed run still held: that one is over without ending the turn.
    this.dropFailedRun();
    this.runSeq++;
    this.running = true;
    this.runAborted = this.earlyAbort !== undefined;
    // The agent answered that abort before this run existed, so it did not stop it: stop it now.
    if (this.earlyAbort && !this.io.isPending(this.earlyAbort.abortId)) {
      // Its failure needs no handling here: the run then ends on its own, an exit fails the waiters.
      void this.io.send(this.io.newId(), 'abort', {}).catch(() => undefined);
    }
    this.earlyAbort = undefined;
    this.mapper.beginRun();
  }

  private runEnded(messages: unknown): void {
    this.running = false;
    const outcome = runOutcome(messages, this.runAborted);
    this.runAborted = false;
    const settled = this.waiters.filter((w) => w.afterRun < this.runSeq);
    this.waiters = this.waiters.filter((w) => w.afterRun >= this.runSeq);
    this.mapper.endRun(outcome, this.waiters.length > 0);
    this.ranSincePrompt = true;
    for (const w of settled) w.resolve({ stopReason: outcome.stopReason });
    this.io.runEnded();
  }

  /** A prompt the agent handled without a run (slash command): the turn ends here. */
  private finishLocalPrompt(promptId: string | undefined): void {
    const w = this.waiters.find((x) => x.promptId === promptId);
    if (!w) return;
    this.dropWaiter(w.promptId);
    if (!this.running && this.model.turn !== 'idle') this.model.endTurn('end_turn');
    w.resolve({ stopReason: 'end_turn' });
  }

  /** A second answer to a prompt already acknowledged: scheduling it failed after all. */
  private lateResponse(frame: RpcFrame): void {
    const w = this.waiters.find((x) => x.promptId === frame.id);
    if (!w || frame.success !== false) return;
    this.dropWaiter(w.promptId);
    const error = new RpcCommandError(String(frame.command), frame as unknown as RpcResponse);
    if (!this.running && this.model.turn !== 'idle') this.model.endTurn(undefined, error.message);
    w.reject(error);
  }
}
