/**
 * Several agents on one task in the editor (docs/fanout.md): "Run on Several Agents…" picks 2–8 runs and the
 * prompt, makes one git worktree per run from the workspace's tree as it is (src/fanout/worktrees.ts), and opens
 * one chat tab per run pinned to its worktree (at most `agentHost.fanout.maxParallel` running at once, the rest
 * queued). When a run's turn ends, its changes are read and the workspace's check command runs in its worktree.
 * The Runs view (runsTree.ts) shows each run; from there: its diff against the base or against another run,
 * Apply (into the workspace's files, then reviewed), Apply as Branch, Discard. Worktrees go on apply and discard,
 * and when the window closes unless kept.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { runCheck, type CheckResult } from '../../fanout/fanout';
import { type ApplyOptions, NotAGitRepositoryError, protectedChanges, repositoryOf, type RunChanges, type RunWorktree, type RunWorktrees } from '../../fanout/worktrees';
import { runGit } from '../../host/checkpoints';
import { protectedPatternsFor } from '../../host/vscode/protectedSettings';
import type { AgentManager } from '../../manager/agentManager';
import type { Usage } from '../../session/timelineTypes';
import { confirmProtectedApply } from '../protectedWriteDialog';
import { snapshotUri, showRunDiff, worktreeUri } from './runDiffs';

export type RunState = 'queued' | 'starting' | 'running' | 'checking' | 'done' | 'failed' | 'cancelled';

export interface EditorRun {
  id: string;
  /** 1-based, in the order picked. */
  n: number;
  agent: string;
  label: string;
  /** What this run was asked (each start of several runs has its own). */
  prompt: string;
  worktree: RunWorktree;
  state: RunState;
  tabId?: string;
  outcome?: string;
  error?: string;
  startedAt?: number;
  endedAt?: number;
  usage?: Usage;
  changes?: RunChanges;
  check?: CheckResult;
  /** Kept when the window closes (else removed then). */
  keep: boolean;
}

const CHECK_KEY = 'agentHost.fanout.checkCommand';

export class RunsController implements vscode.Disposable {
  readonly runs: EditorRun[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private repo: string | undefined;
  private readonly waiting: EditorRun[] = [];
  private active = 0;

  constructor(
    private readonly manager: AgentManager,
    readonly worktrees: RunWorktrees,
    private readonly workspaceState: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get checkCommand(): string {
    return this.workspaceState.get<string>(CHECK_KEY, '');
  }

  async setCheckCommand(): Promise<void> {
    const value = await vscode.window.showInputBox({
      title: vscode.l10n.t('Check command for runs'),
      prompt: vscode.l10n.t('A shell command run in each run’s worktree once its turn ends (e.g. npm test); empty for none. Kept for this workspace.'),
      value: this.checkCommand,
    });
    if (value === undefined) return;
    await this.workspaceState.update(CHECK_KEY, value.trim());
    this.changed.fire();
  }

  /** The workspace's repository, or undefined after saying why (and offering `git init`). */
  private async repository(): Promise<string | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) {
      void vscode.window.showErrorMessage(vscode.l10n.t('Open a folder first: runs work in git worktrees of it.'));
      return undefined;
    }
    try {
      return await repositoryOf(folder);
    } catch (error) {
      if (!(error instanceof NotAGitRepositoryError)) throw error;
      const init = vscode.l10n.t('Initialize Git Repository');
      const answer = await vscode.window.showWarningMessage(
        vscode.l10n.t('Runs on several agents need git: each run works in a git worktree of {0}, never in your files. Make it a git repository?', folder),
        { modal: true },
        init,
      );
      if (answer !== init) return undefined;
      await runGit(['init', '-q'], folder);
      this.log.info(`Runs: git init in ${folder}`);
      return repositoryOf(folder);
    }
  }

  /** Asks for the runs and the prompt, then starts them. `prompt`: the composer's text, when started from there. */
  async start(prompt?: string): Promise<void> {
    const repo = await this.repository();
    if (!repo) return;
    const picked = await pickRuns(this.manager.agents().map((a) => a.name));
    if (!picked) return;
    const text =
      prompt?.trim() ||
      (await vscode.window.showInputBox({ title: vscode.l10n.t('Run on {0} agents', picked.length), prompt: vscode.l10n.t('What should each agent do?'), ignoreFocusOut: true }))?.trim();
    if (!text) return;
    await this.startRuns(repo, picked, text);
  }

  /** Makes the worktrees (one snapshot of the tree for all) and queues the runs. */
  async startRuns(repo: string, agents: readonly string[], prompt: string): Promise<EditorRun[]> {
    if (agents.length < 2 || agents.length > 8) throw new Error(vscode.l10n.t('Pick 2 to 8 runs.'));
    this.repo = repo;
    const base = await this.worktrees.snapshot(repo);
    const stamp = Date.now().toString(36);
    const made: EditorRun[] = [];
    for (const [i, agent] of agents.entries()) {
      const n = this.runs.length + 1;
      const id = `${stamp}-${i + 1}-${agent.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 24)}`;
      const worktree = await this.worktrees.create(repo, base, id);
      const run: EditorRun = { id, n, agent, label: vscode.l10n.t('{0} · run {1}', agent, n), prompt, worktree, state: 'queued', keep: false };
      this.runs.push(run);
      made.push(run);
      this.waiting.push(run);
    }
    this.log.info(`Runs: ${agents.length} runs of "${prompt.slice(0, 60)}" from ${base.slice(0, 10)} in ${this.worktrees.folderOf(repo)}`);
    this.changed.fire();
    void vscode.commands.executeCommand('agentHost.runs.focus');
    this.pump();
    return made;
  }

  private pump(): void {
    const max = vscode.workspace.getConfiguration('agentHost').get<number>('fanout.maxParallel', 4);
    while (this.active < Math.max(1, max) && this.waiting.length) {
      const run = this.waiting.shift()!;
      this.active++;
      void this.go(run).finally(() => {
        this.active--;
        this.pump();
      });
    }
  }

  private async go(run: EditorRun): Promise<void> {
    run.state = 'starting';
    run.startedAt = Date.now();
    this.changed.fire();
    try {
      run.tabId = await this.manager.openPinnedTab(run.agent, { folder: run.worktree.path, label: run.label }, run.n === 1);
      run.state = 'running';
      this.changed.fire();
      run.outcome = await this.manager.promptIn(run.tabId, run.prompt);
    } catch (error) {
      run.error = (error as Error).message;
      run.outcome = run.outcome ?? 'error';
    }
    run.endedAt = Date.now();
    const usage = run.tabId ? this.manager.sessionIn(run.tabId)?.model.usage : undefined;
    if (usage) run.usage = usage;
    await this.refreshChanges(run);
    const check = this.checkCommand;
    if (check && run.outcome !== 'cancelled') {
      run.state = 'checking';
      this.changed.fire();
      run.check = await runCheck(check, run.worktree.path, 10 * 60_000);
    }
    run.state = run.outcome === 'cancelled' ? 'cancelled' : run.error ? 'failed' : 'done';
    this.log.info(
      `Runs: ${run.label} ${run.state} (${run.outcome}), ${run.changes?.files.length ?? 0} file(s) +${run.changes?.added ?? 0} −${run.changes?.removed ?? 0}${run.check ? `, check exit ${run.check.exitCode}` : ''}`,
    );
    this.changed.fire();
  }

  /** Reads what the run changed so far (also after a follow-up in its tab). */
  async refreshChanges(run: EditorRun): Promise<void> {
    try {
      run.changes = await this.worktrees.changes(run.worktree);
    } catch (error) {
      this.log.warn(`Runs: could not read ${run.label}'s changes: ${(error as Error).message}`);
    }
    this.changed.fire();
  }

  find(id: string | undefined): EditorRun | undefined {
    return this.runs.find((r) => r.id === id);
  }

  /** The run's diff against the tree it started from. */
  async diff(run: EditorRun): Promise<void> {
    await this.refreshChanges(run);
    const files = run.changes?.files.map((f) => f.file) ?? [];
    const { repo, base } = run.worktree;
    await showRunDiff(
      vscode.l10n.t('{0} ↔ the tree it started from', run.label),
      files,
      (f) => snapshotUri(repo, base, f),
      (f) => worktreeUri(run.worktree.path, f),
    );
  }

  /** Two runs against each other: every file either changed. */
  async compare(a: EditorRun, b?: EditorRun): Promise<void> {
    const other =
      b ??
      this.find(
        (
          await vscode.window.showQuickPick(
            this.runs.filter((r) => r !== a).map((r) => ({ label: r.label, id: r.id })),
            { title: vscode.l10n.t('Compare {0} with…', a.label) },
          )
        )?.id,
      );
    if (!other) return;
    await Promise.all([this.refreshChanges(a), this.refreshChanges(other)]);
    const files = [...new Set([...(a.changes?.files ?? []), ...(other.changes?.files ?? [])].map((f) => f.file))].sort();
    await showRunDiff(
      vscode.l10n.t('{0} ↔ {1}', a.label, other.label),
      files,
      (f) => snapshotUri(a.worktree.repo, a.changes!.result, f),
      (f) => snapshotUri(other.worktree.repo, other.changes!.result, f),
    );
  }

  /** Stops a run's turn, closes its tab and removes its worktree. */
  async discard(run: EditorRun): Promise<void> {
    const i = this.waiting.indexOf(run);
    if (i >= 0) this.waiting.splice(i, 1);
    if (run.tabId) await this.manager.closeTab(run.tabId).catch(() => undefined);
    await this.worktrees.remove(run.worktree).catch((error: Error) => this.log.warn(`Runs: could not remove ${run.worktree.path}: ${error.message}`));
    this.runs.splice(this.runs.indexOf(run), 1);
    this.changed.fire();
  }

  toggleKeep(run: EditorRun): void {
    run.keep = !run.keep;
    this.changed.fire();
  }

  /** The workspace's repository (once a run started), for the leftover runs. */
  get repositoryFolder(): string | undefined {
    return this.repo;
  }

  /**
   * Puts the run's changes into the workspace's files: where they apply cleanly at once; a file the user changed
   * in the same lines meanwhile gets both sides as a merge conflict, opened in VS Code's merge editor (its result
   * is the real file). Then the review of what changed (Revert Block per change) opens, the run's tab closes and
   * its worktree goes. Protected files the run changed (.vscode/, .github/workflows/, .env…, and
   * `agentHost.files.protectedPaths`) go in only after a modal naming them (with the rest, or the rest alone).
   */
  async apply(run: EditorRun): Promise<{ applied: string[]; conflicted: string[] } | undefined> {
    await this.refreshChanges(run);
    const changes = run.changes;
    if (!changes?.files.length) {
      void vscode.window.showInformationMessage(vscode.l10n.t('{0} changed no file.', run.label));
      return undefined;
    }
    const { repo } = run.worktree;
    const patterns = protectedPatternsFor([repo]);
    const files = changes.files.map((f) => f.file);
    const guarded = protectedChanges(repo, files, patterns);
    let options: ApplyOptions = { protectedPatterns: patterns };
    if (guarded.length) {
      this.log.warn(`Runs: ${run.label} changed protected files: ${guarded.map((g) => `${g.file} (${g.pattern})`).join(', ')}`);
      const others = files.filter((f) => !guarded.some((g) => g.file === f));
      const choice = await confirmProtectedApply(run.label, guarded, others.length > 0);
      if (!choice) return undefined;
      options = choice === 'all' ? { allowProtected: true } : { only: others, protectedPatterns: patterns };
    }
    const yours = await this.worktrees.snapshot(repo);
    const result = await this.worktrees.applyMerging(run.worktree, changes.result, options);
    this.log.info(
      `Runs: applied ${run.label}: ${result.applied.length} file(s) clean, ${result.conflicted.length} with conflicts${result.conflicted.length ? ` (${result.conflicted.join(', ')})` : ''}`,
    );
    for (const file of result.conflicted) {
      await vscode.commands.executeCommand('_open.mergeEditor', {
        base: snapshotUri(repo, run.worktree.base, file),
        input1: { uri: snapshotUri(repo, yours, file), title: vscode.l10n.t('Yours') },
        input2: { uri: snapshotUri(repo, changes.result, file), title: run.label },
        output: vscode.Uri.file(path.join(repo, file)),
      });
    }
    if (result.conflicted.length) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('{0}: {1} file(s) you changed meanwhile have both sides as merge conflicts: {2}', run.label, result.conflicted.length, result.conflicted.join(', ')),
      );
    } else {
      await showRunDiff(
        vscode.l10n.t('{0} applied: your files before ↔ now', run.label),
        result.applied,
        (f) => snapshotUri(repo, yours, f),
        (f) => vscode.Uri.file(path.join(repo, f)),
      );
    }
    await this.discard(run);
    return result;
  }

  /** Keeps the run's result as a new branch (`atrium/<agent>-<n>`) of the repository; the working tree is not touched. */
  async applyAsBranch(run: EditorRun): Promise<string | undefined> {
    await this.refreshChanges(run);
    if (!run.changes) return undefined;
    const name = `atrium/${run.agent.replace(/[^A-Za-z0-9._-]+/g, '-')}-${run.id}`;
    await runGit(['branch', name, run.changes.result], run.worktree.repo);
    void vscode.window.showInformationMessage(vscode.l10n.t('{0} is on the new branch {1} (its start includes your uncommitted changes as a commit).', run.label, name));
    await this.discard(run);
    return name;
  }

  /** Removes every run's worktree not kept (the window closes). */
  async disposeRuns(): Promise<void> {
    for (const run of [...this.runs]) if (!run.keep) await this.worktrees.remove(run.worktree).catch(() => undefined);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** 2–8 runs: each configured agent once or more (an item's button adds another run of it). */
async function pickRuns(agents: string[]): Promise<string[] | undefined> {
  if (agents.length === 0) {
    void vscode.window.showErrorMessage(vscode.l10n.t('No agent is configured. Add one to the "agentHost.agents" setting.'));
    return undefined;
  }
  type Item = vscode.QuickPickItem & { agent: string };
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = vscode.l10n.t('Run on Several Agents: pick 2 to 8 runs');
  qp.placeholder = vscode.l10n.t('Each run works in a git worktree of its own; the + button adds another run of an agent');
  qp.canSelectMany = true;
  const more: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('add'), tooltip: vscode.l10n.t('Another run of this agent') };
  let items: Item[] = agents.map((agent) => ({ label: agent, agent, buttons: [more] }));
  qp.items = items;
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: string[] | undefined) => {
      if (done) return;
      done = true;
      resolve(value);
      qp.dispose();
    };
    qp.onDidTriggerItemButton((e) => {
      const selected = qp.selectedItems;
      const copies = items.filter((i) => i.agent === e.item.agent).length;
      const copy: Item = { label: e.item.agent, description: vscode.l10n.t('run {0}', copies + 1), agent: e.item.agent, buttons: [more] };
      const last = items.map((i) => i.agent).lastIndexOf(e.item.agent);
      items = [...items.slice(0, last + 1), copy, ...items.slice(last + 1)];
      qp.items = items;
      qp.selectedItems = [...selected, copy];
    });
    qp.onDidAccept(() => {
      const chosen = qp.selectedItems.map((i) => i.agent);
      if (chosen.length < 2 || chosen.length > 8) {
        qp.title = vscode.l10n.t('Pick 2 to 8 runs (now {0})', chosen.length);
        return;
      }
      finish(chosen);
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}
