/**
 * Rendered but detached elements of transcript entries near its window (transcript.ts): those that just left
 * the window, and those rendered ahead in idle time, so a page coming in costs inserting, not rendering.
 * A spare is dropped when its entity changes, or once it is more than `range` entries from the window — except
 * the last LONG_KEPT long messages that had one: their rendering (markdown of 100 KB: about 30 ms) is the
 * dearest to redo, and never done in idle time, which it would overrun.
 */
const LONG_KEPT = 4;

export interface SpareItem {
  /** Its position in the transcript. */
  idx: number;
  spare?: HTMLElement | undefined;
}

export class Spares<T extends SpareItem> {
  private readonly held = new Set<T>();
  private longs: T[] = [];

  constructor(private readonly isLong: (it: T) => boolean) {}

  keep(it: T, el: HTMLElement): void {
    it.spare = el;
    this.held.add(it);
    if (this.isLong(it)) this.longs = [...this.longs.filter((x) => x !== it), it].slice(-LONG_KEPT);
  }

  /** The item's spare, no longer held. */
  take(it: T): HTMLElement | undefined {
    const el = it.spare;
    this.drop(it);
    return el;
  }

  drop(it: T): void {
    it.spare = undefined;
    this.held.delete(it);
  }

  dropWhere(pred: (it: T) => boolean): void {
    for (const it of this.held) if (pred(it)) this.drop(it);
  }

  clear(): void {
    for (const it of this.held) it.spare = undefined;
    this.held.clear();
    this.longs = [];
  }

  /** Drops the spares more than `range` from the window [start, end), but the long ones kept. */
  prune(start: number, end: number, range: number): void {
    for (const it of this.held) if ((it.idx < start - range || it.idx >= end + range) && !this.longs.includes(it)) this.drop(it);
  }

  /** The nearest item within `range` of the window without a spare (above it first: where a reader goes), long ones aside. */
  wanted(items: readonly T[], start: number, end: number, range: number): T | undefined {
    for (let i = start - 1; i >= Math.max(0, start - range); i--) if (!items[i]!.spare && !this.isLong(items[i]!)) return items[i];
    for (let i = end; i < Math.min(items.length, end + range); i++) if (!items[i]!.spare && !this.isLong(items[i]!)) return items[i];
    return undefined;
  }
}
