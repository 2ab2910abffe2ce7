/**
 * The review of a turn's changes: VS Code's multi-file diff editor (`vscode.changes`) with every file the tab's
 * last turn changed — the left side the content before the turn (a read-only document of ours), the right side
 * the real file, so VS Code's own Revert Block and next/previous change work on it and an edit there is kept.
 * Per file: Accept (drops it from the review) or Reject (writes the content before the turn back); per hunk:
 * Reject Change (the hunk at the cursor, by the `diff` package's hunks).
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../../core/visibleText';
import { hunkAt, type TurnChangeSets } from '../../host/turnChangeSets';
import type { FileChange } from '../../host/turnChanges';
import { registerCommand } from '../commandRegistry';

/** The scheme of the left sides: `agent-host-turn:/<file>?<tab>#<turn>`. */
export const TURN_SCHEME = 'agent-host-turn';

export class TurnReview implements vscode.Disposable {
  /** Per tab: the turn under review and the files accepted in it (they leave the review). */
  private readonly accepted = new Map<string, { turn: number; paths: Set<string> }>();
  private readonly registrations: vscode.Disposable[];
  /** The file editor focused last (the review's title buttons take the focus from it). */
  private lastFocused: string | undefined;

  constructor(
    private readonly sets: TurnChangeSets,
    private readonly activeTab: () => string,
    private readonly tabTitle: (tab: string) => string | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(TURN_SCHEME, { provideTextDocumentContent: (uri) => this.sets.before(uri.query, Number(uri.fragment), uri.path) ?? '' }),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e?.document.uri.scheme === 'file') this.lastFocused = e.document.uri.fsPath;
      }),
      registerCommand('agentHost.reviewTurnChanges', (tab?: string, turn?: number) => this.open(tab ?? this.activeTab(), turn)),
      registerCommand('agentHost.acceptTurnFile', (uri?: vscode.Uri) => this.decideFile('accept', uri)),
      registerCommand('agentHost.rejectTurnFile', (uri?: vscode.Uri) => this.decideFile('reject', uri)),
      registerCommand('agentHost.rejectTurnHunk', (uri?: vscode.Uri, line?: number) => this.rejectHunk(uri, line)),
    ];
  }

  /** The review's files: what the tab's last turn changed, less the files accepted. Undefined: `turn` is not the tab's last turn any more. */
  async files(tab: string, turn?: number): Promise<{ turn: number; changes: FileChange[] } | undefined> {
    const now = await this.sets.changes(tab);
    if (!now || (turn !== undefined && now.turn !== turn)) return undefined;
    const accepted = this.accepted.get(tab);
    const kept = accepted?.turn === now.turn ? now.changes.filter((c) => !accepted.paths.has(c.path)) : now.changes;
    return { turn: now.turn, changes: kept };
  }

  /** Opens the multi-file diff of the tab's last turn (or says why not); returns how many files it shows. */
  async open(tab: string, turn?: number): Promise<number> {
    const review = await this.files(tab, turn);
    if (!review) {
      void vscode.window.showInformationMessage(vscode.l10n.t("These changes are no longer kept: only the tab's last turn can be reviewed."));
      return 0;
    }
    if (review.changes.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Nothing left to review: the turn changed no files, or each one was accepted or rejected.'));
      return 0;
    }
    const triples = review.changes.map((c) => {
      const file = vscode.Uri.file(c.path);
      const before = vscode.Uri.from({ scheme: TURN_SCHEME, path: c.path, query: tab, fragment: String(review.turn) });
      return [file, c.status === 'added' ? undefined : before, c.status === 'deleted' ? undefined : file] as const;
    });
    // VS Code adds the count of files to the title; one review per tab (the one before is closed).
    const title = vscode.l10n.t('Turn changes: {0}', this.tabTitle(tab) ?? tab);
    const before = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => !(t.input instanceof vscode.TabInputText) && t.label.startsWith(title));
    if (before.length) await vscode.window.tabGroups.close(before);
    this.log.info(`Review of tab ${tab}'s turn ${review.turn}: ${review.changes.length} file(s)`);
    await vscode.commands.executeCommand('vscode.changes', title, triples);
    return review.changes.length;
  }

  /** Accept keeps the file as it is and drops it from the review; Reject writes back its content before the turn. */
  private async decideFile(how: 'accept' | 'reject', uri: vscode.Uri | undefined): Promise<void> {
    const tab = this.activeTab();
    const review = await this.files(tab);
    if (!review?.changes.length) return;
    let change = review.changes.find((c) => c.path === (uri ?? this.focusedFile())?.fsPath);
    if (!change) {
      // From the review's title the focus has left its files: asked, the file last edited or looked at first.
      const items = review.changes.map((c) => ({ label: vscode.workspace.asRelativePath(c.path), description: c.status, change: c }));
      const pick = vscode.window.createQuickPick<(typeof items)[number]>();
      pick.title = how === 'accept' ? vscode.l10n.t('Accept the changes of a file') : vscode.l10n.t('Reject the changes of a file');
      pick.items = items;
      pick.activeItems = items.filter((i) => i.change.path === this.lastFocused);
      change = await new Promise<FileChange | undefined>((resolve) => {
        pick.onDidAccept(() => resolve(pick.selectedItems[0]?.change ?? pick.activeItems[0]?.change));
        pick.onDidHide(() => resolve(undefined));
        pick.show();
      });
      pick.dispose();
    }
    if (!change) return;
    if (how === 'reject') {
      const failed = await this.sets.revert(tab, [change.path]);
      if (failed.length) {
        void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('Could not restore: {0}', failed.join(', '))));
        return;
      }
      this.log.info(`Review: rejected ${change.status} ${change.path} (its content before the turn is back)`);
    } else this.log.info(`Review: accepted ${change.status} ${change.path}`);
    const kept = this.accepted.get(tab);
    if (kept?.turn === review.turn) kept.paths.add(change.path);
    else this.accepted.set(tab, { turn: review.turn, paths: new Set([change.path]) });
    if (review.changes.length > 1) await this.open(tab, review.turn);
  }

  /** Puts back the content before the turn of the hunk at `line` (0-based) of `uri` (the cursor's by default). */
  private async rejectHunk(uri: vscode.Uri | undefined, line: number | undefined): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const target = uri ?? editor?.document.uri;
    const at = line ?? editor?.selection.active.line;
    const review = await this.files(this.activeTab());
    const change = review?.changes.find((c) => c.path === target?.fsPath);
    if (!target || at === undefined || !change || change.status !== 'modified' || change.before === undefined) {
      void vscode.window.showInformationMessage(vscode.l10n.t('No change of the turn under the cursor.'));
      return;
    }
    const document = await vscode.workspace.openTextDocument(target);
    const hunk = hunkAt(change.before, document.getText(), at);
    if (!hunk) {
      void vscode.window.showInformationMessage(vscode.l10n.t('No change of the turn under the cursor.'));
      return;
    }
    const range = new vscode.Range(hunk.from, 0, hunk.to, 0);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(target, range, hunk.before);
    if (!(await vscode.workspace.applyEdit(edit)) || !(await document.save())) throw new Error(vscode.l10n.t('Could not restore: {0}', target.fsPath));
    this.log.info(`Review: rejected the change at line ${at + 1} of ${target.fsPath}`);
  }

  /** The file of the focused editor (the right side of a diff, or a file). */
  private focusedFile(): vscode.Uri | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    return uri?.scheme === 'file' ? uri : undefined;
  }

  dispose(): void {
    for (const r of this.registrations) r.dispose();
  }
}
