import * as vscode from 'vscode';
import { ResponseError } from 'vscode-jsonrpc/node';
import { closeDiffsShowing, showDiff, type VirtualDocuments } from '../../views/virtualDocuments';
import { diskStore, type TextDocumentStore } from '../fileService';

function openDocument(absPath: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === absPath);
}

/**
 * Files as the editor sees them: reads return an open editor's unsaved text; writes go through a
 * WorkspaceEdit (open editors follow, undo works) and are saved, optionally after an Accept/Reject review.
 */
export class EditorDocumentStore implements TextDocumentStore {
  constructor(
    private readonly docs: VirtualDocuments,
    private readonly reviewWrites: () => boolean,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async read(absPath: string): Promise<string | undefined> {
    return openDocument(absPath)?.getText() ?? diskStore.read(absPath);
  }

  async write(absPath: string, content: string): Promise<void> {
    const uri = vscode.Uri.file(absPath);
    const before = await this.read(absPath);
    if (this.reviewWrites() && !(await this.review(absPath, before, content))) {
      this.log.info(`Write to ${absPath} rejected in review`);
      throw new ResponseError(-32603, `The user rejected this edit of ${absPath}; the file is unchanged`);
    }
    const edit = new vscode.WorkspaceEdit();
    if (before === undefined) {
      edit.createFile(uri, { ignoreIfExists: true, contents: Buffer.from(content, 'utf8') });
      if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`VS Code refused to create ${absPath}`);
      // Some hosts create the file empty; make sure the agent's content is what lands.
      if ((await diskStore.read(absPath)) !== content) await diskStore.write(absPath, content);
      return;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), content);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`VS Code refused the edit of ${absPath}`);
    // Saved so the agent's next shell command (tests, build) sees it; undo in the editor still restores.
    await doc.save();
  }

  /** Shows the proposed edit in the diff editor and asks Accept / Reject; closing the dialog rejects. */
  private async review(absPath: string, before: string | undefined, after: string): Promise<boolean> {
    const name = vscode.workspace.asRelativePath(absPath);
    const proposed = await showDiff(this.docs, absPath, before, after, vscode.l10n.t("{0} ↔ agent's proposed edit", name));
    const accept = vscode.l10n.t('Accept');
    const reject = vscode.l10n.t('Reject');
    // Modal: a toast can be missed or hidden, and an unanswered review would hold the agent's request forever.
    const pick = await vscode.window.showInformationMessage(
      vscode.l10n.t('The agent wants to write {0}. Apply this edit?', name),
      { modal: true, detail: vscode.l10n.t('The diff editor behind this dialog shows the change.') },
      accept,
      reject,
    );
    await closeDiffsShowing(proposed);
    return pick === accept;
  }
}
