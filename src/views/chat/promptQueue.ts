/** The chat's queue of prompts waiting for the agent, bounded by `agentHost.chat.maxQueuedPrompts`. */
import * as vscode from 'vscode';
import { enqueueBounded, QUEUE_BOUNDS, queueBound } from '../../core/boundedQueue';
import type { QueuedPrompt } from '../../shared/chatProtocol';

/** Queues `item`; a full queue refuses it with the error the composer shows (it keeps its text) and keeps the queued ones as they are. */
export function queuePrompt(queue: QueuedPrompt[], item: QueuedPrompt, log: vscode.LogOutputChannel): void {
  const bound = queueBound(vscode.workspace.getConfiguration('agentHost').get('chat.maxQueuedPrompts'), QUEUE_BOUNDS.chatPrompts);
  if (enqueueBounded(queue, item, bound)) return;
  log.warn(`Chat: message refused: the queue holds ${queue.length} message(s) (agentHost.chat.maxQueuedPrompts)`);
  throw new Error(vscode.l10n.t('Not queued: {0} messages already wait (setting agentHost.chat.maxQueuedPrompts).', queue.length));
}
