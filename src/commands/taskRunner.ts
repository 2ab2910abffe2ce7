/**
 * One selection-command task at a time: a new task cancels the running one (as the original agent service
 * did) unless `agentHost.tasks.whenBusy` is `queue`. Each task shows a cancellable progress notification;
 * cancelling it (or being replaced) sends `session/cancel` through the manager — except a task replaced on an
 * agent that cancels the running task itself when the next arrives (the agent service's one task per connection).
 * Queued tasks are bounded by `agentHost.tasks.maxQueued`: one past it is refused with a warning.
 */
import * as vscode from 'vscode';
import { QUEUE_BOUNDS, queueBound, SerialQueue } from '../core/boundedQueue';
import { inertMarkup } from '../core/visibleText';
import type { AgentManager } from '../manager/agentManager';
import { AgentBusyError } from '../session/agentSession';
import { offerRetry } from '../views/busyRetry';
import type { SelectionTaskRequest } from '../session/selectionTask';
import { buildPromptParts, displayParts, type CodeContext } from '../tasks/promptParts';

export class TaskCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

export interface TaskContext {
  readonly token: vscode.CancellationToken;
  report(message: string): void;
  /**
   * Sends the instructions with the code context; resolves with the text of the agent's answer. The chat
   * shows `label` (with the context as a chip) as the user's message, not the instructions. `request`: the same
   * task as a structured request, sent instead to an agent that runs selection tasks itself (the agent service).
   */
  ask(instructions: string, contexts: CodeContext[], label?: string, request?: SelectionTaskRequest): Promise<string>;
  /** A line in the chat's transcript (e.g. the proposed test cases as a readable list). */
  note(title: string, detail: string): void;
}

interface RunningTask {
  readonly title: string;
  readonly cts: vscode.CancellationTokenSource;
  /** A newer task took its place (cancel mode). */
  replaced?: boolean;
}

export class TaskRunner implements vscode.Disposable {
  /** Tasks started and not yet ended (running, or waiting for the one before). */
  private readonly active = new Set<RunningTask>();
  private readonly queue = new SerialQueue(() => queueBound(vscode.workspace.getConfiguration('agentHost').get('tasks.maxQueued'), QUEUE_BOUNDS.selectionTasks));

  constructor(
    private readonly manager: AgentManager,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Runs `work` as the session's task; resolves when it ended (done, failed, cancelled, or refused by a full queue). */
  run(title: string, work: (ctx: TaskContext) => Promise<void>): Promise<void> {
    const queue = vscode.workspace.getConfiguration('agentHost').get<string>('tasks.whenBusy', 'cancel') === 'queue';
    const replaced = queue ? [] : [...this.active];
    for (const task of replaced) {
      this.log.info(`Task "${task.title}" cancelled: "${title}" started`);
      task.replaced = true;
      task.cts.cancel();
    }
    const task: RunningTask = { title, cts: new vscode.CancellationTokenSource() };
    // An agent that cancels its running task itself when the next one comes (the agent service) gets the newer one at once.
    const cancelsItself = replaced.length > 0 && this.manager.current?.selectionTasks?.newerCancelsRunning === true;
    if (cancelsItself) this.log.info(`Task "${title}" sent at once: the agent cancels the running task itself`);
    // Cancel mode: the replaced tasks end at once, so the newest is taken whatever their count.
    const done = this.queue.run(() => this.execute(title, task, work), { replacing: !queue, atOnce: cancelsItself });
    if (!done) {
      // A full queue refuses the newcomer (queue mode cancels nothing): the held tasks run on in order.
      task.cts.dispose();
      this.log.warn(`Task "${title}" refused: ${this.queue.size} task(s) already run or wait (agentHost.tasks.maxQueued)`);
      void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('Atrium: {0} was not queued: {1} tasks already run or wait (setting agentHost.tasks.maxQueued).', title, this.queue.size)));
      return Promise.resolve();
    }
    this.active.add(task);
    return done.finally(() => {
      task.cts.dispose();
      this.active.delete(task);
    });
  }

  dispose(): void {
    for (const task of this.active) task.cts.cancel();
  }

  private async execute(title: string, task: RunningTask, work: (ctx: TaskContext) => Promise<void>): Promise<void> {
    const cts = task.cts;
    if (cts.token.isCancellationRequested) return;
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: inertMarkup(`Atrium: ${title}`), cancellable: true }, async (progress, progressToken) => {
      const sub = progressToken.onCancellationRequested(() => cts.cancel());
      const ctx: TaskContext = {
        token: cts.token,
        report: (message) => progress.report({ message: inertMarkup(message) }),
        ask: (instructions, contexts, label, request) => this.ask(instructions, contexts, label, task, request),
        note: (noteTitle, detail) => void this.manager.current?.model.notice('info', noteTitle, detail),
      };
      try {
        await work(ctx);
      } catch (error) {
        if (error instanceof TaskCancelled || cts.token.isCancellationRequested) {
          this.log.info(`Task "${title}" cancelled`);
          return;
        }
        const message = (error as Error).message;
        this.log.error(`Task "${title}" failed: ${message}`);
        // The agent's queue is full (the agent service): the same task may go through a moment later.
        if (error instanceof AgentBusyError) return offerRetry(title, message, () => void this.run(title, work));
        void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('Atrium: {0} failed: {1}', title, message)));
      } finally {
        sub.dispose();
      }
    });
  }

  private async ask(instructions: string, contexts: CodeContext[], label: string | undefined, task: RunningTask, request?: SelectionTaskRequest): Promise<string> {
    const token = task.cts.token;
    if (token.isCancellationRequested) throw new TaskCancelled();
    const session = await this.manager.ensureStarted();
    const embedded = session.promptCapabilities.embeddedContext;
    const before = new Set(session.model.messages('agent').map((m) => m.id));
    // Replaced on an agent that cancels it itself when the newer task arrives: no Stop (it would say "Stopped").
    const cancel = token.onCancellationRequested(() => {
      if (!(task.replaced && request && session.selectionTasks?.newerCancelsRunning)) void this.manager.cancel();
    });
    let stopReason: string;
    try {
      stopReason = await this.manager.prompt(buildPromptParts(instructions, contexts, embedded), label ? displayParts(label, contexts) : undefined, request);
    } finally {
      cancel.dispose();
    }
    if (token.isCancellationRequested || stopReason === 'cancelled') throw new TaskCancelled();
    const answer = session.model
      .messages('agent')
      .filter((m) => !before.has(m.id))
      .map((m) => m.text)
      .join('\n\n');
    if (!answer.trim()) throw new Error(vscode.l10n.t('the agent gave no answer (stop reason: {0})', stopReason));
    return answer;
  }
}
