import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HostRequestError, type FileAccess } from '../session/sessionHost';
import { OutsideWorkspaceError, resolveInWorkspace } from './workspacePaths';

/** Where file content comes from and goes to; the VS Code host overlays unsaved editor buffers. */
export interface TextDocumentStore {
  read(absPath: string): Promise<string | undefined>;
  write(absPath: string, content: string): Promise<void>;
}

export const diskStore: TextDocumentStore = {
  async read(absPath) {
    try {
      return await fs.readFile(absPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  },
  async write(absPath, content) {
    await fs.mkdir(path.dirname(absPath), { recursive: true });
    await fs.writeFile(absPath, content, 'utf8');
  },
};

/** Slices text by 1-based `line` and `limit`, as `fs/read_text_file` asks. */
export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if (line == null && limit == null) return text;
  const lines = text.split('\n');
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit == null ? lines.length : start + Math.max(0, limit);
  return lines.slice(start, end).join('\n');
}

/**
 * Decides one write before it happens (protected paths, the CLI's policy): resolves to allow, throws a
 * HostRequestError to refuse with a reason the agent sees.
 */
export type WriteGuard = (absPath: string) => Promise<void>;

/** The agent's file requests, confined to the workspace roots. */
export class FileService implements FileAccess {
  constructor(
    private readonly roots: () => readonly string[],
    private readonly store: TextDocumentStore = diskStore,
    private readonly onWrite?: (absPath: string, before: string | undefined, after: string) => void,
    private readonly guard?: WriteGuard,
  ) {}

  async readTextFile(params: { path: string; line?: number | null; limit?: number | null }): Promise<string> {
    const abs = this.resolve(params.path);
    const text = await this.store.read(abs);
    if (text === undefined) throw new HostRequestError('not_found', `Resource not found: ${params.path}`, { uri: params.path });
    return sliceLines(text, params.line, params.limit);
  }

  async writeTextFile(params: { path: string; content: string }): Promise<void> {
    const abs = this.resolve(params.path);
    await this.guard?.(abs);
    const before = await this.store.read(abs);
    await this.store.write(abs, params.content);
    this.onWrite?.(abs, before, params.content);
  }

  private resolve(p: string): string {
    try {
      return resolveInWorkspace(p, this.roots());
    } catch (error) {
      if (error instanceof OutsideWorkspaceError) throw new HostRequestError('refused', error.message);
      throw error;
    }
  }
}
