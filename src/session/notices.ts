/**
 * The transcript notices Atrium itself words, as a catalog: the protocol-blind layers say WHICH notice (a key and
 * its arguments, a `Phrase`), the layer that shows it words it — the editor through `vscode.l10n.t` (one table in
 * src/views/noticeTexts.ts, the same English as here), the CLI and what is stored in English from this catalog.
 * A notice keeps its English title and detail beside the phrases, so a stored transcript reads without them.
 */
/** Each notice text in English, with `{0}`… for its arguments; the editor's bundle has the same strings as keys. */
export const NOTICE_TEXTS = {
  agentExited: 'Agent exited',
  connectionLost: 'Connection lost',
  refused: 'Refused',
  sessionResumed: 'Session resumed',
  sessionLoaded: 'Session loaded',
  newSession: 'Could not reattach: this is a NEW session',
  resumedDetail: "Session {0}: the agent keeps its context but replays no history; what is above is Atrium's copy.",
  loadedDetail: 'Session {0}: the agent replayed its history and keeps its context.',
  newSessionDetail: 'Session {0} could not be reattached ({1}); the agent does not remember it.',
  noReasonGiven: 'no reason given',
  switchedDetail: "Session {0}: the agent switched to its session file and keeps its context; what is above is Atrium's copy.",
  steeringQueued: 'Steering message queued',
  followUpQueued: 'Follow-up queued',
  compacting: 'Compacting the context…',
  compactionAborted: 'Compaction aborted',
  compactionFailed: 'Compaction failed',
  compactionSkipped: 'Compaction skipped',
  compacted: 'Context compacted',
  tokensBefore: '{0} tokens before',
  retrying: 'Retrying after an error (attempt {0}/{1}, in {2} s)',
  retrySucceeded: 'Retry succeeded (attempt {0})',
  retriesExhausted: 'Retries exhausted',
  fallingBack: 'Falling back from {0} to {1}',
  rulesTriggered: 'Rules triggered mid-stream',
  todoReminder: 'Todo reminder ({0}/{1})',
  todoCleared: 'Todo list cleared (all done)',
  extensionError: 'Extension error',
  extensionErrorIn: 'Extension error in {0}',
  turnFailed: 'The turn failed',
  stopped: 'Stopped',
  asked: '{0} asked: {1}',
  answer: 'Answer: {0}',
  noAnswer: 'No answer (cancelled)',
  serviceClosed: 'The connection to the agent service closed ({0}). What arrived of the answer stays; Atrium connects again.',
  previousCancelled: 'Previous task cancelled',
  previousCancelledDetail: 'The agent service runs one task per connection: sending the {0} cancelled the {1}.',
  partsMissing: 'Parts of the answer are missing',
  partsMissingDetail: 'The agent service never sent pieces {0} of this answer; what arrived is shown in order.',
  notRecorded: 'Session not recorded',
  continuedWith: 'Continued with {0}',
  beforeFinished: '{0} before this finished.',
  stoppedBeforeFinished: 'The agent was stopped before this finished.',
  notFinished: 'Not finished when this session ended.',
  longMessage: 'Long message',
  longKept: 'This message is longer than {0} characters: the chat keeps its first part in memory and the whole message in {1}.',
  longNotWritten: 'This message is longer than {0} characters: the chat keeps its first part in memory; writing the whole message to {1} failed ({2}).',
  exitCode: 'Agent exited with code {0}',
  exitSignal: 'Agent was killed by {0}',
  exitDisconnected: 'Agent connection closed: {0}',
  exitSpawn: 'Agent could not be started: {0}',
  exitClosedOutput: 'Agent closed its output while running and was stopped ({0})',
  exitClosedInput: 'Agent stopped reading its input while running and was stopped ({0})',
  codeN: 'code {0}',
  lastStderr: '--- last stderr ---',
  oneFileChanged: '1 file changed',
  filesChanged: '{0} files changed',
  linesChanged: '+{0} −{1}',
  mcpNotPassed: 'MCP server not passed',
  mcpTransportDetail: '{0} ({1}) not passed: this agent takes only {2} servers',
  mcpNoneTaken: '{0}: this agent takes no MCP servers from Atrium (the IDE lookups reach it as host tools)',
  sandboxNetworkBlocked: 'Blocked by the sandbox: network to {0} refused',
  sandboxWriteBlocked: 'Blocked by the sandbox: write to {0}',
} as const;

export type NoticeKey = keyof typeof NOTICE_TEXTS;

/** One notice text by key; an argument is shown as it is (agent text, names, numbers) or is a phrase itself. */
export interface Phrase {
  key: NoticeKey;
  args?: PhraseArg[];
  /** Lines under it, each shown as it is or worded itself (an exit's stderr tail under its heading). */
  lines?: PhraseArg[];
}

export type PhraseArg = string | Phrase;

/** A phrase's text, each key worded by `word` (given the arguments already worded). */
export function wordPhrase(phrase: Phrase, word: (key: NoticeKey, args: string[]) => string): string {
  const arg = (a: PhraseArg): string => (typeof a === 'string' ? a : wordPhrase(a, word));
  return [word(phrase.key, (phrase.args ?? []).map(arg)), ...(phrase.lines ?? []).map(arg)].join('\n');
}

/** `{0}`… of an English template filled in. */
export function fillTemplate(template: string, args: readonly string[]): string {
  return template.replace(/\{(\d+)\}/g, (m, i: string) => args[Number(i)] ?? m);
}

/** The phrase in English (the CLI, the log, what is stored). */
export function english(phrase: Phrase): string {
  return wordPhrase(phrase, (key, args) => fillTemplate(NOTICE_TEXTS[key], args));
}

/** Shorthand for a phrase. */
export function phrase(key: NoticeKey, ...args: PhraseArg[]): Phrase {
  return args.length ? { key, args } : { key };
}

/** What `exitPhrase` reads of an `ExitInfo` (src/core/agentProcess.ts; not imported: the page's build reads this file). */
interface ExitFacts {
  code: number | null;
  signal: string | null;
  spawnError?: string;
  closedOutput?: boolean;
  closedInput?: boolean;
  disconnected?: string;
  stderrTail: string;
}

/** How the agent went away, as `describeExit` says it (src/core/agentProcess.ts), with the stderr tail under it as the agent wrote it. */
export function exitPhrase(exit: ExitFacts): Phrase {
  const status = exit.signal ?? phrase('codeN', String(exit.code));
  const how = exit.disconnected
    ? phrase('exitDisconnected', exit.disconnected)
    : exit.spawnError
      ? phrase('exitSpawn', exit.spawnError)
      : exit.closedOutput
        ? phrase('exitClosedOutput', status)
        : exit.closedInput
          ? phrase('exitClosedInput', status)
          : exit.signal
            ? phrase('exitSignal', exit.signal)
            : phrase('exitCode', String(exit.code));
  const tail = exit.stderrTail.trim();
  return tail ? { ...how, lines: [phrase('lastStderr'), tail] } : how;
}

/** A tool call the agent's exit left unfinished: how it went, in one line. */
export function cutByExit(exit: ExitFacts): Phrase {
  return phrase('beforeFinished', exitPhrase({ ...exit, stderrTail: '' }));
}
