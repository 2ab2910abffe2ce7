/**
 * The Runs view (Atrium's sidebar, docs/fanout.md): each run of "Run on Several Agents…" with its state, wall
 * time, tokens and cost, files changed and lines added and removed, and its check's result; its files below it
 * (a click opens that file's diff against the start). Inline and context actions: Open Chat, Diff, Compare With…,
 * Apply, Apply as Branch, Keep, Discard. The view's title: Run on Several Agents…, Check Command…, and the
 * worktrees left by earlier windows (with the disk they use) to remove.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type FileChange, repositoryOf } from '../../fanout/worktrees';
import type { AgentManager } from '../../manager/agentManager';
import { registerCommand } from '../commandRegistry';
import { snapshotUri, worktreeUri } from './runDiffs';
import type { EditorRun, RunsController } from './runsController';

type Node = { run: EditorRun } | { run: EditorRun; file: FileChange } | { leftover: { id: string; path: string; bytes: number } };

const STATE_ICONS: Record<EditorRun['state'], string> = {
  queued: 'clock',
  starting: 'loading~spin',
  running: 'loading~spin',
  checking: 'beaker',
  done: 'pass',
  failed: 'error',
  cancelled: 'circle-slash',
};

/** One line of numbers for a run: what the Runs view shows beside its name. */
export function runSummary(run: EditorRun, now = Date.now()): string {
  const parts: string[] = [run.state === 'done' || run.state === 'failed' || run.state === 'cancelled' ? (run.outcome ?? run.state) : run.state];
  if (run.startedAt) parts.push(`${(((run.endedAt ?? now) - run.startedAt) / 1000).toFixed(1)} s`);
  if (run.changes) parts.push(vscode.l10n.t('{0} file(s) +{1} −{2}', run.changes.files.length, run.changes.added, run.changes.removed));
  if (run.check) parts.push(run.check.exitCode === 0 ? vscode.l10n.t('check passed') : vscode.l10n.t('check exit {0}', run.check.exitCode ?? run.check.signal ?? '?'));
  const tokens = run.usage ? (run.usage.inputTokens ?? 0) + (run.usage.outputTokens ?? 0) || run.usage.used : 0;
  if (tokens) parts.push(vscode.l10n.t('{0} tokens', tokens.toLocaleString()));
  if (run.usage?.cost) parts.push(`${run.usage.cost.amount.toFixed(2)} ${run.usage.cost.currency}`);
  return parts.join(' · ');
}

class RunsTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  leftovers: Array<{ id: string; path: string; bytes: number }> = [];

  constructor(private readonly runs: RunsController) {}

  refresh(): void {
    this.changed.fire();
  }

  getChildren(node?: Node): Node[] {
    if (!node) return [...this.runs.runs.map((run) => ({ run })), ...this.leftovers.filter((l) => !this.runs.runs.some((r) => r.id === l.id)).map((leftover) => ({ leftover }))];
    if ('leftover' in node || 'file' in node) return [];
    return (node.run.changes?.files ?? []).map((file) => ({ run: node.run, file }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('leftover' in node) {
      const item = new vscode.TreeItem(vscode.l10n.t('Kept run {0}', node.leftover.id));
      item.id = `leftover:${node.leftover.id}`;
      item.description = `${(node.leftover.bytes / (1024 * 1024)).toFixed(1)} MiB`;
      item.tooltip = node.leftover.path;
      item.iconPath = new vscode.ThemeIcon('archive');
      item.contextValue = 'agentHost.leftoverRun';
      return item;
    }
    if ('file' in node) {
      const { run, file } = node;
      const item = new vscode.TreeItem(path.basename(file.file));
      item.id = `run:${run.id}:${file.file}`;
      item.description = file.binary ? vscode.l10n.t('binary') : `+${file.added} −${file.removed}`;
      item.tooltip = file.file;
      item.resourceUri = worktreeUri(run.worktree.path, file.file);
      item.command = {
        command: 'vscode.diff',
        title: vscode.l10n.t('Diff'),
        arguments: [snapshotUri(run.worktree.repo, run.worktree.base, file.file), worktreeUri(run.worktree.path, file.file), vscode.l10n.t('{0} ({1} ↔ the start)', file.file, run.label)],
      };
      return item;
    }
    const { run } = node;
    const item = new vscode.TreeItem(run.label, run.changes?.files.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = `run:${run.id}`;
    item.description = runSummary(run);
    const lines = [run.label, runSummary(run), run.worktree.path];
    if (run.error) lines.push(run.error);
    if (run.check) lines.push(`$ ${run.check.command}`, run.check.tail.trim().split('\n').slice(-8).join('\n'));
    item.tooltip = lines.join('\n');
    item.iconPath = new vscode.ThemeIcon(STATE_ICONS[run.state]);
    item.contextValue = run.state === 'done' || run.state === 'failed' || run.state === 'cancelled' ? `agentHost.run.ended${run.keep ? '.kept' : ''}` : 'agentHost.run.going';
    return item;
  }
}

export function registerRunsView(runs: RunsController, manager: AgentManager, log: vscode.LogOutputChannel): vscode.Disposable {
  const tree = new RunsTree(runs);
  const view = vscode.window.createTreeView('agentHost.runs', { treeDataProvider: tree, showCollapseAll: false });
  let repo: string | undefined;
  // One walk of the worktrees at a time (it sizes every file): changes meanwhile ask for one more after it.
  let walking: Promise<void> | undefined;
  let again = false;
  const refreshLeftovers = (): Promise<void> => {
    if (walking !== undefined) {
      again = true;
      return walking;
    }
    walking = walk().finally(() => {
      walking = undefined;
      if (again) {
        again = false;
        void refreshLeftovers().then(update);
      }
    });
    return walking;
  };
  const walk = async () => {
    const folder = runs.repositoryFolder ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) return;
    try {
      repo = await repositoryOf(folder);
      const all = await runs.worktrees.list(repo);
      tree.leftovers = all;
      // The disk every run's worktree uses (these runs' and those left from earlier windows).
      const bytes = all.reduce((n, w) => n + w.bytes, 0);
      view.description = all.length ? vscode.l10n.t('{0} worktree(s) · {1} MiB', all.length, (bytes / (1024 * 1024)).toFixed(1)) : '';
    } catch {
      tree.leftovers = [];
      view.description = '';
    }
    tree.refresh();
  };
  const update = () => {
    const going = runs.runs.filter((r) => r.state !== 'done' && r.state !== 'failed' && r.state !== 'cancelled').length;
    view.badge = going ? { value: going, tooltip: vscode.l10n.t('{0} run(s) going', going) } : undefined;
    view.message = runs.runs.length || tree.leftovers.length ? '' : vscode.l10n.t('No runs. "Run on Several Agents…" runs one prompt on several agents, each in a git worktree of its own.');
    tree.refresh();
  };
  // Wall times move while runs go.
  const ticker = setInterval(() => runs.runs.some((r) => r.state === 'running' || r.state === 'starting') && tree.refresh(), 1000);
  const pick = (node?: unknown) => (node && typeof node === 'object' && 'run' in node ? (node as { run: EditorRun }).run : undefined);
  void refreshLeftovers().then(update);
  return vscode.Disposable.from(
    view,
    // A run that came or went changes what counts as left over from an earlier window.
    runs.onDidChange(() => void refreshLeftovers().then(update)),
    view.onDidChangeVisibility((e) => e.visible && void refreshLeftovers().then(update)),
    new vscode.Disposable(() => clearInterval(ticker)),
    registerCommand('agentHost.runOnSeveralAgents', (prompt?: string) => runs.start(typeof prompt === 'string' ? prompt : undefined)),
    registerCommand('agentHost.setRunsCheckCommand', () => runs.setCheckCommand()),
    registerCommand('agentHost.openRunChat', (node?: unknown) => {
      const run = pick(node);
      if (run?.tabId) manager.switchTab(run.tabId);
      return vscode.commands.executeCommand('agentHost.chat.focus');
    }),
    registerCommand('agentHost.diffRun', async (node?: unknown) => {
      const run = pick(node);
      if (run) await runs.diff(run);
    }),
    registerCommand('agentHost.compareRuns', async (node?: unknown) => {
      const run = pick(node);
      if (run) await runs.compare(run);
    }),
    registerCommand('agentHost.applyRun', async (node?: unknown) => {
      const run = pick(node);
      if (run) await runs.apply(run);
    }),
    registerCommand('agentHost.applyRunAsBranch', async (node?: unknown) => {
      const run = pick(node);
      if (run) await runs.applyAsBranch(run);
    }),
    registerCommand('agentHost.keepRun', (node?: unknown) => {
      const run = pick(node);
      if (run) runs.toggleKeep(run);
    }),
    registerCommand('agentHost.discardRun', async (node?: unknown) => {
      if (node && typeof node === 'object' && 'leftover' in node) {
        const { leftover } = node as { leftover: { id: string; path: string } };
        if (!repo) return;
        await runs.worktrees.remove({ ...leftover, repo });
        log.info(`Runs: removed the kept run ${leftover.id}`);
        await refreshLeftovers();
        update();
        return;
      }
      const run = pick(node);
      if (run) await runs.discard(run);
    }),
  );
}
