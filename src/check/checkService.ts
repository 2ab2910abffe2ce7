/**
 * The compatibility check of an agent service (seed 003): a WebSocket service, no process of ours, so no
 * handshake, exits or reattach — one connection through the adapter the root lends (CheckHost) and what the
 * service DID on it: took the key, answered `list_model`, streamed an `exec_chat` answer (frames counted, put
 * in order), answered an `exec_explain` with selected and visible text, cancelled a task when a second came on
 * the same connection, and — when it asked — got its IDE-service lookups answered. Every row is judged from
 * the frames on the wire and what the session shows, not from what the adapter says it did.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentConfig } from '../session/agentConfig';
import type { ContentPart } from '../session/sessionModel';
import {
  CheckTimeoutError,
  checkResults,
  checkScratch,
  result,
  SERVICE_CHECK_IDS,
  scrub,
  within,
  type CheckHost,
  type CheckResult,
  type CheckSession,
  type CompatReport,
  type TappedFrame,
} from './checkTypes';

export interface ServiceCheckOptions {
  config: AgentConfig;
  /** The key sent as X-Api-Key (the CLI reads AGENT_SERVICE_API_KEY). */
  apiKey?: string;
  /** Workspace for the selection's file; default: a scratch folder made for the run. */
  cwd?: string;
  timeoutMs: number;
  openHost(workspace: string): Promise<CheckHost>;
  log?: (line: string) => void;
}

const IDE_COMMANDS = ['get_document_symbols', 'find_def_locations', 'find_type_def_locations'];
/** The selection task's file, made in the workspace and removed after (Python: the document's examples are). */
export const SELECTION_FILE = 'check_service.py';
const SELECTION_CODE =
  'WIDTH = 8\n\n\ndef next_turn(board, player):\n    """Pass the turn."""\n    moves = [m for m in board if m.owner == player]\n    return "white" if player == "black" else "black"\n';
/** Lines of SELECTION_CODE the selection covers (0-based, inclusive). */
const SELECTED_LINES = [3, 6] as const;
/** How long late frames of a cancelled task are awaited before the one-task row is judged (ms). */
const LATE_FRAMES_MS = 500;
const NOT_RUN = 'Not run: no session could be opened (see service.connect and service.listModel).';

export async function runServiceCheck(o: ServiceCheckOptions): Promise<CompatReport> {
  const { results, set } = checkResults(o.log);
  const { scratch, workspace } = checkScratch(o.cwd);
  const file = path.join(workspace, SELECTION_FILE);
  // The file is removed after the run: one of the person's own is never overwritten.
  if (fs.existsSync(file)) {
    fs.rmSync(scratch, { recursive: true, force: true });
    throw new Error(`${file} exists: the check writes a file of that name for the selection task and removes it after; give another --cwd`);
  }
  let host: CheckHost | undefined;
  try {
    fs.writeFileSync(file, SELECTION_CODE, { flag: 'wx' });
    host = await o.openHost(workspace);
    const frames: TappedFrame[] = [];
    const start = host.start(o.config, {
      cwd: workspace,
      decidePermission: async () => ({ outcome: 'cancelled', by: 'policy' }),
      withTool: true,
      timeoutMs: o.timeoutMs,
      frames,
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
    });
    let cs: CheckSession | undefined;
    try {
      cs = await within(start, o.timeoutMs, 'connecting to the agent service');
    } catch (error) {
      void start.then((late) => late.session.shutdown()).catch(() => undefined);
      set(...startFailed(frames, error as Error));
    }
    if (cs) {
      try {
        set(...started(cs));
        set(await checkChat(cs, o.timeoutMs));
        set(await checkSelection(cs, file, o.timeoutMs));
        set(await checkOneTask(cs, o.timeoutMs));
        set(checkIde(cs.frames));
      } finally {
        await cs.session.shutdown().catch(() => undefined);
      }
    }
  } finally {
    await host?.close().catch(() => undefined);
    fs.rmSync(file, { force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const url = o.config.url ?? o.config.command;
  const checks = SERVICE_CHECK_IDS.map((id) => results.get(id) ?? result(id, 'absent', NOT_RUN));
  return {
    agent: { name: o.config.name, ...(o.config.name !== url ? { title: `${o.config.name} (${url})` } : {}) },
    protocol: 'agent-service',
    protocolVersion: null,
    checks: checks.map((c) => scrub(c, [workspace, scratch])),
  };
}

const idOf = (f: TappedFrame): string | undefined => (typeof f.msg.request_id === 'number' || typeof f.msg.request_id === 'string' ? String(f.msg.request_id) : undefined);

/** The nth request of `cmd` among `frames` and every frame answering it (arrival order). */
function exchange(frames: TappedFrame[], cmd: string, nth = 0): { request?: TappedFrame; replies: TappedFrame[] } {
  const request = frames.filter((f) => f.dir === 'out' && f.msg.cmd === cmd)[nth];
  const id = request ? idOf(request) : undefined;
  return { ...(request ? { request } : {}), replies: id === undefined ? [] : frames.filter((f) => f.dir === 'in' && f.msg.cmd === undefined && idOf(f) === id) };
}

/** A reply as the frames tell it: error, order, gaps, the text put back in order, and whether it finished. */
interface Answer {
  error?: string;
  frames: number;
  streamed: boolean;
  /** The lowest and highest stream_seq_id that came. */
  seqs: [number, number];
  /** Frames that came after a frame with a higher stream_seq_id. */
  outOfOrder: number;
  gaps: number[];
  finishSeq?: number;
  text: string;
  finished: boolean;
}

function answerOf(replies: TappedFrame[]): Answer {
  const failed = replies.find((f) => f.msg.error !== undefined && f.msg.error !== null && f.msg.error !== '');
  const seqOf = (f: TappedFrame) => (typeof f.msg.stream_seq_id === 'number' && Number.isInteger(f.msg.stream_seq_id) && f.msg.stream_seq_id >= 0 ? f.msg.stream_seq_id : undefined);
  const pieces = new Map<number, string>();
  let outOfOrder = 0;
  let highest = -1;
  let finishSeq: number | undefined;
  let plain = '';
  let finished = false;
  for (const f of replies) {
    if (f === failed) continue;
    const msg = typeof f.msg.msg === 'string' ? f.msg.msg : '';
    const seq = seqOf(f);
    if (seq === undefined) {
      plain += msg;
      if (f.msg.stream_finish !== false) finished = true;
      continue;
    }
    if (seq < highest) outOfOrder++;
    highest = Math.max(highest, seq);
    if (!pieces.has(seq)) pieces.set(seq, msg);
    if (f.msg.stream_finish === true) {
      finishSeq = seq;
      finished = true;
    }
  }
  const seqs = [...pieces.keys()].sort((a, b) => a - b);
  const end = finishSeq ?? seqs.at(-1) ?? -1;
  const gaps: number[] = [];
  for (let seq = 0; seq <= end; seq++) if (!pieces.has(seq)) gaps.push(seq);
  // A stream counted from 1 is not missing its 0 (the adapter reads it so too).
  const counted = gaps.length === 1 && gaps[0] === 0 ? [] : gaps;
  return {
    ...(failed ? { error: typeof failed.msg.error === 'string' ? failed.msg.error : JSON.stringify(failed.msg.error) } : {}),
    frames: replies.length,
    streamed: pieces.size > 0,
    seqs: [seqs[0] ?? -1, seqs.at(-1) ?? -1],
    outOfOrder,
    gaps: counted,
    ...(finishSeq !== undefined ? { finishSeq } : {}),
    text: plain + seqs.map((s) => pieces.get(s)).join(''),
    finished,
  };
}

/** The start failed: before any frame came back it is the connection (a refused key, most often), after it list_model. */
function startFailed(frames: TappedFrame[], error: Error): CheckResult[] {
  const listing = exchange(frames, 'list_model');
  const proof = [...(listing.request ? [listing.request] : []), ...frames.filter((f) => f.dir === 'in')];
  if (frames.some((f) => f.dir === 'in')) {
    return [
      result('service.connect', 'verified', 'The WebSocket opened with the X-Api-Key header and the service answered on it: the key was taken.', proof),
      result('service.listModel', 'failed', `list_model: ${error.message}.`, proof),
    ];
  }
  // The adapter names a refused key itself ("the agent service refused the API key (…)"), closed or HTTP 401.
  const text = /refused the API key/i.test(error.message)
    ? `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`
    : error instanceof CheckTimeoutError
      ? `No connection: ${error.message}.`
      : `Could not connect: ${error.message}.`;
  return [result('service.connect', 'failed', text, proof)];
}

function started(cs: CheckSession): CheckResult[] {
  const listing = exchange(cs.frames, 'list_model');
  const proof = [...(listing.request ? [listing.request] : []), ...listing.replies];
  const models = cs.session.model.models?.availableModels.map((m) => m.modelId) ?? [];
  return [
    result(
      'service.connect',
      'verified',
      'The WebSocket opened with the X-Api-Key header and the service answered on it (a wrong key is answered by closing the connection): the key was taken.',
      proof,
    ),
    result('service.listModel', 'verified', `list_model answered ${models.length} model${models.length === 1 ? '' : 's'}: ${models.join(', ')}.`, proof),
  ];
}

interface TaskOutcome {
  stopReason?: string;
  error?: string;
}

/** A task with the step timeout; one that does not end is stopped (Stop: a fresh connection). */
async function settle(cs: CheckSession, task: Promise<{ stopReason: string }>, timeoutMs: number, what: string): Promise<TaskOutcome> {
  try {
    return { stopReason: (await within(task, timeoutMs, what)).stopReason };
  } catch (error) {
    if (error instanceof CheckTimeoutError) await cs.session.cancel().catch(() => undefined);
    return { error: (error as Error).message };
  }
}

const agentText = (cs: CheckSession, from: number) =>
  cs.session.model
    .messages('agent')
    .slice(from)
    .map((m) => m.text)
    .join('');

/** What is wrong with a task's answer, or undefined when it came whole, in order, as the session shows it. */
function answerProblem(cmd: string, outcome: TaskOutcome, answer: Answer, shown: string): string | undefined {
  if (answer.error !== undefined) return `${cmd} was answered with an error: ${answer.error}`;
  if (outcome.error !== undefined) return `${cmd} failed: ${outcome.error}`;
  if (outcome.stopReason !== 'end_turn') return `${cmd} ended ${outcome.stopReason ?? 'without a reason'}`;
  if (answer.gaps.length) return `${cmd} streamed ${answer.frames} frames, but stream_seq_id ${answer.gaps.join(', ')} never came`;
  if (!answer.text.trim()) return `${cmd} was answered with no text (${answer.frames} frame${answer.frames === 1 ? '' : 's'})`;
  if (shown !== answer.text) return `${cmd}'s frames put in stream_seq_id order give ${answer.text.length} characters, but the session shows ${shown.length} different ones`;
  return undefined;
}

/** How the frames came: "in 12 frames (stream_seq_id 0–11, stream_finish on 11), in order". */
function framing(answer: Answer): string {
  if (!answer.streamed) return 'in one frame without stream_seq_id (the service did not stream, though the request said stream: true)';
  const finish = answer.finishSeq !== undefined ? `stream_finish on ${answer.finishSeq}` : 'no stream_finish: true (the answer ended at the last frame)';
  const order = answer.outOfOrder ? `${answer.outOfOrder} frame${answer.outOfOrder === 1 ? '' : 's'} came out of order and ${answer.outOfOrder === 1 ? 'was' : 'were'} put back in order` : 'in order';
  return `in ${answer.frames} frames (stream_seq_id ${answer.seqs[0]}–${answer.seqs[1]}, ${finish}), ${order}`;
}

/** service.chat: a message as `exec_chat`, its streamed answer reassembled and shown whole. */
async function checkChat(cs: CheckSession, timeoutMs: number): Promise<CheckResult> {
  const from = cs.frames.length;
  const shownFrom = cs.session.model.messages('agent').length;
  const outcome = await settle(cs, cs.session.prompt([{ type: 'text', text: 'Say hello in one short sentence. (Atrium compatibility check)' }]), timeoutMs, 'exec_chat');
  const { request, replies } = exchange(cs.frames.slice(from), 'exec_chat');
  const proof = [...(request ? [request] : []), ...replies];
  if (!request) return result('service.chat', 'failed', `No exec_chat was sent: ${outcome.error ?? outcome.stopReason}.`);
  const answer = answerOf(replies);
  const problem = answerProblem('exec_chat', outcome, answer, agentText(cs, shownFrom));
  if (problem) return result('service.chat', 'failed', `${problem}.`, proof);
  return result('service.chat', 'verified', `exec_chat was answered ${framing(answer)}; the session shows the ${answer.text.length} characters they make, and the turn ended end_turn.`, proof);
}

/** service.selection: `exec_explain` with the selection and the visible code of a file in the workspace. */
async function checkSelection(cs: CheckSession, file: string, timeoutMs: number): Promise<CheckResult> {
  const tasks = cs.session.selectionTasks;
  if (!tasks) return result('service.selection', 'failed', 'The session offers no selection tasks (exec_explain …).');
  const lines = SELECTION_CODE.split('\n');
  const [first, lastLine] = SELECTED_LINES;
  const selected = lines.slice(first, lastLine + 1).join('\n');
  const visibleEnd = lines.length - 1;
  const from = cs.frames.length;
  const shownFrom = cs.session.model.messages('agent').length;
  const display: ContentPart[] = [{ type: 'text', text: 'Explain the selection (Atrium compatibility check)' }];
  const request = {
    task: 'explain' as const,
    language: 'en' as const,
    selected: { filepath: file, range: { start: { line: first, character: 0 }, end: { line: lastLine, character: lines[lastLine]!.length } }, text: selected },
    visible: { filepath: file, range: { start: { line: 0, character: 0 }, end: { line: visibleEnd, character: lines[visibleEnd]!.length } }, text: SELECTION_CODE },
  };
  const outcome = await settle(cs, tasks.run(request, display), timeoutMs, 'exec_explain');
  const sent = exchange(cs.frames.slice(from), 'exec_explain');
  const proof = [...(sent.request ? [sent.request] : []), ...sent.replies];
  if (!sent.request) return result('service.selection', 'failed', `No exec_explain was sent: ${outcome.error ?? outcome.stopReason}.`);
  const answer = answerOf(sent.replies);
  const problem = answerProblem('exec_explain', outcome, answer, agentText(cs, shownFrom));
  if (problem) return result('service.selection', 'failed', `${problem}.`, proof);
  return result(
    'service.selection',
    'verified',
    `exec_explain with selected_text (lines ${first + 1}–${lastLine + 1} of ${SELECTION_FILE}) and visible_text (the whole file) was answered ${framing(answer)}: ${answer.text.length} characters.`,
    proof,
  );
}

/** Resolves once `frames` holds an outgoing `cmd` past `from` (the task is on the wire). */
async function sent(frames: TappedFrame[], from: number, cmd: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!frames.slice(from).some((f) => f.dir === 'out' && f.msg.cmd === cmd)) {
    if (Date.now() > until) throw new CheckTimeoutError(`sending ${cmd}`, Math.round(timeoutMs / 1000));
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * service.oneTask: a second task sent on the connection as soon as the first is on the wire. Verified when the
 * service ended the first — `{error: "cancelled"}`, or no further frame of it — and answered the second; not
 * observed when the first was already answered whole before anything of the second; failed when both ran.
 */
async function checkOneTask(cs: CheckSession, timeoutMs: number): Promise<CheckResult> {
  const from = cs.frames.length;
  const first = settle(cs, cs.session.prompt([{ type: 'text', text: 'First task: count from one to twenty. (Atrium compatibility check)' }]), timeoutMs, 'the first task');
  try {
    await sent(cs.frames, from, 'exec_chat', timeoutMs);
  } catch (error) {
    return result('service.oneTask', 'failed', `The first task was not sent: ${(await first).error ?? (error as Error).message}.`);
  }
  const second = await settle(cs, cs.session.prompt([{ type: 'text', text: 'Second task: say goodbye. (Atrium compatibility check)' }]), timeoutMs, 'the second task');
  const firstOutcome = await first;
  await new Promise((r) => setTimeout(r, LATE_FRAMES_MS));
  const frames = cs.frames.slice(from);
  const one = exchange(frames, 'exec_chat', 0);
  const two = exchange(frames, 'exec_chat', 1);
  const proof = [...(one.request ? [one.request] : []), ...one.replies.slice(-2), ...(two.request ? [two.request] : []), ...two.replies.slice(-1)];
  const secondAnswer = answerOf(two.replies);
  if (!two.request || second.stopReason !== 'end_turn' || secondAnswer.error !== undefined || !secondAnswer.finished)
    return result('service.oneTask', 'failed', `The second task was not answered: ${secondAnswer.error ?? second.error ?? second.stopReason ?? 'no answer'}.`, proof);
  const firstAnswer = answerOf(one.replies);
  const ended = `the first turn ended ${firstOutcome.stopReason ?? firstOutcome.error}`;
  if (firstAnswer.error !== undefined && /^cancel+ed$/i.test(firstAnswer.error.trim())) {
    const after = one.replies.length - 1;
    return result(
      'service.oneTask',
      'verified',
      `The second task cancelled the first: the service answered the first {error: "${firstAnswer.error}"}${after ? ` after ${after} frame${after === 1 ? '' : 's'} of it` : ''}, ${ended}, and the second was answered.`,
      proof,
    );
  }
  if (firstAnswer.error !== undefined) return result('service.oneTask', 'failed', `The first task ended with an error other than "cancelled": ${firstAnswer.error}.`, proof);
  const firstOfSecond = frames.indexOf(two.replies[0]!);
  const lastOfFirst = one.replies.length ? frames.indexOf(one.replies.at(-1)!) : -1;
  if (lastOfFirst > firstOfSecond)
    return result('service.oneTask', 'failed', 'The service ran both tasks: frames of the first came after the second had begun, and the first was never cancelled.', proof);
  if (firstAnswer.finished) return result('service.oneTask', 'absent', 'Not observed: the service answered the first task whole before it took the second, so there was nothing to cancel.', proof);
  return result(
    'service.oneTask',
    'verified',
    `The second task ended the first: no further frame of the first came (the service sent no "cancelled" for it), ${ended}, and the second was answered.`,
    proof,
  );
}

/** service.ide: every IDE-service request the service made during the tasks got an answer frame. */
function checkIde(frames: TappedFrame[]): CheckResult {
  const asks = frames.filter((f) => f.dir === 'in' && typeof f.msg.cmd === 'string' && IDE_COMMANDS.includes(f.msg.cmd.replace(/^\//, '')));
  if (!asks.length) return result('service.ide', 'absent', `Not asked: the service made no IDE-service request (${IDE_COMMANDS.join(', ')}) during the tasks.`);
  const answers = asks.map((ask) => frames.find((f) => f.dir === 'out' && f.msg.cmd === undefined && idOf(f) === idOf(ask) && ('result' in f.msg || 'error' in f.msg)));
  const proof = asks.flatMap((ask, i) => [ask, ...(answers[i] ? [answers[i]] : [])]);
  const names = [...new Set(asks.map((a) => String(a.msg.cmd)))].join(', ');
  const missing = asks.filter((_, i) => !answers[i]);
  if (missing.length) return result('service.ide', 'failed', `The service asked ${asks.length} IDE lookup${asks.length === 1 ? '' : 's'} (${names}); ${missing.length} got no answer.`, proof);
  const errors = answers.filter((a) => a && 'error' in a.msg);
  const results = asks.length - errors.length;
  const how = [
    ...(results ? [`${results} with a result`] : []),
    ...(errors.length ? [`${errors.length} with an error (${[...new Set(errors.map((e) => String(e!.msg.error)))].join('; ')})`] : []),
  ].join(', ');
  return result('service.ide', 'verified', `The service asked ${asks.length} IDE lookup${asks.length === 1 ? '' : 's'} (${names}) during the tasks; all were answered, ${how}.`, proof);
}
