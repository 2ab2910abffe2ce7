import * as vscode from 'vscode';
import { ResponseError } from 'vscode-jsonrpc/node';
import { diskStore, type TextDocumentStore } from '../fileService';

/** Read-only documents of text the agent proposes or a file had before the turn (left/right of a diff). */
export class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  static readonly scheme = 'agent-host';
  private readonly texts = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  private counter = 0;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(VirtualDocuments.scheme, this);
  readonly onDidChange = this.emitter.event;

  /** A uri whose document shows `text`; `label` names it (the file it stands for). */
  add(label: string, text: string, kind: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: VirtualDocuments.scheme, path: `/${kind}/${++this.counter}${label.startsWith('/') ? '' : '/'}${label}` });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.registration.dispose();
    this.emitter.dispose();
  }
}

/** Opens a diff of `before` (undefined = new file) against `after`, each a text or a file uri. */
export async function showDiff(docs: VirtualDocuments, file: string, before: string | vscode.Uri | undefined, after: string | vscode.Uri, title: string): Promise<vscode.Uri> {
  const left = before instanceof vscode.Uri ? before : docs.add(file, before ?? '', 'before');
  const right = after instanceof vscode.Uri ? after : docs.add(file, after, 'proposed');
  await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  return right;
}

async function closeTabsShowing(uri: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
    const input = t.input;
    return input instanceof vscode.TabInputTextDiff && input.modified.toString() === uri.toString();
  });
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}

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
    await closeTabsShowing(proposed);
    return pick === accept;
  }
}
