import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ResponseError } from 'vscode-jsonrpc/node';
import { ErrorCodes } from '../acp/acpClient';
import type { ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse } from '../acp/types';
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

/** ACP `fs/*` requests, confined to the workspace roots. */
export class FileService {
  constructor(
    private readonly roots: () => readonly string[],
    private readonly store: TextDocumentStore = diskStore,
    private readonly onWrite?: (absPath: string, before: string | undefined, after: string) => void,
  ) {}

  async readTextFile(params: ReadTextFileRequest): Promise<ReadTextFileResponse> {
    const abs = this.resolve(params.path);
    const text = await this.store.read(abs);
    if (text === undefined) {
      throw new ResponseError(ErrorCodes.ResourceNotFound, `Resource not found: ${params.path}`, { uri: params.path });
    }
    return { content: sliceLines(text, params.line, params.limit) };
  }

  async writeTextFile(params: WriteTextFileRequest): Promise<WriteTextFileResponse> {
    const abs = this.resolve(params.path);
    const before = await this.store.read(abs);
    await this.store.write(abs, params.content);
    this.onWrite?.(abs, before, params.content);
    return {};
  }

  private resolve(p: string): string {
    try {
      return resolveInWorkspace(p, this.roots());
    } catch (error) {
      if (error instanceof OutsideWorkspaceError) throw new ResponseError(ErrorCodes.InvalidParams, error.message);
      throw error;
    }
  }
}
