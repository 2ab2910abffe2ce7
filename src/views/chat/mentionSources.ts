/**
 * What the composer's `@` offers beside files, the selection and problems: folders, workspace symbols, the active
 * terminal's recent output (recorded through VS Code's shell integration), the git changes (the built-in Git
 * extension's diff) and links. Each becomes a chip; the session layer sends it as the agent takes it.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ChatRequests, ContextChip, FileHit } from '../../shared/chatProtocol';
import type { EditorActions } from './editorActions';

/** The recent output kept per terminal (characters), and what a chip carries of a diff. */
export const TERMINAL_CHARS = 16 * 1024;
export const GIT_DIFF_CHARS = 64 * 1024;
const SYMBOL_HITS = 15;

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are what this removes
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** The Git extension's API as far as it is read here (vscode.git, API version 1). */
interface GitApi {
  state: 'uninitialized' | 'initialized';
  onDidChangeState: vscode.Event<'uninitialized' | 'initialized'>;
  repositories: { rootUri: vscode.Uri; diff(cached?: boolean): Promise<string> }[];
}

/** How long a chip waits for the Git extension to find the workspace's repositories (it scans when it starts). */
const GIT_READY_MS = 5000;

let chipCount = 0;
const chipId = (what: string) => `ctx-${what}-${++chipCount}`;

export class MentionSources implements vscode.Disposable {
  private readonly outputs = new Map<vscode.Terminal, string>();
  private readonly subs: vscode.Disposable[] = [];

  constructor() {
    // (onDidStartTerminalShellExecution: VS Code 1.93; a terminal without shell integration records nothing.)
    const w = vscode.window as Partial<typeof vscode.window>;
    if (w.onDidStartTerminalShellExecution) this.subs.push(w.onDidStartTerminalShellExecution((e) => void this.record(e.terminal, e.execution)));
    this.subs.push(vscode.window.onDidCloseTerminal((t) => this.outputs.delete(t)));
  }

  private async record(terminal: vscode.Terminal, execution: vscode.TerminalShellExecution): Promise<void> {
    const keep = (text: string) => this.outputs.set(terminal, text.length > TERMINAL_CHARS ? text.slice(-TERMINAL_CHARS) : text);
    keep(`${this.outputs.get(terminal) ?? ''}$ ${execution.commandLine.value}\n`);
    for await (const data of execution.read()) keep((this.outputs.get(terminal) ?? '') + data.replace(ANSI, ''));
  }

  /** The active terminal's recent commands and output (null when none was recorded). */
  terminalChip(): ContextChip | null {
    const terminal = vscode.window.activeTerminal;
    const text = terminal && this.outputs.get(terminal)?.replace(/\r\n?/g, '\n');
    if (!terminal || !text?.trim()) return null;
    return { id: chipId('terminal'), kind: 'terminal', label: vscode.l10n.t('Terminal: {0}', terminal.name), text, size: text.length };
  }

  /** The working tree's and the index's changes against HEAD, from the built-in Git extension (null: no repository). */
  async gitChip(): Promise<ContextChip | null> {
    const git = vscode.extensions.getExtension<{ getAPI(version: 1): GitApi }>('vscode.git');
    const api = git ? (git.isActive ? git.exports : await git.activate()).getAPI(1) : undefined;
    if (api?.state === 'uninitialized') {
      await new Promise<void>((resolve) => {
        const done = api.onDidChangeState(() => finish());
        const timer = setTimeout(() => finish(), GIT_READY_MS);
        const finish = () => {
          clearTimeout(timer);
          done.dispose();
          resolve();
        };
      });
    }
    const repo = api?.repositories[0];
    if (!repo) return null;
    const [staged, unstaged] = await Promise.all([repo.diff(true), repo.diff(false)]);
    const whole = [staged, unstaged].filter((d) => d.trim()).join('\n');
    const text = whole.length > GIT_DIFF_CHARS ? `${whole.slice(0, GIT_DIFF_CHARS)}\n… (${whole.length - GIT_DIFF_CHARS} more characters not sent)` : whole || vscode.l10n.t('No changes.');
    return { id: chipId('git'), kind: 'git', label: vscode.l10n.t('Git changes'), text, size: whole.length };
  }

  /** Workspace symbols matching `query` (the language servers'), as hits whose chip is the symbol's lines. */
  async symbolHits(query: string): Promise<FileHit[]> {
    if (query.length < 2) return [];
    const found = (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', query)) ?? [];
    return found.slice(0, SYMBOL_HITS).map((s) => ({
      kind: 'symbol' as const,
      uri: s.location.uri.toString(),
      label: s.name,
      description: `${vscode.workspace.asRelativePath(s.location.uri)}:${s.location.range.start.line + 1}`,
      range: { startLine: s.location.range.start.line + 1, endLine: s.location.range.end.line + 1 },
    }));
  }

  /** A symbol's lines as a code chip (its text read now). */
  async symbolChip(hit: { uri: string; label: string; startLine: number; endLine: number }): Promise<ContextChip | null> {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(hit.uri, true));
    const range = new vscode.Range(hit.startLine - 1, 0, Math.min(doc.lineCount - 1, hit.endLine - 1), Number.MAX_SAFE_INTEGER);
    return {
      id: chipId('symbol'),
      kind: 'selection',
      label: `${hit.label} (${path.basename(doc.uri.path)}:${hit.startLine}-${range.end.line + 1})`,
      uri: hit.uri,
      range: { startLine: hit.startLine, endLine: range.end.line + 1 },
      text: doc.getText(range),
    };
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}

type Params<M extends keyof ChatRequests> = ChatRequests[M][0];

/** The page's `@` requests: files, folders and symbols found; the selection, problems, terminal output or git changes as a chip. */
export function mentionHandlers(editor: EditorActions, sources: MentionSources) {
  return {
    searchFiles: async ({ query }: Params<'searchFiles'>) => [...(await editor.searchFiles(query)), ...(await sources.symbolHits(query).catch(() => []))],
    editorContext: ({ what }: Params<'editorContext'>) =>
      what === 'selection' ? editor.selectionChip() : what === 'problems' ? editor.problemsChip() : what === 'terminal' ? sources.terminalChip() : sources.gitChip(),
    symbolContext: (hit: Params<'symbolContext'>) => sources.symbolChip(hit),
  };
}
