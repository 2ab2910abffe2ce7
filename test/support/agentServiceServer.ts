/**
 * A test server for the agent service, written from its protocol document (issue 26; docs/agent-service.md,
 * "The test server"), for the adapter's tests, the benchmark and runs of the CLI. Readings of the document:
 * - Listens on a loopback address only (127.0.0.1 unless `host` is "::1" or "localhost"), any path (the document's is /ws).
 * - A wrong or missing X-Api-Key: "agent主动断开连接" — the upgrade is accepted and the socket closed at once with
 *   1008 "invalid api key"; `authFailure` picks a plain close (no code), a TCP reset, or an HTTP 401 instead.
 * - "同一APIkey同时能建立5个链接": the 6th open socket of a key is accepted and closed with 1008 "too many connections".
 * - request_id: a number in the document; a string is accepted too and every reply echoes the value as received.
 *   A frame that is not JSON or has no request_id gets `{request_id: null, error}`.
 * - A one-frame answer (no `stream: true`) is `{request_id, msg}` without stream fields (they are "目前未支持");
 *   `singleFrameStreamFields` adds `stream_seq_id: 0, stream_finish: true`. A streamed answer is deltas, seq 0…n-1,
 *   every frame with stream_finish (false, the last true).
 * - The task pool: one FIFO queue for all connections, `workers` at a time; a new task is rejected with
 *   {error: "task queue is full, try again later"} when `maxQueue` tasks of other connections already wait.
 *   A connection's new valid exec_* task cancels its previous one (queued or running: {request_id: old, error:
 *   "cancelled"}, no frame of it after that); a rejected or invalid request cancels nothing. There is no cancel
 *   command: closing the socket drops the connection's task silently.
 * - The IDE service (§3 gives no frame shape): the server sends `{cmd, request_id: "ide-N", abspath[, line,
 *   character]}` with the request's filepath as abspath; the plugin answers `{request_id, result}` or `{request_id, error}`.
 */
import { X509Certificate } from 'node:crypto';
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { AgentServiceServerOptions, ConnectionRecord, IdeCall, IdeReplyRecord, ReceivedFrame, SentFrame, TaskRecord } from './agentServiceOptions';
import { ideNote, pieces, selfSigned } from './agentServiceOptions';
import { DEFAULT_MODELS, defaultAnswer, EXEC_COMMANDS, type ExecCommand, type Request, validate } from './agentServiceReplies';

export * from './agentServiceOptions';
export type { ExecCommand, Request } from './agentServiceReplies';

export const QUEUE_FULL = 'task queue is full, try again later';
const LOOPBACK = ['127.0.0.1', '::1', 'localhost'];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Connection {
  record: ConnectionRecord;
  ws: WebSocket;
  task: Task | undefined;
}
interface Task {
  record: TaskRecord;
  conn: Connection;
  req: Request;
  abort: AbortController;
}
interface PendingIde {
  record: IdeReplyRecord;
  done: () => void;
}

export class AgentServiceServer extends EventEmitter {
  readonly received: ReceivedFrame[] = [];
  readonly sent: SentFrame[] = [];
  readonly connectionLog: ConnectionRecord[] = [];
  readonly tasks: TaskRecord[] = [];
  readonly ideReplies: IdeReplyRecord[] = [];
  /** Set with `tls`: the certificate to trust and its SHA-256 fingerprint ("AB:CD:…"). */
  certificate: { pem: string; fingerprint256: string } | undefined;
  url = '';
  port = 0;

  private readonly http: http.Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly open = new Set<Connection>();
  private readonly queue: Task[] = [];
  private readonly pendingIde = new Map<string, PendingIde>();
  private running = 0;
  private nextConnection = 0;
  private nextIde = 0;
  private closing = false;

  /** Starts a server listening; `options` stays live (a test may change it between requests). */
  static async start(options: AgentServiceServerOptions = {}): Promise<AgentServiceServer> {
    const server = new AgentServiceServer(options);
    await server.listen();
    return server;
  }

  private constructor(readonly options: AgentServiceServerOptions) {
    super();
    // Every waitUntil listens for changes; tests may hold many at once.
    this.setMaxListeners(0);
    const host = options.host ?? '127.0.0.1';
    if (!LOOPBACK.includes(host)) throw new Error(`the test agent service listens on a loopback address only, not ${host}`);
    if (options.tls) {
      const { key, cert } = selfSigned();
      this.certificate = { pem: cert, fingerprint256: new X509Certificate(cert).fingerprint256 };
      this.http = https.createServer({ key, cert });
    } else {
      this.http = http.createServer();
    }
    this.http.on('request', (_req, res) => res.writeHead(426, { 'content-type': 'text/plain' }).end('the agent service speaks WebSocket\n'));
    this.http.on('upgrade', (req, socket, head) => {
      // Every upgrade's headers, for tests of what a client sends besides the key.
      this.emit('upgrade-headers', req.headers);
      const header = req.headers['x-api-key'];
      const apiKey = Array.isArray(header) ? header[0] : header;
      const valid = apiKey !== undefined && (options.isValidKey ?? ((k) => k.startsWith('simpletest2025_')))(apiKey);
      if (!valid && options.authFailure === 'http-401') {
        this.connectionLog.push({ id: ++this.nextConnection, apiKey, path: req.url ?? '/', state: 'rejected-key' });
        this.logLine(`connection ${this.nextConnection}: invalid api key, HTTP 401`);
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 16\r\nConnection: close\r\n\r\ninvalid api key\n');
        this.changed();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, apiKey, valid, req.url ?? '/'));
    });
  }

  private async listen(): Promise<void> {
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.options.port ?? 0, host, () => resolve());
    });
    this.port = (this.http.address() as AddressInfo).port;
    this.url = `${this.options.tls ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${this.port}/ws`;
  }

  /** Open sockets that passed the key and connection checks. */
  connections(): number {
    return this.open.size;
  }

  /** Resolves with `check`'s first truthy value, checked now and after every frame, connection and task change. */
  waitUntil<T>(check: () => T | undefined | false | null, what: string, timeoutMs = 5000): Promise<T> {
    return new Promise((resolve, reject) => {
      const probe = () => {
        let value: T | undefined | false | null;
        try {
          value = check();
        } catch (error) {
          finish();
          reject(error);
          return;
        }
        if (!value) return;
        finish();
        resolve(value);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`agent service test server: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const onClosed = () => {
        finish();
        reject(new Error(`agent service test server: closed while waiting for ${what}`));
      };
      const finish = () => {
        clearTimeout(timer);
        this.off('changed', probe);
        this.off('closed', onClosed);
      };
      this.on('changed', probe);
      this.on('closed', onClosed);
      probe();
    });
  }

  /** The nth (1-based) task of `cmd` (any when undefined) that has started. */
  taskStarted(cmd?: ExecCommand, nth = 1, timeoutMs?: number): Promise<TaskRecord> {
    return this.waitUntil(() => this.tasks.filter((t) => t.startedAt !== undefined && (cmd === undefined || t.cmd === cmd))[nth - 1], `task ${nth} of ${cmd ?? 'any cmd'} to start`, timeoutMs);
  }

  /** Resolves once `n` frames in all have been received. */
  receivedCount(n: number, timeoutMs?: number): Promise<number> {
    return this.waitUntil(() => this.received.length >= n && this.received.length, `${n} frames received`, timeoutMs);
  }

  /** Terminates every socket now (no close frame). */
  dropAll(): void {
    for (const ws of this.wss.clients) ws.terminate();
  }

  /** Ends every task, IDE wait and socket and stops listening; nothing is left holding the event loop. */
  async close(): Promise<void> {
    this.closing = true;
    this.emit('closed');
    this.dropAll();
    // ws calls back once every socket has closed, and so every task has ended (its connection's close ends it).
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private logLine(line: string): void {
    this.options.log?.(line);
  }

  private changed(): void {
    this.emit('changed');
  }

  private accept(ws: WebSocket, apiKey: string | undefined, valid: boolean, urlPath: string): void {
    const record: ConnectionRecord = { id: ++this.nextConnection, apiKey, path: urlPath, state: 'open' };
    this.connectionLog.push(record);
    if (this.closing) {
      record.state = 'closed';
      ws.terminate();
    } else if (!valid) {
      record.state = 'rejected-key';
      this.logLine(`connection ${record.id}: invalid api key (${this.options.authFailure ?? 'close'})`);
      if (this.options.authFailure === 'terminate') ws.terminate();
      else if (this.options.authFailure === 'plain-close') ws.close();
      else ws.close(this.options.authCloseCode ?? 1008, this.options.authCloseReason ?? 'invalid api key');
    } else if ([...this.open].filter((c) => c.record.apiKey === apiKey).length >= (this.options.maxConnectionsPerKey ?? 5)) {
      record.state = 'rejected-limit';
      this.logLine(`connection ${record.id}: too many connections for the key`);
      ws.close(1008, 'too many connections');
    } else {
      this.register(ws, record);
    }
    this.changed();
  }

  private register(ws: WebSocket, record: ConnectionRecord): void {
    const conn: Connection = { record, ws, task: undefined };
    this.open.add(conn);
    this.logLine(`connection ${record.id}: open (${record.path})`);
    ws.on('message', (data: RawData) => this.onMessage(conn, (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8')));
    ws.on('close', () => {
      this.open.delete(conn);
      record.state = 'closed';
      this.endTask(conn, 'aborted', false);
      this.logLine(`connection ${record.id}: closed`);
      this.changed();
    });
  }

  private send(conn: Connection, frame: Record<string, unknown>): void {
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    conn.ws.send(JSON.stringify(frame));
    this.sent.push({ connection: conn.record.id, at: Date.now(), frame });
    this.changed();
  }

  private onMessage(conn: Connection, raw: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      frame = undefined;
    }
    this.received.push({ connection: conn.record.id, at: Date.now(), raw, frame });
    this.changed();
    if (isObject(frame) && frame.cmd === undefined && typeof frame.request_id === 'string' && frame.request_id.startsWith('ide-')) this.onIdeReply(frame.request_id, frame);
    else this.handle(conn, frame);
  }

  /** A request: answered at once (list_model, errors) or queued as a task. */
  private handle(conn: Connection, frame: unknown): void {
    const models = this.options.models ?? DEFAULT_MODELS;
    if (!isObject(frame)) {
      this.send(conn, { request_id: null, error: frame === undefined ? 'invalid JSON' : 'a request must be a JSON object' });
    } else if (typeof frame.request_id !== 'number' && typeof frame.request_id !== 'string') {
      this.send(conn, { request_id: frame.request_id ?? null, error: 'missing field "request_id"' });
    } else if (frame.cmd === 'list_model') {
      this.send(conn, { request_id: frame.request_id, models });
    } else if (!EXEC_COMMANDS.includes(frame.cmd as ExecCommand)) {
      this.send(conn, { request_id: frame.request_id, error: frame.cmd === undefined ? 'missing field "cmd"' : `unknown cmd "${String(frame.cmd)}"` });
    } else {
      const problem = validate(frame.cmd as ExecCommand, frame, models);
      if (problem) this.send(conn, { request_id: frame.request_id, error: problem });
      else this.submit(conn, frame.cmd as ExecCommand, frame);
    }
  }

  private submit(conn: Connection, cmd: ExecCommand, req: Request): void {
    const record: TaskRecord = { connection: conn.record.id, requestId: req.request_id, cmd, state: 'queued', queuedAt: Date.now() };
    this.tasks.push(record);
    const waiting = this.queue.filter((t) => t.conn !== conn).length;
    if (waiting >= (this.options.maxQueue ?? 10)) {
      record.state = 'rejected';
      record.endedAt = Date.now();
      this.logLine(`connection ${conn.record.id}: ${cmd} ${String(record.requestId)} rejected, queue full`);
      this.send(conn, { request_id: record.requestId, error: QUEUE_FULL });
      return;
    }
    this.endTask(conn, 'cancelled', true);
    const task: Task = { record, conn, req, abort: new AbortController() };
    conn.task = task;
    this.queue.push(task);
    this.changed();
    this.pump();
  }

  /** Ends the connection's task (queued or running), telling the plugin when it is a cancellation. */
  private endTask(conn: Connection, state: 'cancelled' | 'aborted', tell: boolean): void {
    const task = conn.task;
    if (!task) return;
    conn.task = undefined;
    const queued = this.queue.indexOf(task);
    if (queued >= 0) this.queue.splice(queued, 1);
    task.abort.abort();
    task.record.state = state;
    task.record.endedAt = Date.now();
    this.logLine(`connection ${conn.record.id}: ${task.record.cmd} ${String(task.record.requestId)} ${state}`);
    if (tell) this.send(conn, { request_id: task.record.requestId, error: 'cancelled' });
    this.changed();
  }

  private pump(): void {
    while (!this.closing && this.running < (this.options.workers ?? 1) && this.queue.length > 0) {
      const task = this.queue.shift() as Task;
      this.running++;
      void this.run(task).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async run(task: Task): Promise<void> {
    const { record, conn, req } = task;
    const signal = task.abort.signal;
    record.state = 'running';
    record.startedAt = Date.now();
    this.logLine(`connection ${conn.record.id}: ${record.cmd} ${String(record.requestId)} started`);
    this.changed();
    const spec = this.options.ideCalls?.[record.cmd];
    const notes: string[] = [];
    for (const call of typeof spec === 'function' ? spec(req) : (spec ?? [])) {
      if (signal.aborted) return;
      notes.push(await this.ideCall(task, call));
    }
    if (!(await this.sleep(this.options.taskMs ?? 0, signal))) return;
    const override = this.options.answers?.[record.cmd];
    let answer: string | Error;
    try {
      answer = typeof override === 'function' ? await override(req) : (override ?? defaultAnswer(record.cmd, req, this.options.unittestEnglishOnly ?? true));
    } catch (error) {
      answer = error as Error;
    }
    if (signal.aborted) return;
    // An answers function that throws stands for the model failing: the task ends with its message as the error.
    if (answer instanceof Error) this.send(conn, { request_id: record.requestId, error: answer.message });
    else await this.answer(task, notes.length > 0 ? `${answer}\n\nIDE: ${notes.join(', ')}` : answer);
    if (signal.aborted) return;
    conn.task = undefined;
    record.state = 'done';
    record.endedAt = Date.now();
    this.changed();
  }

  /** The answer's frames, with the options' delay, reordering, gap and mid-answer drop. */
  private async answer(task: Task, text: string): Promise<void> {
    const requestId = task.record.requestId;
    const o = this.options;
    let frames: Record<string, unknown>[];
    if (task.req.stream === true && (o.honourStream ?? true)) {
      frames = pieces(text, o.chunks ?? 4).map((msg, i, all) => ({ request_id: requestId, msg, stream_seq_id: i, stream_finish: i === all.length - 1 }));
      if (o.dropSeq !== undefined) frames = frames.filter((f) => f.stream_seq_id !== o.dropSeq);
      if (o.shuffle) frames = frames.map((_, i) => frames[i % 2 === 0 ? Math.min(i + 1, frames.length - 1) : i - 1] as Record<string, unknown>);
    } else {
      frames = [{ request_id: requestId, msg: text, ...(o.singleFrameStreamFields ? { stream_seq_id: 0, stream_finish: true } : {}) }];
    }
    for (const [n, frame] of frames.entries()) {
      if (n > 0 && !(await this.sleep(o.frameDelayMs ?? 0, task.abort.signal))) return;
      if (task.abort.signal.aborted) return;
      if (o.dropAfterFrames !== undefined && n >= o.dropAfterFrames) {
        this.logLine(`connection ${task.conn.record.id}: dropped after ${n} frames`);
        this.endTask(task.conn, 'aborted', false);
        task.conn.ws.terminate();
        return;
      }
      this.send(task.conn, frame);
    }
  }

  /** One IDE call through the plugin; resolves with the note for the answer ("5 symbols", "… timed out …"). */
  private ideCall(task: Task, call: IdeCall): Promise<string> {
    const requestId = `ide-${++this.nextIde}`;
    const frame: Record<string, unknown> = { cmd: call.cmd, request_id: requestId, abspath: call.abspath };
    if (call.cmd !== 'get_document_symbols') Object.assign(frame, { line: call.line ?? 0, character: call.character ?? 0 });
    const record: IdeReplyRecord = { connection: task.conn.record.id, taskRequestId: task.record.requestId, call: frame, timedOut: false };
    this.ideReplies.push(record);
    const timeoutMs = this.options.ideTimeoutMs ?? 10_000;
    return new Promise((resolve) => {
      const sentAt = Date.now();
      const timer = setTimeout(() => {
        record.timedOut = true;
        done();
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.pendingIde.delete(requestId);
        task.abort.signal.removeEventListener('abort', done);
        record.ms = Date.now() - sentAt;
        this.changed();
        resolve(ideNote(call.cmd, record, timeoutMs));
      };
      task.abort.signal.addEventListener('abort', done);
      this.pendingIde.set(requestId, { record, done });
      this.send(task.conn, frame);
    });
  }

  private onIdeReply(requestId: string, frame: Record<string, unknown>): void {
    const pending = this.pendingIde.get(requestId);
    if (!pending) {
      this.logLine(`IDE reply ${requestId}: no call waits for it (late or unknown), ignored`);
      return;
    }
    pending.record.reply = typeof frame.error === 'string' ? { error: frame.error } : { result: frame.result };
    pending.done();
  }

  /** Waits `ms` unless aborted or closed; true when the time ran out (the task goes on). */
  private sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(true), ms);
      const finish = (ran: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(ran && !signal.aborted);
      };
      const onAbort = () => finish(false);
      signal.addEventListener('abort', onAbort);
    });
  }
}
