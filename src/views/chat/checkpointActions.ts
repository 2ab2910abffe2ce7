/**
 * A user message's checkpoint actions in the chat: "Restore checkpoint" (files only, conversation only, or
 * both, chosen in a quick pick; a conversation choice the agent cannot do is shown with the reason and does
 * nothing), "Edit and resend" (the same restore, both or files only, then the edited prompt is sent) and "Retry"
 * (the same restore after a modal that says it, then the same prompt again).
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../../core/visibleText';
import type { AgentSession } from '../../session/agentSession';
import { conversationFork } from '../../session/conversationFork';
import type { MessageEntity, TimelineEntity } from '../../session/sessionModel';
import { entityKey } from './chatContent';

/** Restores the workspace's files to a checkpoint; returns what could not be restored. */
export type RestoreFiles = (checkpoint: Record<string, string>) => Promise<string[]>;

export interface CheckpointHost {
  log(): vscode.LogOutputChannel;
  /** Every entity the chat shows (earlier windows' copies too: their checkpoints restore files). */
  entities(): TimelineEntity[];
  session(): AgentSession | undefined;
  busy(): boolean;
  send(text: string): void;
}

type Choice = 'files' | 'conversation' | 'both';

export async function restoreCheckpoint(host: CheckpointHost, restoreFiles: RestoreFiles | undefined, key: string, how: 'pick' | 'edit' | 'retry'): Promise<void> {
  const message = host.entities().find((e): e is MessageEntity => e.kind === 'message' && e.role === 'user' && entityKey(e) === key);
  if (!message?.checkpoint || !restoreFiles) throw new Error(vscode.l10n.t('This message has no checkpoint (it was sent before checkpoints were kept).'));
  if (host.busy()) throw new Error(vscode.l10n.t('Stop the running turn before going back to a checkpoint.'));
  const session = host.session();
  const live = session?.model.messages('user').includes(message);
  const fork = session && live ? conversationFork(session) : undefined;
  const noConversation = !live
    ? vscode.l10n.t('This message is not in the running session: only its files can go back.')
    : fork
      ? undefined
      : vscode.l10n.t('{0} cannot go back in its conversation: it offers no fork at a message (ACP session/fork copies the whole conversation).', session?.agentInfo.name ?? '');
  let text: string | undefined;
  let choice: Choice | undefined;
  if (how === 'retry') {
    const retry = vscode.l10n.t('Retry');
    const detail = fork
      ? vscode.l10n.t('Files and conversation go back to before this message, then it is sent again.')
      : vscode.l10n.t('Files go back to before this message, then it is sent again ({0})', noConversation ?? '');
    if ((await vscode.window.showWarningMessage(vscode.l10n.t('Retry this message?'), { modal: true, detail }, retry)) !== retry) return;
    text = message.text;
    choice = fork ? 'both' : 'files';
  } else if (how === 'edit') {
    // The input box is one line: the message's line breaks show as ⏎ and come back as line breaks.
    const edited = await vscode.window.showInputBox({
      title: vscode.l10n.t('Edit and resend'),
      value: message.text.replace(/\r?\n/g, ' ⏎ '),
      prompt: fork
        ? vscode.l10n.t('Files and conversation go back to before this message, then it is sent.')
        : vscode.l10n.t('Files go back to before this message, then it is sent ({0})', noConversation ?? ''),
    });
    text = edited?.replace(/ ?⏎ ?/g, '\n');
    if (text === undefined || !text.trim()) return;
    choice = fork ? 'both' : 'files';
  } else choice = await pickChoice(noConversation);
  if (!choice) return;
  if (choice !== 'files' && fork) {
    await fork.fork(message);
    host.log().info(`Checkpoint: the conversation went back to before the message ${message.id}`);
  }
  if (choice !== 'conversation') {
    const failed = await restoreFiles(message.checkpoint);
    host.log().info(`Checkpoint: files restored to before the message ${message.id}${failed.length ? `; not restored: ${failed.join('; ')}` : ''}`);
    if (failed.length) void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('Could not restore: {0}', failed.join('; '))));
  }
  if (text !== undefined) host.send(text);
}

/** The three choices; a conversation choice the agent cannot do says why and is not taken. */
async function pickChoice(noConversation: string | undefined): Promise<Choice | undefined> {
  const item = (choice: Choice, label: string, detail: string, needsConversation: boolean) =>
    needsConversation && noConversation ? { choice: undefined, label: `$(circle-slash) ${label}`, detail: noConversation } : { choice, label, detail };
  const items = [
    item('files', vscode.l10n.t('Files only'), vscode.l10n.t('The workspace files go back to before this message; the conversation stays.'), false),
    item('conversation', vscode.l10n.t('Conversation only'), vscode.l10n.t('The agent forgets this message and what followed; the files stay.'), true),
    item('both', vscode.l10n.t('Files and conversation'), vscode.l10n.t('Both go back to before this message.'), true),
  ];
  const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Restore checkpoint'), placeHolder: vscode.l10n.t('What goes back to before this message?') });
  if (picked && !picked.choice) void vscode.window.showInformationMessage(picked.detail);
  return picked?.choice;
}
