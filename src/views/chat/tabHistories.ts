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
export class TabHistories {
  private readonly shown = new Map<string, TimelineEntity[]>();
  /** The newest copy of each tab not on disk yet (null: its file deleted). */
  private readonly pending = new Map<string, TimelineEntity[] | null>();
  private readonly writing = new Set<string>();

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
    const kept = boundedHistory(
      earlier,
      live.map((e) => ({ ...e, id: `${prefix}:${e.id}` }) as TimelineEntity),
    );
    this.write(tabId, kept);
    return kept;
  }

  /** A closed tab (its file deleted, or kept for the last tab) or a new conversation (its file emptied). */
  forget(tabId: string, stored: 'delete' | 'keep' | 'empty'): void {
    this.shown.delete(tabId);
    if (stored !== 'keep') this.write(tabId, stored === 'empty' ? [] : null);
  }

  private file(tabId: string): string {
    return path.join(this.dir, `chat-history-${tabId.replace(/[^\w-]/g, '_')}.json`);
  }

  private stored(tabId: string): TimelineEntity[] {
    const unwritten = this.pending.get(tabId);
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
    if (this.writing.has(tabId)) return;
    this.writing.add(tabId);
    void this.drain(tabId).finally(() => this.writing.delete(tabId));
  }

  private async drain(tabId: string): Promise<void> {
    const file = this.file(tabId);
    for (;;) {
      const entities = this.pending.get(tabId);
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
