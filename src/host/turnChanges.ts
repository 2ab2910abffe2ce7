/**
 * What a turn changed on disk, whoever wrote it (many agents write files themselves, not through fs/*):
 * a bounded snapshot of the workspace when the turn begins, compared with the disk when asked; revert
 * writes the snapshot back. No vscode.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface TurnChangeLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

export const DEFAULT_TURN_LIMITS: TurnChangeLimits = { maxFiles: 5000, maxFileBytes: 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024 };

/** Folders never snapshotted (generated or version-control data); of `.git`, what runs code is kept (below). */
const SKIP = new Set(['.git', 'node_modules', '.hg', '.svn']);
/** Inside `.git`: the config (core.fsmonitor, aliases, filters run commands) and the hooks. */
const GIT_KEPT = ['config', 'hooks'];

export interface FileChange {
  path: string;
  status: 'added' | 'modified' | 'deleted';
  /** Content before the turn; undefined for added files and for files too big to snapshot. */
  before: string | undefined;
  /** False when the file was too big (or beyond the limits) to keep its old content. */
  revertible: boolean;
  /** Content now; undefined for deleted files and files too big to read. */
  after?: string;
}

type Entry = { content: string } | { size: number; mtimeMs: number };

export class TurnChanges {
  private snapshot: Map<string, Entry> | undefined;
  private taking: Promise<void> | undefined;

  constructor(
    private readonly roots: () => readonly string[],
    private readonly limits: TurnChangeLimits = DEFAULT_TURN_LIMITS,
  ) {}

  /** Takes the snapshot the turn's changes are measured against. */
  begin(): Promise<void> {
    this.taking = this.walk().then((s) => {
      this.snapshot = s;
    });
    return this.taking;
  }

  /** A write whose old content is known (fs/write_text_file): keeps it if the snapshot missed the file. */
  noteBefore(absPath: string, before: string | undefined): void {
    if (!this.snapshot || this.snapshot.has(absPath) || before === undefined) return;
    this.snapshot.set(absPath, { content: before });
  }

  get active(): boolean {
    return this.snapshot !== undefined;
  }

  async changes(): Promise<FileChange[]> {
    await this.taking;
    const before = this.snapshot;
    if (!before) return [];
    const now = await this.walk(false);
    const out: FileChange[] = [];
    for (const [p, entry] of now) {
      const old = before.get(p);
      const after = 'content' in entry ? { after: entry.content } : {};
      if (!old) out.push({ path: p, status: 'added', before: undefined, revertible: true, ...after });
      else if (!sameEntry(old, entry)) {
        out.push({ path: p, status: 'modified', before: 'content' in old ? old.content : undefined, revertible: 'content' in old, ...after });
      }
    }
    for (const [p, old] of before) {
      if (!now.has(p)) out.push({ path: p, status: 'deleted', before: 'content' in old ? old.content : undefined, revertible: 'content' in old });
    }
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }

  /** The content a file had when the snapshot was taken (undefined: absent, or too big to keep). */
  beforeOf(absPath: string): string | undefined {
    const entry = this.snapshot?.get(absPath);
    return entry && 'content' in entry ? entry.content : undefined;
  }

  /** Puts every revertible change back (or those of `only`); returns the paths it could not restore. */
  async revert(only?: readonly string[]): Promise<string[]> {
    const failed: string[] = [];
    for (const c of await this.changes()) {
      if (only && !only.includes(c.path)) continue;
      try {
        if (c.status === 'added') await fs.rm(c.path, { force: true });
        else if (c.before !== undefined) {
          await fs.mkdir(path.dirname(c.path), { recursive: true });
          await fs.writeFile(c.path, c.before, 'utf8');
        } else failed.push(c.path);
      } catch {
        failed.push(c.path);
      }
    }
    return failed;
  }

  /** Content snapshot (withContent) or a cheap listing with content for files that the limits allow. */
  private async walk(withContent = true): Promise<Map<string, Entry>> {
    const out = new Map<string, Entry>();
    let total = 0;
    const visit = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (out.size >= this.limits.maxFiles) return;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name === '.git') await visitGit(full);
          else if (!SKIP.has(e.name)) await visit(full);
        } else if (e.isFile()) {
          await visitFile(full);
        }
      }
    };
    const visitGit = async (gitDir: string): Promise<void> => {
      for (const name of GIT_KEPT) {
        const full = path.join(gitDir, name);
        const st = await fs.lstat(full).catch(() => undefined);
        if (st?.isFile()) await visitFile(full);
        else if (st?.isDirectory()) {
          for (const hook of await fs.readdir(full, { withFileTypes: true }).catch(() => [])) {
            if (hook.isFile()) await visitFile(path.join(full, hook.name));
          }
        }
      }
    };
    const visitFile = async (full: string): Promise<void> => {
      if (out.size >= this.limits.maxFiles) return;
      const st = await fs.stat(full).catch(() => undefined);
      if (!st) return;
      const fits = st.size <= this.limits.maxFileBytes && (!withContent || total + st.size <= this.limits.maxTotalBytes);
      if (fits) {
        const content = await fs.readFile(full, 'utf8').catch(() => undefined);
        if (content !== undefined) {
          total += st.size;
          out.set(full, { content });
          return;
        }
      }
      out.set(full, { size: st.size, mtimeMs: st.mtimeMs });
    };
    for (const root of this.roots()) await visit(root);
    return out;
  }
}

function sameEntry(a: Entry, b: Entry): boolean {
  if ('content' in a && 'content' in b) return a.content === b.content;
  if ('size' in a && 'size' in b) return a.size === b.size && a.mtimeMs === b.mtimeMs;
  return false;
}
