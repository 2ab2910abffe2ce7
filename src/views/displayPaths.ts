import * as path from 'node:path';
import * as vscode from 'vscode';
import { localEntity } from '../manager/noticeTexts';
import type { TimelineEntity } from '../session/sessionModel';

/**
 * Paths inside the workspace as a person reads them: relative to their folder (in a multi-root workspace,
 * prefixed with the folder's name), absolute only outside it. Replaces each folder's path where it starts a
 * path in `text` (at the start or after a character no path has inside it), so an agent's title such as
 * "Write /home/me/project/src/a.ts" reads "Write src/a.ts".
 */
export function workspaceRelative(text: string, folders: readonly { name: string; fsPath: string }[] = currentFolders()): string {
  let out = text;
  // Longest first: a folder nested in another is named by the nearer one.
  for (const f of [...folders].sort((a, b) => b.fsPath.length - a.fsPath.length)) {
    const root = f.fsPath.replace(/[\\/]+$/, '');
    if (!root) continue;
    const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const multi = folders.length > 1;
    out = out.replace(new RegExp(`(^|[\\s"'\`(\\[<=:,])${escaped}(?:([\\\\/])|(?=$|[\\s"'\`)\\]>,:]))`, 'g'), (_m, before: string, sep?: string) =>
      sep ? `${before}${multi ? `${f.name}/` : ''}` : `${before}${multi ? f.name : '.'}`,
    );
  }
  return out;
}

function currentFolders(): { name: string; fsPath: string }[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, fsPath: f.uri.fsPath }));
}

/** A timeline entity with the paths in what it shows made workspace-relative (links keep the absolute path). */
export function relativeEntity(entity: TimelineEntity): TimelineEntity {
  // Messages stream through here: only the kinds that show paths read the folders.
  if (entity.kind !== 'tool_call' && entity.kind !== 'permission' && entity.kind !== 'notice') return entity;
  const folders = currentFolders();
  if (!folders.length) return entity;
  const rel = (s: string) => workspaceRelative(s, folders);
  switch (entity.kind) {
    case 'tool_call':
      // A command line stays exactly as it runs; its files are still shown relative.
      return { ...entity, ...(entity.toolKind === 'execute' ? {} : { title: rel(entity.title) }), locations: entity.locations.map((l) => ({ ...l, label: rel(l.path) || path.basename(l.path) })) };
    case 'permission':
      return { ...entity, title: rel(entity.title) };
    case 'notice':
      return { ...entity, title: rel(entity.title), ...(entity.detail !== undefined ? { detail: rel(entity.detail) } : {}) };
  }
}

/** An entity as the page shows it: what Atrium says in the person's language, then workspace paths made relative. */
export function displayedEntity(entity: TimelineEntity): TimelineEntity {
  return relativeEntity(localEntity(entity));
}
