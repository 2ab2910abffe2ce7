import * as vscode from 'vscode';
import { HostRequestError } from '../../session/sessionHost';
import { diskStore, type TextDocumentStore } from '../fileService';

/** Asks the person to accept one write (a view shows the diff); false rejects it. */
export type WriteReview = (absPath: string, before: string | undefined, after: string) => Promise<boolean>;

function openDocument(absPath: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === absPath);
}

/**
 * Files as the editor sees them: reads return an open editor's unsaved text; writes go through a
 * WorkspaceEdit (open editors follow, undo works) and are saved, optionally after an Accept/Reject review.
 */
export class EditorDocumentStore implements TextDocumentStore {
  constructor(
    private readonly review: WriteReview,
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
      throw new HostRequestError('rejected', `The user rejected this edit of ${absPath}; the file is unchanged`);
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
    // A save can be refused (another save or a participant in flight): once more, then straight to disk.
    // Checked on disk, not only by save()'s answer.
    const landed = async () => (await doc.save()) && (await diskStore.read(absPath)) === content;
    if ((await landed()) || (await landed())) return;
    this.log.warn(`VS Code did not save ${absPath}; writing it to disk directly`);
    await diskStore.write(absPath, content);
  }
}
