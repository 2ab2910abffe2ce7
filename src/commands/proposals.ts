/**
 * Proposed edits shown in the diff editor (the original on the left, a read-only virtual document with the
 * proposal on the right) with Accept / Reject in the editor title (and the palette). Accept applies one
 * WorkspaceEdit (one undo step); closing the diff or cancelling the task rejects. No notification of its own:
 * the task's progress notification says where to answer, and it closes with the task (a notification with
 * buttons cannot be closed by code, and stayed after an answer in the editor title).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { registerCommand } from '../views/commandRegistry';
import { closeDiffsShowing, VirtualDocuments } from '../views/virtualDocuments';

export const PROPOSAL_SCHEME = 'agent-host-proposal';
const CONTEXT_KEY = 'agentHost.proposalPending';

type Decision = 'accept' | 'reject';

export class ProposalPreview implements vscode.Disposable {
  private readonly docs = new VirtualDocuments(PROPOSAL_SCHEME);
  private readonly pending = new Map<string, (d: Decision) => void>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.disposables.push(
      this.docs,
      registerCommand('agentHost.proposal.accept', (uri?: unknown) => this.decide('accept', uri)),
      registerCommand('agentHost.proposal.reject', (uri?: unknown) => this.decide('reject', uri)),
      // Closing the diff tab answers "reject".
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputTextDiff) this.pending.get(input.modified.toString())?.('reject');
        }
      }),
    );
  }

  /** Shows `document` with `range` replaced by `newText`; on Accept applies that edit. Resolves true when applied. */
  async reviewEdit(document: vscode.TextDocument, range: vscode.Range, newText: string, title: string, token: vscode.CancellationToken): Promise<boolean> {
    const full = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
    const proposed = document.getText(new vscode.Range(full.start, range.start)) + newText + document.getText(new vscode.Range(range.end, full.end));
    const versionBefore = document.version;
    const decision = await this.show(document.uri, proposed, title, token);
    if (decision !== 'accept') return false;
    if (document.version !== versionBefore) {
      throw new Error(vscode.l10n.t('{0} changed while the proposal was open; nothing was applied', path.basename(document.uri.fsPath)));
    }
    const wasDirty = document.isDirty;
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, range, newText);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(vscode.l10n.t('the edit could not be applied'));
    // Save only what was saved before: unsaved work of the user stays unsaved.
    if (!wasDirty) await document.save();
    return true;
  }

  /** Shows a new file (or the new content of an existing one); on Accept writes it and opens it. */
  async reviewFile(target: vscode.Uri, content: string, title: string, token: vscode.CancellationToken): Promise<boolean> {
    let existing: vscode.TextDocument | undefined;
    try {
      existing = await vscode.workspace.openTextDocument(target);
    } catch {
      existing = undefined;
    }
    if (existing) {
      const all = new vscode.Range(existing.positionAt(0), existing.positionAt(existing.getText().length));
      const applied = await this.reviewEdit(existing, all, content, title, token);
      if (applied) await vscode.window.showTextDocument(existing, { preview: false });
      return applied;
    }
    const empty = this.virtualUri(target, 'new', '');
    const decision = await this.show(empty, content, title, token);
    if (decision !== 'accept') return false;
    const edit = new vscode.WorkspaceEdit();
    edit.createFile(target, { ignoreIfExists: false, contents: new TextEncoder().encode(content) });
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(vscode.l10n.t('{0} could not be created', target.fsPath));
    await vscode.window.showTextDocument(target, { preview: false });
    return true;
  }

  dispose(): void {
    for (const resolve of this.pending.values()) resolve('reject');
    for (const d of this.disposables) d.dispose();
  }

  private virtualUri(file: vscode.Uri, kind: string, content: string): vscode.Uri {
    return this.docs.add(path.basename(file.fsPath), content, kind);
  }

  private async show(left: vscode.Uri, proposed: string, title: string, token: vscode.CancellationToken): Promise<Decision> {
    const right = this.virtualUri(left.scheme === PROPOSAL_SCHEME ? vscode.Uri.file(left.path) : left, 'proposal', proposed);
    const key = right.toString();
    const decision = new Promise<Decision>((resolve) => this.pending.set(key, resolve));
    const cancel = token.onCancellationRequested(() => this.pending.get(key)?.('reject'));
    await vscode.commands.executeCommand('setContext', CONTEXT_KEY, true);
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: false });
    try {
      return await decision;
    } finally {
      cancel.dispose();
      this.pending.delete(key);
      this.docs.delete(right);
      await vscode.commands.executeCommand('setContext', CONTEXT_KEY, this.pending.size > 0);
      await closeDiffsShowing(right);
    }
  }

  /** Accept / Reject from the editor title (the URI of the diff's right side) or the palette (the latest). */
  private decide(decision: Decision, uri: unknown): void {
    const key = uri instanceof vscode.Uri && uri.scheme === PROPOSAL_SCHEME ? uri.toString() : [...this.pending.keys()].pop();
    if (key) this.pending.get(key)?.(decision);
  }
}
