/**
 * The test agent service's options, the records it keeps for tests, and its helpers without sockets: the IDE
 * calls' notes, streaming pieces and the TLS certificate (agentServiceServer.ts is the server).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ExecCommand, Range, Request, TextContext } from './agentServiceReplies';

export type IdeCommand = 'get_document_symbols' | 'find_def_locations' | 'find_type_def_locations';
export interface IdeCall {
  cmd: IdeCommand;
  abspath: string;
  line?: number;
  character?: number;
}
export type IdeCallSpec = IdeCall[] | ((req: Request) => IdeCall[]);
/** How a wrong key is turned away: close 1008 (or authCloseCode/Reason), a close with no code, a TCP reset, or HTTP 401 before the upgrade. */
export type AuthFailure = 'close' | 'plain-close' | 'terminate' | 'http-401';

export interface AgentServiceServerOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** A loopback address only; default 127.0.0.1. */
  host?: string;
  /** Serve wss with a self-signed certificate made at start (see `certificate`). */
  tls?: boolean;
  /** Default: keys starting with "simpletest2025_" (the document's test key). */
  isValidKey?: (key: string) => boolean;
  authFailure?: AuthFailure;
  /** For authFailure "close": default 1008 and "invalid api key". */
  authCloseCode?: number;
  authCloseReason?: string;
  /** Open sockets per key; default 5. */
  maxConnectionsPerKey?: number;
  /** list_model's answer; default the document's two models. */
  models?: string[];
  /** Pieces of a streamed answer; default 4 (fewer when the text is shorter). */
  chunks?: number;
  /** Pause between two frames of an answer; default 0. */
  frameDelayMs?: number;
  /** Send a streamed answer's frames with neighbours swapped (1,0,3,2,…: the finish frame can come before others). */
  shuffle?: boolean;
  /** Leave out the frame with this stream_seq_id (a gap). */
  dropSeq?: number;
  /** Terminate the socket after sending this many frames of an answer. */
  dropAfterFrames?: number;
  /** Honour `stream: true`; false answers in one frame always (the document's "目前未支持"). Default true. */
  honourStream?: boolean;
  /** A one-frame answer carries stream_seq_id 0 and stream_finish true. Default false. */
  singleFrameStreamFields?: boolean;
  /** Per command: the answer text, or a function of the request giving it. */
  answers?: Partial<Record<ExecCommand, string | ((req: Request) => string | Promise<string>)>>;
  /** Tasks worked at once; default 1. */
  workers?: number;
  /** Time a task takes before its first frame; default 0. */
  taskMs?: number;
  /** Tasks that may wait; default 10. */
  maxQueue?: number;
  /** Per command: IDE calls made (in order) before answering. `defaultIdeCalls` has a set. */
  ideCalls?: Partial<Record<ExecCommand, IdeCallSpec>>;
  /** Wait for an IDE reply; default 10 000 ms, then the task is answered anyway. */
  ideTimeoutMs?: number;
  /** unittest answers stay English with language "zh" (the document: "目前仅支持英文回复"). Default true. */
  unittestEnglishOnly?: boolean;
  /** One line per connection, rejection and task (the standalone runner's --verbose). */
  log?: (line: string) => void;
}

export interface ReceivedFrame {
  connection: number;
  at: number;
  raw: string;
  /** The parsed JSON, or undefined when it was not JSON. */
  frame: unknown;
}
export interface SentFrame {
  connection: number;
  at: number;
  frame: Record<string, unknown>;
}
export interface ConnectionRecord {
  id: number;
  apiKey: string | undefined;
  path: string;
  state: 'open' | 'closed' | 'rejected-key' | 'rejected-limit';
}
export interface TaskRecord {
  connection: number;
  requestId: unknown;
  cmd: ExecCommand;
  state: 'queued' | 'running' | 'done' | 'cancelled' | 'rejected' | 'aborted';
  queuedAt: number;
  startedAt?: number;
  endedAt?: number;
}
export interface IdeReplyRecord {
  connection: number;
  /** The request_id of the task that made the call. */
  taskRequestId: unknown;
  call: Record<string, unknown>;
  /** Undefined while pending and after a time-out. */
  reply?: { result: unknown } | { error: string };
  timedOut: boolean;
  ms?: number;
}

/** IDE calls for the standalone runner's --ide: symbols and a type definition for unittest_recommend, a definition for explain. */
export const defaultIdeCalls: Partial<Record<ExecCommand, IdeCallSpec>> = {
  exec_unittest_recommend: (req) => {
    const at = (req.func_location as Range).start;
    const abspath = req.filepath as string;
    return [
      { cmd: 'get_document_symbols', abspath },
      { cmd: 'find_type_def_locations', abspath, ...at },
    ];
  },
  exec_explain: (req) => {
    const sel = req.selected_text as TextContext;
    return [{ cmd: 'find_def_locations', abspath: sel.filepath, ...sel.range.start }];
  },
};

const IDE_NOUNS: Record<IdeCommand, string> = { get_document_symbols: 'symbol', find_def_locations: 'definition', find_type_def_locations: 'type definition' };

/** "5 symbols", "1 type definition", "get_document_symbols failed: no file", "find_def_locations timed out after 100 ms". */
export function ideNote(cmd: IdeCommand, record: IdeReplyRecord, timeoutMs: number): string {
  if (record.timedOut) return `${cmd} timed out after ${timeoutMs} ms`;
  if (!record.reply) return `${cmd} got no reply`;
  if ('error' in record.reply) return `${cmd} failed: ${record.reply.error}`;
  const n = Array.isArray(record.reply.result) ? record.reply.result.length : 0;
  return `${n} ${IDE_NOUNS[cmd]}${n === 1 ? '' : 's'}`;
}

/** `text` in up to `n` pieces of (nearly) equal length, split between code points; at least one piece. */
export function pieces(text: string, n: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out.length > 0 ? out : [''];
}

/** A self-signed certificate for 127.0.0.1, ::1 and localhost, made with openssl in a temporary folder. */
export function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-service-tls-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost'];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '2', ...subject], { stdio: 'pipe' });
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
