import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { TimelineEntity } from '../../session/sessionModel';
import { boundedHistory } from '../../session/transcriptCopy';
import { historyKey } from './chatContent';

/**
 * The chat tabs' earlier transcripts. In this window: what each tab showed above its live session. Across window
 * reloads: one JSON file per tab in the workspace's storage folder, written when a turn ends, the newest write of
 * a tab winning (a memento update would send the extension's whole workspace state, every tab's history, each
 * time). A history an earlier version kept in the workspace state is read from there once and moved.
 */
/** How long a turn's copy may wait (saveSoon): the turns of that time cost one copy and one write. */
export const HISTORY_DELAY_MS = 5000;

/** A tab's copy to write: the entities, null (its file deleted), or made when written (saveSoon). */
type Copy = TimelineEntity[] | null | (() => TimelineEntity[]);

export class TabHistories {
  private readonly shown = new Map<string, TimelineEntity[]>();
  /** The newest copy of each tab not on disk yet. */
  private readonly pending = new Map<string, Copy>();
  private readonly writing = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly dir: string,
    private readonly memento: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** What the tab shows above its session: its copy in this window, else the stored one. */
  get(tabId: string): TimelineEntity[] {
    return this.shown.get(tabId) ?? this.stored(tabId);
  }

  /** The tab's earlier transcript in this window (its live session stays in its model). */
  keep(tabId: string, history: TimelineEntity[]): void {
    this.shown.set(tabId, history);
  }

  /**
   * Writes (in the background) the copy a reload restores: the newest of the earlier transcript and the live
   * session's, whose ids get `prefix` so they never meet the live session's; returns it.
   */
  save(tabId: string, earlier: TimelineEntity[], live: readonly TimelineEntity[], prefix: string): TimelineEntity[] {
    const kept = boundedHistory(earlier, withPrefix(live, prefix));
    this.write(tabId, kept);
    return kept;
  }

  /**
   * save() at a turn's end, made and written within HISTORY_DELAY_MS (the copy costs its whole size, up to
   * HISTORY_LIMITS): the entities as they are now, copied then. flush() writes what waits.
   */
  saveSoon(tabId: string, earlier: TimelineEntity[], live: readonly TimelineEntity[], prefix: string): void {
    const entities = [...live];
    this.pending.set(tabId, () => boundedHistory(earlier, withPrefix(entities, prefix)));
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      for (const id of this.pending.keys()) this.startWriting(id);
    }, HISTORY_DELAY_MS);
  }

  /** Writes every copy that waits, now (the window closing). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const tabId of [...this.pending.keys()]) {
      const entities = this.copy(tabId);
      this.pending.delete(tabId);
      const file = this.file(tabId);
      try {
        if (entities === null) fs.rmSync(file, { force: true });
        else {
          fs.mkdirSync(this.dir, { recursive: true });
          fs.writeFileSync(`${file}.tmp`, JSON.stringify(entities));
          fs.renameSync(`${file}.tmp`, file);
        }
      } catch (e) {
        this.log.warn(`Chat history of tab ${tabId} not written: ${(e as Error).message}`);
      }
    }
  }

  /** A closed tab (its file deleted, or kept for the last tab) or a new conversation (its file emptied). */
  forget(tabId: string, stored: 'delete' | 'keep' | 'empty'): void {
    this.shown.delete(tabId);
    if (stored !== 'keep') this.write(tabId, stored === 'empty' ? [] : null);
  }

  private file(tabId: string): string {
    return path.join(this.dir, `chat-history-${tabId.replace(/[^\w-]/g, '_')}.json`);
  }

  /** The tab's pending copy, made now if it waited to be (and kept made). */
  private copy(tabId: string): TimelineEntity[] | null | undefined {
    const copy = this.pending.get(tabId);
    if (typeof copy !== 'function') return copy;
    const made = copy();
    this.pending.set(tabId, made);
    return made;
  }

  private stored(tabId: string): TimelineEntity[] {
    const unwritten = this.copy(tabId);
    if (unwritten !== undefined) return unwritten ?? [];
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(this.file(tabId), 'utf8'));
      if (Array.isArray(parsed)) return parsed as TimelineEntity[];
      this.log.warn(`Chat history of tab ${tabId}: not a list; started empty`);
    } catch (e) {
      const error = e as NodeJS.ErrnoException;
      if (error.code !== 'ENOENT') this.log.warn(`Chat history of tab ${tabId} not read: ${error.message}`);
    }
    return this.memento.get<TimelineEntity[]>(historyKey(tabId), []);
  }

  private write(tabId: string, entities: TimelineEntity[] | null): void {
    this.pending.set(tabId, entities);
    this.startWriting(tabId);
  }

  private startWriting(tabId: string): void {
    if (this.writing.has(tabId)) return;
    this.writing.add(tabId);
    void this.drain(tabId).finally(() => this.writing.delete(tabId));
  }

  private async drain(tabId: string): Promise<void> {
    const file = this.file(tabId);
    for (;;) {
      if (!this.pending.has(tabId)) return; // written by flush()
      const entities = this.copy(tabId);
      try {
        if (entities === null) await fs.promises.rm(file, { force: true });
        else {
          await fs.promises.mkdir(this.dir, { recursive: true });
          await fs.promises.writeFile(`${file}.tmp`, JSON.stringify(entities));
          await fs.promises.rename(`${file}.tmp`, file);
        }
        // The copy an earlier version kept in the workspace state is superseded by the file.
        if (this.memento.get(historyKey(tabId)) !== undefined) await this.memento.update(historyKey(tabId), undefined);
      } catch (e) {
        this.log.warn(`Chat history of tab ${tabId} not written: ${(e as Error).message}`);
      }
      if (this.pending.get(tabId) !== entities) continue; // a newer copy came meanwhile
      this.pending.delete(tabId);
      return;
    }
  }
}

function withPrefix(live: readonly TimelineEntity[], prefix: string): TimelineEntity[] {
  return live.map((e) => ({ ...e, id: `${prefix}:${e.id}` }) as TimelineEntity);
}
