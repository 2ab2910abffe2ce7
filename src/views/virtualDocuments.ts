import * as vscode from 'vscode';

/**
 * Read-only in-memory documents (the left or right side of a diff: what the agent proposes, what a file
 * had before). One provider per scheme; menus may key on the scheme (e.g. the proposal Accept/Reject).
 */
export class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  /** Documents a tab has shown: released once no tab shows them any more. */
  private readonly shown = new Set<string>();
  private counter = 0;
  private readonly registrations: vscode.Disposable[];

  constructor(readonly scheme = 'agent-host') {
    this.registrations = [vscode.workspace.registerTextDocumentContentProvider(scheme, this), vscode.window.tabGroups.onDidChangeTabs(() => this.releaseClosed())];
  }

  /** How many documents are held (tests check that closing tabs releases them). */
  get size(): number {
    return this.texts.size;
  }

  private releaseClosed(): void {
    const open = new Set<string>();
    for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
      const input = tab.input;
      if (input instanceof vscode.TabInputTextDiff) open.add(input.original.toString()).add(input.modified.toString());
      else if (input instanceof vscode.TabInputText) open.add(input.uri.toString());
    }
    for (const key of this.texts.keys()) {
      if (open.has(key)) this.shown.add(key);
      else if (this.shown.has(key)) {
        this.texts.delete(key);
        this.shown.delete(key);
      }
    }
  }

  /** A uri whose document shows `text`; `label` names it (the file it stands for). */
  add(label: string, text: string, kind: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: this.scheme, path: `/${kind}/${++this.counter}${label.startsWith('/') ? '' : '/'}${label}` });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  delete(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
    this.shown.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    for (const r of this.registrations) r.dispose();
    this.texts.clear();
    this.shown.clear();
  }
}

/** Opens a diff of `before` (undefined = new file) against `after`, each a text or a file uri; returns the right side. */
export async function showDiff(
  docs: VirtualDocuments,
  file: string,
  before: string | vscode.Uri | undefined,
  after: string | vscode.Uri,
  title: string,
  options: { preview?: boolean; viewColumn?: vscode.ViewColumn } = { preview: true },
): Promise<vscode.Uri> {
  const left = before instanceof vscode.Uri ? before : docs.add(file, before ?? '', 'before');
  const right = after instanceof vscode.Uri ? after : docs.add(file, after, 'proposed');
  await vscode.commands.executeCommand('vscode.diff', left, right, title, options);
  return right;
}

/** Closes every diff tab whose right side is `uri`. */
export async function closeDiffsShowing(uri: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === uri.toString());
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}
