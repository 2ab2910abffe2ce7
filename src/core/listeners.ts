/** A set of listeners for one kind of event; `add` returns the function that removes the listener. */
export class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();

  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  /** Calls every listener; one that throws is reported to `onError` and does not stop the others. */
  fire(value: T, onError?: (error: unknown) => void): void {
    for (const listener of [...this.set]) {
      try {
        listener(value);
      } catch (error) {
        if (!onError) throw error;
        onError(error);
      }
    }
  }
}

/** A one-time event: listeners added after it fired are called with its value at once (in a microtask). */
export class Latch<T> {
  private readonly listeners = new Listeners<T>();
  private fired: { value: T } | undefined;

  get value(): T | undefined {
    return this.fired?.value;
  }

  add(listener: (value: T) => void): () => void {
    const fired = this.fired;
    if (fired) {
      queueMicrotask(() => listener(fired.value));
      return () => undefined;
    }
    return this.listeners.add(listener);
  }

  /** Fires once; later calls are ignored. Returns whether this call fired it. */
  fire(value: T, onError?: (error: unknown) => void): boolean {
    if (this.fired) return false;
    this.fired = { value };
    this.listeners.fire(value, onError);
    return true;
  }
}

export type Health = 'ok' | 'unresponsive';

/** Tracks whether an agent answers: a timed-out request marks it unresponsive until the next answer. */
export class HealthTracker {
  private state: Health = 'ok';
  private readonly changes = new Listeners<{ health: Health; detail: string }>();

  constructor(private readonly onChange?: (health: Health, detail: string) => void) {}

  get current(): Health {
    return this.state;
  }

  /** Every timed-out request is reported, so the traffic view counts requests, not spells; 'ok' only when it changes. */
  set(health: Health, detail: string): void {
    if (this.state === health && health === 'ok') return;
    this.state = health;
    this.onChange?.(health, detail);
    this.changes.fire({ health, detail });
  }

  add(listener: (health: Health, detail: string) => void): () => void {
    return this.changes.add(({ health, detail }) => listener(health, detail));
  }
}
