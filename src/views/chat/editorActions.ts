import * as path from 'node:path';
import * as vscode from 'vscode';
import { inertMarkup } from '../../core/visibleText';
import { gitignoreFilter } from '../../host/gitignoreFilter';
import { resolveInWorkspace } from '../../host/workspacePaths';
import type { ContextChip, FileHit } from '../../shared/chatProtocol';
import { showDiff, VirtualDocuments } from '../virtualDocuments';

const FILE_INDEX_TTL_MS = 20_000;
const EXCLUDED_DIRS = ['node_modules', '.git', 'dist', 'out', '.scratch', '.tools'];

/**
 * What the `@` file search leaves out: those folders and the `files.exclude` globs (an exclude given to findFiles
 * replaces the setting's). A glob with a brace group of its own cannot sit in the one group and is left to the
 * setting's users (the Explorer).
 */
function excludeGlob(): string {
  const excluded = vscode.workspace.getConfiguration('files').get<Record<string, unknown>>('exclude') ?? {};
  const globs = Object.entries(excluded)
    .filter(([glob, on]) => on === true && !/[{},]/.test(glob))
    .map(([glob]) => glob);
  return `{${[...EXCLUDED_DIRS.map((d) => `**/${d}/**`), ...globs].join(',')}}`;
}

/**
 * Characters that make a command read differently from what runs: C0/C1 controls but tab and newline
 * (a carriage return is Enter in a terminal), bidi controls (Trojan Source) and zero-width characters.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const DECEPTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/u;

/** Whether `uri` is a file inside the workspace folders (after resolving `..` and symlinks). */
export function inWorkspace(uri: vscode.Uri): boolean {
  if (uri.scheme !== 'file') return false;
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  try {
    resolveInWorkspace(uri.fsPath, roots);
    return true;
  } catch {
    return false;
  }
}

/** A path or URI an agent named: a URI as it is, an absolute path as a file, a relative one in the first workspace folder. */
export function resolveAgentPath(p: string): vscode.Uri {
  if (/^[a-z][\w+.-]+:\/\//i.test(p)) return vscode.Uri.parse(p);
  if (path.isAbsolute(p)) return vscode.Uri.file(p);
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  return root ? vscode.Uri.joinPath(root, p) : vscode.Uri.file(p);
}

/** What the chat does in the editor: open files and diffs, insert or apply code, run it, find files. */
export class EditorActions implements vscode.Disposable {
  /** Read-only documents holding the sides of diffs and code blocks. */
  private readonly docs = new VirtualDocuments('agent-host-chat');
  private fileIndex: { at: number; uris: vscode.Uri[] } | undefined;

  /** Opens a file the agent named (a tool call's location, a link): outside the workspace only after a modal with the full path. */
  async openLocation(p: string, line?: number | null): Promise<void> {
    const uri = resolveAgentPath(p);
    if (!inWorkspace(uri)) {
      const open = vscode.l10n.t('Open');
      const where = uri.scheme === 'file' ? uri.fsPath : uri.toString(true);
      const pick = await vscode.window.showWarningMessage(vscode.l10n.t('The agent links to a file outside the workspace. Open it?'), { modal: true, detail: where }, open);
      if (pick !== open) return;
    }
    const pos = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), preview: true });
  }

  /** A file of Atrium's own (a long message's whole text), in an editor. */
  async openOwnFile(file: string): Promise<void> {
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
  }

  async openDiff(p: string, oldText: string | null, newText: string): Promise<void> {
    const name = path.basename(p);
    await showDiff(this.docs, name, oldText ?? '', newText, vscode.l10n.t("{0} (the agent's change)", name), {});
  }

  async openLink(href: string): Promise<void> {
    if (/^(https?|mailto):/i.test(href)) {
      await vscode.env.openExternal(vscode.Uri.parse(href));
      return;
    }
    const m = /^(?:file:\/\/)?([^#]+)(?:#L(\d+))?/.exec(href);
    if (m?.[1] && !/^[a-z][\w+.-]*:/i.test(href.replace(/^file:\/\//, ''))) {
      await this.openLocation(decodeURIComponent(m[1]), m[2] ? Number(m[2]) : undefined);
    }
  }

  private editor(): vscode.TextEditor {
    const e = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!e) throw new Error(vscode.l10n.t('Open a file in the editor first.'));
    return e;
  }

  async insertAtCursor(code: string): Promise<void> {
    const e = this.editor();
    await e.edit((b) => {
      for (const s of e.selections) b.replace(s, code);
    });
    await vscode.window.showTextDocument(e.document, e.viewColumn);
  }

  /** Shows the active file with the code block in place of its selection (or whole text), then asks. */
  async applyToActiveFile(code: string): Promise<void> {
    const e = this.editor();
    const doc = e.document;
    const sel = e.selection;
    const full = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
    const target = sel.isEmpty ? full : sel;
    const after = doc.getText().slice(0, doc.offsetAt(target.start)) + code + doc.getText().slice(doc.offsetAt(target.end));
    const name = path.basename(doc.uri.path);
    await showDiff(this.docs, name, doc.uri, after, vscode.l10n.t('{0} ↔ code block', name), {});
    const apply = vscode.l10n.t('Apply');
    const pick = await vscode.window.showInformationMessage(inertMarkup(vscode.l10n.t('Apply the code block to {0}?', name)), apply);
    if (pick !== apply) return;
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, full, after);
    await vscode.workspace.applyEdit(edit);
  }

  /**
   * Runs a code block in the "Atrium" terminal, after a modal that shows exactly the text that will be
   * sent. `agentHost.chat.runCodeBlocks: false` turns this off; text with control, bidi or zero-width
   * characters is refused (what the modal shows would not be what runs).
   */
  async runInTerminal(code: string): Promise<void> {
    if (!vscode.workspace.getConfiguration('agentHost').get<boolean>('chat.runCodeBlocks', true)) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Running code blocks from the chat is turned off (setting "agentHost.chat.runCodeBlocks").'));
      return;
    }
    const text = code.replace(/\r\n/g, '\n').replace(/\n+$/, '');
    const odd = DECEPTIVE.exec(text);
    if (odd) {
      const at = `U+${odd[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      void vscode.window.showWarningMessage(vscode.l10n.t('Not run: the code block contains an invisible or control character ({0}). Copy it and check it first.', at));
      return;
    }
    if (!text.trim()) return;
    const run = vscode.l10n.t('Run');
    const pick = await vscode.window.showWarningMessage(vscode.l10n.t('Run this in a terminal?'), { modal: true, detail: text }, run);
    if (pick !== run) return;
    const name = vscode.l10n.t('Atrium');
    const terminal = vscode.window.terminals.find((t) => t.name === name) ?? vscode.window.createTerminal({ name });
    terminal.show();
    terminal.sendText(text, true);
  }

  selectionChip(): ContextChip | null {
    const e = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!e) return null;
    const rel = vscode.workspace.asRelativePath(e.document.uri);
    const id = `ctx-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
    if (e.selection.isEmpty) return { id, kind: 'file', label: rel, uri: e.document.uri.toString() };
    const startLine = e.selection.start.line + 1;
    const endLine = e.selection.end.line + (e.selection.end.character === 0 && e.selection.end.line > e.selection.start.line ? 0 : 1);
    return {
      id,
      kind: 'selection',
      label: `${path.basename(rel)}:${startLine}-${endLine}`,
      uri: e.document.uri.toString(),
      range: { startLine, endLine },
      text: e.document.getText(e.selection),
    };
  }

  problemsChip(): ContextChip | null {
    const lines: string[] = [];
    for (const [uri, diags] of vscode.languages.getDiagnostics()) {
      for (const d of diags) {
        if (d.severity > vscode.DiagnosticSeverity.Warning) continue;
        const sev = d.severity === vscode.DiagnosticSeverity.Error ? 'error' : 'warning';
        lines.push(`${vscode.workspace.asRelativePath(uri)}:${d.range.start.line + 1}: ${sev}: ${d.message}`);
        if (lines.length >= 100) break;
      }
    }
    return {
      id: `ctx-problems-${Date.now()}`,
      kind: 'problems',
      label: vscode.l10n.t('Problems ({0})', lines.length),
      text: lines.join('\n') || vscode.l10n.t('No problems.'),
    };
  }

  async searchFiles(query: string): Promise<FileHit[]> {
    if (!this.fileIndex || Date.now() - this.fileIndex.at > FILE_INDEX_TTL_MS) {
      const found = await vscode.workspace.findFiles('**/*', excludeGlob(), 5000);
      // What each folder's .gitignore files leave out (the search view's own rule, search.useIgnoreFiles).
      const byFolder = new Map<string, { uri: vscode.Uri; rel: string }[]>();
      const uris: vscode.Uri[] = [];
      for (const uri of found) {
        const folder = vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath;
        if (!folder) {
          uris.push(uri);
          continue;
        }
        const files = byFolder.get(folder) ?? [];
        files.push({ uri, rel: path.relative(folder, uri.fsPath).split(path.sep).join('/') });
        byFolder.set(folder, files);
      }
      for (const [folder, files] of byFolder) {
        const ignored = gitignoreFilter(
          folder,
          files.map((f) => f.rel),
        );
        for (const f of files) if (!ignored(f.rel)) uris.push(f.uri);
      }
      this.fileIndex = { at: Date.now(), uris };
    }
    const q = query.toLowerCase();
    const scored: { hit: FileHit; score: number }[] = [];
    for (const uri of this.fileIndex.uris) {
      const rel = vscode.workspace.asRelativePath(uri);
      const base = path.basename(rel);
      const lb = base.toLowerCase();
      const lr = rel.toLowerCase();
      const score = !q ? 3 : lb.startsWith(q) ? 0 : lb.includes(q) ? 1 : lr.includes(q) ? 2 : -1;
      if (score < 0) continue;
      scored.push({ hit: { uri: uri.toString(), label: base, description: path.dirname(rel) === '.' ? '' : path.dirname(rel) }, score });
    }
    scored.sort((a, b) => a.score - b.score || a.hit.label.length - b.hit.label.length || a.hit.label.localeCompare(b.hit.label));
    return [...this.folderHits(q), ...scored.slice(0, 30).map((s) => s.hit)];
  }

  /** Folders of the indexed files whose name (or path) has `q`: a chip links the folder. */
  private folderHits(q: string): FileHit[] {
    if (!q || !this.fileIndex) return [];
    const folders = new Map<string, vscode.Uri>();
    for (const uri of this.fileIndex.uris) {
      for (let dir = vscode.Uri.joinPath(uri, '..'); !folders.has(dir.toString()); dir = vscode.Uri.joinPath(dir, '..')) {
        const rel = vscode.workspace.asRelativePath(dir, false);
        if (rel === dir.fsPath || rel === '' || rel === '.') break; // the folder itself, or outside it
        folders.set(dir.toString(), dir);
      }
    }
    const hits: { hit: FileHit; score: number }[] = [];
    for (const dir of folders.values()) {
      const rel = vscode.workspace.asRelativePath(dir, false);
      const base = path.basename(rel).toLowerCase();
      const score = base.startsWith(q) ? 0 : base.includes(q) ? 1 : rel.toLowerCase().includes(q) ? 2 : -1;
      if (score >= 0) hits.push({ hit: { kind: 'folder', uri: dir.toString(), label: `${path.basename(rel)}/`, description: path.dirname(rel) === '.' ? '' : path.dirname(rel) }, score });
    }
    hits.sort((a, b) => a.score - b.score || a.hit.label.length - b.hit.label.length);
    return hits.slice(0, 8).map((h) => h.hit);
  }

  dispose(): void {
    this.docs.dispose();
  }
}
