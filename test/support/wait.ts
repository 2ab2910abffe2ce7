/**
 * Waiting on something observable instead of sleeping: `until` polls a check until it holds (and says what it
 * waited for when it does not); `stillAbsent` holds for a bounded time and fails the moment the thing that
 * must not happen shows up. No Playwright or VS Code here: tests of every kind use it.
 */

export interface WaitOptions {
  /** What is awaited, for the failure message ("the exported file"); a function may describe the last state. */
  what: string | (() => string);
  /** Default 30 s. */
  timeoutMs?: number;
  /** Pause between two checks. Default 100 ms. */
  intervalMs?: number;
}

type Falsy = undefined | null | false | 0 | '';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `check` until it returns a truthy value, and returns that value. A check that throws counts as "not
 * yet" (a frame being replaced, a file half-written); its last error is in the time-out message.
 */
export async function until<T>(check: () => T | Promise<T>, opts: WaitOptions): Promise<Exclude<T, Falsy>> {
  const { timeoutMs = 30_000, intervalMs = 100 } = opts;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Exclude<T, Falsy>;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const what = typeof opts.what === 'function' ? opts.what() : opts.what;
      const cause = last ? ` (last check threw: ${(last as Error).message?.split('\n')[0] ?? String(last)})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/**
 * Asserts an absence over time: polls `present` for `ms` and throws as soon as it returns a truthy value.
 * For "X must not happen while Y holds", where no event says that X will never come.
 */
export async function stillAbsent(present: () => unknown, ms: number, what: string, intervalMs = 100): Promise<void> {
  const t0 = Date.now();
  const deadline = t0 + ms;
  for (;;) {
    if (await present()) throw new Error(`${what} appeared after ${Date.now() - t0} ms; it must not within ${ms} ms`);
    if (Date.now() >= deadline) return;
    await sleep(Math.min(intervalMs, deadline - Date.now()));
  }
}

/** `promise`, or an error naming `what` when it has not settled within `ms` (a wait that can fail, never hang). */
export function within<T>(promise: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
