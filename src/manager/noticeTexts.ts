import * as vscode from 'vscode';
import type { TimelineEntity } from '../session/sessionModel';
import { type NoticeKey, type Phrase, wordPhrase } from '../session/notices';

/** The notice catalog (src/session/notices.ts) in the person's language: each English text as a literal, so `npm run l10n` finds it. */
const TEXTS: Record<NoticeKey, (args: string[]) => string> = {
  agentExited: () => vscode.l10n.t('Agent exited'),
  connectionLost: () => vscode.l10n.t('Connection lost'),
  refused: () => vscode.l10n.t('Refused'),
  sessionResumed: () => vscode.l10n.t('Session resumed'),
  sessionLoaded: () => vscode.l10n.t('Session loaded'),
  newSession: () => vscode.l10n.t('Could not reattach: this is a NEW session'),
  resumedDetail: (a) => vscode.l10n.t("Session {0}: the agent keeps its context but replays no history; what is above is Atrium's copy.", a[0]!),
  loadedDetail: (a) => vscode.l10n.t('Session {0}: the agent replayed its history and keeps its context.', a[0]!),
  newSessionDetail: (a) => vscode.l10n.t('Session {0} could not be reattached ({1}); the agent does not remember it.', a[0]!, a[1]!),
  noReasonGiven: () => vscode.l10n.t('no reason given'),
  switchedDetail: (a) => vscode.l10n.t("Session {0}: the agent switched to its session file and keeps its context; what is above is Atrium's copy.", a[0]!),
  steeringQueued: () => vscode.l10n.t('Steering message queued'),
  followUpQueued: () => vscode.l10n.t('Follow-up queued'),
  compacting: () => vscode.l10n.t('Compacting the context…'),
  compactionAborted: () => vscode.l10n.t('Compaction aborted'),
  compactionFailed: () => vscode.l10n.t('Compaction failed'),
  compactionSkipped: () => vscode.l10n.t('Compaction skipped'),
  compacted: () => vscode.l10n.t('Context compacted'),
  tokensBefore: (a) => vscode.l10n.t('{0} tokens before', a[0]!),
  retrying: (a) => vscode.l10n.t('Retrying after an error (attempt {0}/{1}, in {2} s)', a[0]!, a[1]!, a[2]!),
  retrySucceeded: (a) => vscode.l10n.t('Retry succeeded (attempt {0})', a[0]!),
  retriesExhausted: () => vscode.l10n.t('Retries exhausted'),
  fallingBack: (a) => vscode.l10n.t('Falling back from {0} to {1}', a[0]!, a[1]!),
  rulesTriggered: () => vscode.l10n.t('Rules triggered mid-stream'),
  todoReminder: (a) => vscode.l10n.t('Todo reminder ({0}/{1})', a[0]!, a[1]!),
  todoCleared: () => vscode.l10n.t('Todo list cleared (all done)'),
  extensionError: () => vscode.l10n.t('Extension error'),
  extensionErrorIn: (a) => vscode.l10n.t('Extension error in {0}', a[0]!),
  turnFailed: () => vscode.l10n.t('The turn failed'),
  stopped: () => vscode.l10n.t('Stopped'),
  asked: (a) => vscode.l10n.t('{0} asked: {1}', a[0]!, a[1]!),
  answer: (a) => vscode.l10n.t('Answer: {0}', a[0]!),
  noAnswer: () => vscode.l10n.t('No answer (cancelled)'),
  serviceClosed: (a) => vscode.l10n.t('The connection to the agent service closed ({0}). What arrived of the answer stays; Atrium connects again.', a[0]!),
  previousCancelled: () => vscode.l10n.t('Previous task cancelled'),
  previousCancelledDetail: (a) => vscode.l10n.t('The agent service runs one task per connection: sending the {0} cancelled the {1}.', a[0]!, a[1]!),
  partsMissing: () => vscode.l10n.t('Parts of the answer are missing'),
  partsMissingDetail: (a) => vscode.l10n.t('The agent service never sent pieces {0} of this answer; what arrived is shown in order.', a[0]!),
  notRecorded: () => vscode.l10n.t('Session not recorded'),
  continuedWith: (a) => vscode.l10n.t('Continued with {0}', a[0]!),
  beforeFinished: (a) => vscode.l10n.t('{0} before this finished.', a[0]!),
  stoppedBeforeFinished: () => vscode.l10n.t('The agent was stopped before this finished.'),
  notFinished: () => vscode.l10n.t('Not finished when this session ended.'),
  longMessage: () => vscode.l10n.t('Long message'),
  longKept: (a) => vscode.l10n.t('This message is longer than {0} characters: the chat keeps its first part in memory and the whole message in {1}.', a[0]!, a[1]!),
  longNotWritten: (a) => vscode.l10n.t('This message is longer than {0} characters: the chat keeps its first part in memory; writing the whole message to {1} failed ({2}).', a[0]!, a[1]!, a[2]!),
  exitCode: (a) => vscode.l10n.t('Agent exited with code {0}', a[0]!),
  exitSignal: (a) => vscode.l10n.t('Agent was killed by {0}', a[0]!),
  exitDisconnected: (a) => vscode.l10n.t('Agent connection closed: {0}', a[0]!),
  exitSpawn: (a) => vscode.l10n.t('Agent could not be started: {0}', a[0]!),
  exitClosedOutput: (a) => vscode.l10n.t('Agent closed its output while running and was stopped ({0})', a[0]!),
  exitClosedInput: (a) => vscode.l10n.t('Agent stopped reading its input while running and was stopped ({0})', a[0]!),
  codeN: (a) => vscode.l10n.t('code {0}', a[0]!),
  lastStderr: () => vscode.l10n.t('--- last stderr ---'),
  oneFileChanged: () => vscode.l10n.t('1 file changed'),
  filesChanged: (a) => vscode.l10n.t('{0} files changed', a[0]!),
  linesChanged: (a) => vscode.l10n.t('+{0} −{1}', a[0]!, a[1]!),
  mcpNotPassed: () => vscode.l10n.t('MCP server not passed'),
  mcpTransportDetail: (a) => vscode.l10n.t('{0} ({1}) not passed: this agent takes only {2} servers', a[0]!, a[1]!, a[2]!),
  mcpNoneTaken: (a) => vscode.l10n.t('{0}: this agent takes no MCP servers from Atrium (the IDE lookups reach it as host tools)', a[0]!),
  sandboxNetworkBlocked: (a) => vscode.l10n.t('Blocked by the sandbox: network to {0} refused', a[0]!),
  sandboxWriteBlocked: (a) => vscode.l10n.t('Blocked by the sandbox: write to {0}', a[0]!),
};

/** A phrase in the person's language. */
export function noticeText(phrase: Phrase): string {
  return wordPhrase(phrase, (key, args) => TEXTS[key](args));
}

/** An entity as the person reads it: a notice's catalog texts, and why a tool call was cut, in their language; agent text, and entities stored without phrases, as they are. */
export function localEntity(entity: TimelineEntity): TimelineEntity {
  if (entity.kind === 'tool_call' && entity.interruptedPhrase) return { ...entity, interrupted: noticeText(entity.interruptedPhrase) };
  if (entity.kind !== 'notice' || !entity.phrases) return entity;
  const { title, detail } = entity.phrases;
  return { ...entity, ...(title ? { title: noticeText(title) } : {}), ...(detail ? { detail: noticeText(detail) } : {}) };
}
