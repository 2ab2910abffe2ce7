/**
 * The diffs of fan-out runs (docs/fanout.md): a run against the tree it started from, and two runs against each
 * other, in VS Code's multi-file diff editor. The sides are files as a snapshot commit has them
 * (`agent-host-run:/<path>?<repo>#<commit>`, read with `git show`), or the run's worktree file itself.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { runGit } from '../../host/checkpoints';

export const RUN_SCHEME = 'agent-host-run';

/** A file as commit `commit` of `repo` has it (empty when it has none). */
export function snapshotUri(repo: string, commit: string, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: RUN_SCHEME, path: `/${file}`, query: repo, fragment: commit });
}

export function registerRunDocuments(): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(RUN_SCHEME, {
    provideTextDocumentContent: (uri) => runGit(['show', `${uri.fragment}:${uri.path.replace(/^\//, '')}`], uri.query).catch(() => ''),
  });
}

/** Opens the multi-file diff of `files`: each from `left` to `right`. */
export async function showRunDiff(title: string, files: readonly string[], left: (file: string) => vscode.Uri, right: (file: string) => vscode.Uri): Promise<void> {
  if (!files.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No file differs.'));
    return;
  }
  const resources = files.map((f) => [right(f), left(f), right(f)] as const);
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}

/** A run's worktree file (the right side of a run's own diff: what the agent left, editable there). */
export function worktreeUri(worktree: string, file: string): vscode.Uri {
  return vscode.Uri.file(path.join(worktree, file));
}
