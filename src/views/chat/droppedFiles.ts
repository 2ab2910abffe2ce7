import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import type { ContextChip } from '../../shared/chatProtocol';
import { inWorkspace } from './editorActions';

/** At most this many chips from one drop (a whole folder's selection dropped at once): the rest are named as not added. */
export const DROP_MAX = 50;

let dropCount = 0;

/**
 * Chips for what was dropped on the composer (VS Code's Explorer and editor tabs give file URIs): a file or a
 * folder inside the workspace becomes a chip (a file with its size), sent as a link to it; anything else (outside
 * the workspace, another scheme, missing, past DROP_MAX) is named in `refused`, never read.
 */
export async function droppedChips(uris: string[]): Promise<{ chips: ContextChip[]; refused: string[] }> {
  const chips: ContextChip[] = [];
  const refused: string[] = [];
  for (const raw of uris) {
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(raw, true);
    } catch {
      refused.push(raw);
      continue;
    }
    const name = uri.scheme === 'file' ? vscode.workspace.asRelativePath(uri) : uri.toString(true);
    const stat = chips.length < DROP_MAX && inWorkspace(uri) ? await fs.stat(uri.fsPath).catch(() => undefined) : undefined;
    if (stat?.isDirectory()) chips.push({ id: `drop-${++dropCount}`, kind: 'folder', label: `${name}/`, uri: uri.toString() });
    else if (stat?.isFile()) chips.push({ id: `drop-${++dropCount}`, kind: 'file', label: name, uri: uri.toString(), size: stat.size });
    else refused.push(name);
  }
  return { chips, refused };
}
