/**
 * A prompt turn has no timeout (agents think for minutes), but an agent that has sent nothing at all for a
 * while should be visible: the person may want to cancel. SilenceWatch counts the seconds since the agent's
 * last output while a turn runs and reports them once they reach the threshold, every tick, until the agent
 * speaks or the turn ends. While the host keeps the agent waiting (a permission dialog, a terminal command
 * it waits for) the silence is the host's doing: the count starts again when the host answers.
 */

export interface SilenceWatchOptions {
  /** Seconds of silence before it is reported; 0 (or less) turns the watch off. Read at every tick. */
  thresholdSeconds: () => number;
  /** The silence in whole seconds, at every tick while it is reported; undefined once it is over. */
  onChange: (seconds: number | undefined) => void;
  /** The clock (ms); tests pass their own. */
  now?: () => number;
  /** How often the count is checked (ms). Default 1000. */
  tickMs?: number;
}

export class SilenceWatch {
  private readonly now: () => number;
  private running = false;
  private waitingOnHost = false;
  private lastHeard = 0;
  private reported: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SilenceWatchOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The silence being reported (whole seconds), or undefined. */
  get seconds(): number | undefined {
    return this.reported;
  }

  /** A turn started or ended. A start counts as hearing from the agent (the prompt was just sent). */
  turn(running: boolean): void {
    if (running === this.running) return;
    this.running = running;
    if (running) {
      this.lastHeard = this.now();
      this.timer ??= setInterval(() => this.check(), this.options.tickMs ?? 1000);
      this.timer.unref?.();
    } else {
      this.stopTimer();
      this.report(undefined);
    }
  }

  /** The agent wrote something, or the host started or finished answering one of its requests. */
  activity(waitingOnHost: boolean): void {
    this.waitingOnHost = waitingOnHost;
    this.lastHeard = this.now();
    this.report(undefined);
  }

  /** Compares the silence with the threshold (the timer calls it; tests may too). */
  check(): void {
    const threshold = this.options.thresholdSeconds();
    if (!this.running || this.waitingOnHost || !(threshold > 0)) {
      this.report(undefined);
      return;
    }
    const seconds = Math.floor((this.now() - this.lastHeard) / 1000);
    this.report(seconds >= threshold ? seconds : undefined);
  }

  dispose(): void {
    this.running = false;
    this.stopTimer();
    this.reported = undefined;
  }

  private report(seconds: number | undefined): void {
    if (seconds === this.reported) return;
    this.reported = seconds;
    this.options.onChange(seconds);
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
