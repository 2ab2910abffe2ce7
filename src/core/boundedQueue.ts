/**
 * The bounds of the queues a person fills by hand (the chat's queued prompts, the selection commands' tasks):
 * past its bound a queue refuses the newcomer and keeps what it holds, in order. The bound is read at each
 * admission, so a changed setting takes effect at the next item.
 */

/** The defaults: more than a person queues by hand, few enough that a runaway burst stops early. */
export const QUEUE_BOUNDS = { chatPrompts: 20, selectionTasks: 10 } as const;

/** A bound from a setting: a whole number of at least 1; anything else is the default (a bad value never unbounds a queue). */
export function queueBound(setting: unknown, fallback: number): number {
  return typeof setting === 'number' && Number.isInteger(setting) && setting >= 1 ? setting : fallback;
}

/** Appends `item` when `queue` holds fewer than `bound` items; a full queue is left as it was and false returned. */
export function enqueueBounded<T>(queue: T[], item: T, bound: number): boolean {
  if (queue.length >= bound) return false;
  queue.push(item);
  return true;
}

/**
 * Runs jobs one at a time in arrival order, holding at most `bound()` of them (the running one counts): past
 * the bound `run` refuses the job (returns undefined) and the held ones run on as before. A job that fails
 * does not stop the ones behind it.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private held = 0;

  constructor(private readonly bound: () => number) {}

  /** Jobs running or waiting. */
  get size(): number {
    return this.held;
  }

  /** Whether one more job would be taken now. */
  get hasRoom(): boolean {
    return this.held < this.bound();
  }

  /**
   * Queues `job` behind the held ones; resolves when it ended; undefined (nothing queued) when the queue is full.
   * `replacing`: the held jobs were cancelled for this one, so it is taken whatever their count; `atOnce`: it
   * starts without waiting for them (the ones after it still wait for it).
   */
  run(job: () => Promise<void>, { replacing = false, atOnce = false } = {}): Promise<void> | undefined {
    if (!replacing && !this.hasRoom) return undefined;
    this.held++;
    const done = (atOnce ? Promise.resolve() : this.tail).then(job).finally(() => this.held--);
    this.tail = done.catch(() => undefined);
    return done;
  }
}
