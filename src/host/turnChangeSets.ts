/**
 * The turn changes of each chat tab: a tab's turn takes its own snapshot when it begins (TurnChanges), and what it
 * changed is fixed when it ends and kept until that tab's next turn. Two tabs writing at once: a change that a
 * tool call of the other tab named goes to that tab only. No vscode.
 */
import * as path from 'node:path';
import { diffLines, structuredPatch } from 'diff';
import type { SessionModel } from '../session/sessionModel';
import { DEFAULT_TURN_LIMITS, type FileChange, type TurnChangeLimits, TurnChanges } from './turnChanges';

/** What a turn's summary says: how many files, lines added and removed (`turn` tells a later turn of the tab apart). */
export interface TurnSummary {
  tab: string;
  turn: number;
  files: number;
  added: number;
  removed: number;
}

interface TabTurn {
  turn: number;
  changes: TurnChanges;
  model: () => SessionModel | undefined;
  /** Where the turn's entities begin in the tab's timeline (what its tool calls named is read from there). */
  from: number;
  running: boolean;
  /** The tabs whose turns ran while this one did. */
  overlapped: Set<string>;
  /** Fixed when the turn ends: the files it changed. */
  paths: Set<string> | undefined;
}

/** Keys of a tool call's input that name a file (claude file_path, opencode filePath, notebooks, most others path). */
const PATH_KEYS = ['path', 'file_path', 'filePath', 'notebook_path', 'target_file'];

export class TurnChangeSets {
  private readonly tabs = new Map<string, TabTurn>();
  private counter = 0;

  constructor(
    private readonly roots: () => readonly string[],
    private readonly limits: TurnChangeLimits = DEFAULT_TURN_LIMITS,
  ) {}

  /** A turn of `tab` begins: its snapshot (of `roots`, the workspace's by default) replaces the tab's previous turn. */
  async begin(tab: string, model: () => SessionModel | undefined, roots: () => readonly string[] = this.roots): Promise<void> {
    const changes = new TurnChanges(roots, this.limits);
    const entry: TabTurn = { turn: ++this.counter, changes, model, from: model()?.timeline().length ?? 0, running: true, overlapped: new Set(), paths: undefined };
    for (const [other, t] of this.tabs) {
      if (!t.running || other === tab) continue;
      t.overlapped.add(tab);
      entry.overlapped.add(other);
    }
    this.tabs.set(tab, entry);
    await changes.begin();
  }

  /** A write whose old content is known (fs/write_text_file): every running turn keeps it if its snapshot missed the file. */
  noteBefore(absPath: string, before: string | undefined): void {
    for (const t of this.tabs.values()) if (t.running) t.changes.noteBefore(absPath, before);
  }

  /** The turn of `tab` ended: what it changed is fixed and summed up (undefined when the tab had no turn). */
  async end(tab: string): Promise<TurnSummary | undefined> {
    const t = this.tabs.get(tab);
    if (!t?.running) return undefined;
    const all = await t.changes.changes();
    const mine = this.named(t);
    const others = [...t.overlapped].map((o) => this.tabs.get(o)).flatMap((o) => (o ? [this.named(o)] : []));
    // A change no overlapping tab named is this turn's too (a shell command names nothing).
    const kept = all.filter((c) => mine.has(c.path) || !others.some((o) => o.has(c.path)));
    t.paths = new Set(kept.map((c) => c.path));
    t.running = false;
    return this.summaryOf(tab, t, kept);
  }

  /** The tab's last turn, while it is kept: its number and its changes against the disk now (only the files it changed). */
  async changes(tab: string): Promise<{ turn: number; changes: FileChange[] } | undefined> {
    const t = this.tabs.get(tab);
    if (!t) return undefined;
    const all = await t.changes.changes();
    return { turn: t.turn, changes: t.paths ? all.filter((c) => t.paths!.has(c.path)) : all };
  }

  /** The summary of the tab's last turn as the disk is now. */
  async summary(tab: string): Promise<TurnSummary | undefined> {
    const t = this.tabs.get(tab);
    const now = await this.changes(tab);
    return t && now ? this.summaryOf(tab, t, now.changes) : undefined;
  }

  /** The content a file had when the tab's last turn began (undefined: it did not exist, or was too big). */
  before(tab: string, turn: number, absPath: string): string | undefined {
    const t = this.tabs.get(tab);
    return t?.turn === turn ? t.changes.beforeOf(absPath) : undefined;
  }

  /** Writes back the content before the turn: every file of it, or `only` those; returns the paths it could not restore. */
  async revert(tab: string, only?: readonly string[]): Promise<string[]> {
    const t = this.tabs.get(tab);
    if (!t) return [];
    const now = await this.changes(tab);
    const paths = (now?.changes ?? []).map((c) => c.path).filter((p) => !only || only.includes(p));
    return t.changes.revert(paths);
  }

  /** Tabs closed: their snapshots go. */
  keepOnly(open: readonly string[]): void {
    for (const tab of [...this.tabs.keys()]) if (!open.includes(tab)) this.tabs.delete(tab);
  }

  private summaryOf(tab: string, t: TabTurn, changes: FileChange[]): TurnSummary {
    let added = 0;
    let removed = 0;
    for (const c of changes) {
      const counts = lineCounts(c.before ?? '', c.status === 'deleted' ? '' : c.after);
      added += counts.added;
      removed += counts.removed;
    }
    return { tab, turn: t.turn, files: changes.length, added, removed };
  }

  /** The files the turn's tool calls named (locations, diffs, a path in their input), absolute. */
  private named(t: TabTurn): Set<string> {
    const out = new Set<string>();
    const root = this.roots()[0] ?? '';
    const add = (p: unknown) => {
      if (typeof p === 'string' && p) out.add(path.resolve(root, p));
    };
    for (const e of t.model()?.timeline().slice(t.from) ?? []) {
      if (e.kind !== 'tool_call') continue;
      for (const l of e.locations) add(l.path);
      for (const c of e.content) if (c && typeof c === 'object' && (c as { type?: unknown }).type === 'diff') add((c as { path?: unknown }).path);
      const input = e.rawInput;
      if (input && typeof input === 'object') for (const k of PATH_KEYS) add((input as Record<string, unknown>)[k]);
    }
    return out;
  }
}

/** Lines added and removed from `before` to `after` (the `diff` package's line diff). */
export function lineCounts(before: string, after: string | undefined): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  if (after === undefined) return { added, removed };
  for (const part of diffLines(before, after)) {
    if (part.added) added += part.count ?? 0;
    else if (part.removed) removed += part.count ?? 0;
  }
  return { added, removed };
}

/**
 * The change of `before` → `now` at `line` (0-based, of `now`; a deletion answers on the lines around it): lines
 * `from`–`to` (0-based, end excluded) of `now` go back to `before`, their text before the turn.
 */
export function hunkAt(before: string, now: string, line: number): { from: number; to: number; before: string } | undefined {
  const hunk = structuredPatch('a', 'b', before, now, '', '', { context: 0 }).hunks.find((h) => line + 1 >= h.newStart - (h.newLines ? 0 : 1) && line + 1 < h.newStart + Math.max(h.newLines, 1));
  if (!hunk) return undefined;
  // jsdiff's starts are 1-based, a side with no lines included (its lines go before that line).
  const old = (before.match(/[^\n]*\n|[^\n]+$/g) ?? []).slice(hunk.oldStart - 1, hunk.oldStart - 1 + hunk.oldLines);
  return { from: hunk.newStart - 1, to: hunk.newStart - 1 + hunk.newLines, before: old.join('') };
}
