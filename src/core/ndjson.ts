import type { Readable, Writable } from 'node:stream';
import { AbstractMessageReader, AbstractMessageWriter, type DataCallback, type Disposable, type Message, type MessageReader, type MessageWriter } from 'vscode-jsonrpc/node';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from './lineSplitter';

export { DEFAULT_MAX_LINE_BYTES, LineSplitter } from './lineSplitter';
export type { Disposable } from 'vscode-jsonrpc/node';

/** A line over the limit, dropped: its size and its two ends (which may tell what it answered). */
export interface DroppedLine {
  bytes: number;
  limit: number;
  head: string;
  tail: string;
}

/** A line the framer could not turn into a message; the stream goes on after it. */
export class FramingError extends Error {
  constructor(
    message: string,
    readonly line: string,
    readonly dropped?: DroppedLine,
  ) {
    super(message);
    this.name = 'FramingError';
  }
}

/**
 * The simple top-level fields (strings and numbers) a JSON object's text starts with, up to its first
 * nested value, and a top-level `id` its text ends with: what a dropped line's ends say it was.
 */
export function peekFields(head: string, tail: string): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  const open = /^\s*\{/.exec(head);
  if (!open) return out;
  const field = /\s*"([A-Za-z_]+)"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")\s*([,}])/y;
  field.lastIndex = open[0].length;
  for (let m = field.exec(head); m; m = field.exec(head)) {
    out[m[1]!] = JSON.parse(m[2]!) as string | number;
    if (m[3] === '}') break;
  }
  const last = /,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(tail);
  if (last && !('id' in out)) out.id = JSON.parse(last[1]!) as string | number;
  return out;
}

/**
 * Merges adjacent messages of one read that mean the same as one (streamed text chunks of one message):
 * `key` says which messages may merge (undefined: never), `merge` folds `next` into `into`.
 */
export interface Coalescer {
  key(message: Message): string | undefined;
  merge(into: Message, next: Message): void;
}

/**
 * What a decoded message stream reports, in stream order: each read beginning (activity, even for a line
 * still arriving), each JSON object, each line dropped (malformed, not an object, over the limit: `dropped`),
 * the end of a read's messages (where adjacent chunks stop merging), the stream's end and its errors.
 */
export interface StreamReceiver {
  read?(): void;
  /** A message, and the line it was read from where the transport has one (the traffic view keeps it as read). */
  message(message: object, text?: string): void;
  malformed(error: FramingError): void;
  readDone?(): void;
  end?(): void;
  error?(error: Error): void;
}

/** Decodes NDJSON from `readable` into `receiver` (split on \n only, \r\n tolerated, lines over `maxLineBytes` dropped). */
export function decodeNdjson(readable: Readable, maxLineBytes: number, receiver: StreamReceiver): Disposable {
  const splitter = new LineSplitter(
    maxLineBytes,
    (line) => {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch (error) {
        receiver.malformed(new FramingError(`Malformed JSON from agent: ${(error as Error).message}`, line));
        return;
      }
      if (typeof message !== 'object' || message === null || Array.isArray(message)) receiver.malformed(new FramingError('Agent sent a line that is not a JSON object', line));
      else receiver.message(message, line);
    },
    (bytes, ends) => {
      const shown = `${ends.head.slice(0, 200)}…${ends.tail.slice(-100)}`;
      receiver.malformed(new FramingError(`Dropped a line of ${bytes} bytes: over the ${maxLineBytes}-byte limit`, shown, { bytes, limit: maxLineBytes, ...ends }));
    },
  );
  const onData = (data: Buffer) => {
    receiver.read?.();
    splitter.push(data);
    receiver.readDone?.();
  };
  const onEnd = () => {
    splitter.end();
    receiver.readDone?.();
    receiver.end?.();
  };
  const onError = (error: Error) => receiver.error?.(error);
  readable.on('data', onData);
  readable.on('end', onEnd);
  readable.on('error', onError);
  return {
    dispose: () => {
      readable.off('data', onData);
      readable.off('end', onEnd);
      readable.off('error', onError);
    },
  };
}

export interface DecodedReaderOptions {
  /**
   * Called on each read from the stream, before its lines are handled: a long line still arriving is the agent
   * talking too (activity, the silence warning).
   */
  onRead?: () => void;
  /** Sees every message read, before coalescing (traces, the traffic view), with its line where the transport has it. */
  tap?: (message: Message, text?: string) => void;
  coalesce?: Coalescer;
  /**
   * A line over the limit was dropped: what to deliver in its place (an error answer to the request it
   * answered, so that request does not wait forever), if anything.
   */
  onDropped?: (line: DroppedLine) => Message | undefined;
}

export interface NdjsonReaderOptions extends DecodedReaderOptions {
  maxLineBytes?: number;
}

/**
 * A JSON-RPC message reader over a decoded stream (`source` starts it and returns how to stop): malformed
 * lines are reported and skipped, a second answer to one request is dropped. With a `coalesce`r, adjacent
 * mergeable messages of one read are delivered as one (after the tap saw each line): fewer messages through
 * vscode-jsonrpc's queue, which dispatches one message per event-loop turn.
 */
export class DecodedMessageReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  /** The mergeable message held until the next one shows whether it merges, and its key. */
  private held: { message: Message; key: string } | undefined;

  constructor(
    private readonly source: (receiver: StreamReceiver) => Disposable,
    private readonly options: DecodedReaderOptions = {},
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onRead = this.options.onRead;
    const stop = this.source({
      ...(onRead ? { read: onRead } : {}),
      message: (message, text) => this.handleMessage(message as Message, text),
      malformed: (error) => {
        this.fireError(error);
        const instead = error.dropped && this.options.onDropped?.(error.dropped);
        if (instead) this.deliver(instead);
      },
      readDone: () => this.release(),
      end: () => this.fireClose(),
      error: (error) => this.fireError(error),
    });
    return {
      dispose: () => {
        stop.dispose();
        this.callback = undefined;
      },
    };
  }

  private handleMessage(message: Message, text?: string): void {
    this.options.tap?.(message, text);
    if (this.isDuplicateResponse(message as unknown as Record<string, unknown>)) {
      this.fireError(new FramingError('Agent answered the same request twice (the second answer is dropped)', JSON.stringify(message)));
      return;
    }
    const coalesce = this.options.coalesce;
    const key = coalesce?.key(message);
    if (key !== undefined && this.held?.key === key) {
      coalesce!.merge(this.held.message, message);
      return;
    }
    this.release();
    if (key !== undefined) this.held = { message, key };
    else this.callback?.(message);
  }

  /** A message of our own in a dropped line's place, in order with the lines around it. */
  private deliver(message: Message): void {
    if (this.isDuplicateResponse(message as unknown as Record<string, unknown>)) return;
    this.release();
    this.callback?.(message);
  }

  /** Delivers the held message (end of a read, or a message that does not merge with it). */
  private release(): void {
    const held = this.held;
    this.held = undefined;
    if (held) this.callback?.(held.message);
  }

  /** Response ids already delivered (the newest RECENT_IDS); vscode-jsonrpc would let a second answer win. */
  private readonly answered = new Set<string>();

  private isDuplicateResponse(m: Record<string, unknown>): boolean {
    if (m.method !== undefined || m.id === undefined || m.id === null || !('result' in m || 'error' in m)) return false;
    const key = `${typeof m.id}:${String(m.id)}`;
    if (this.answered.has(key)) return true;
    this.answered.add(key);
    if (this.answered.size > RECENT_IDS) this.answered.delete(this.answered.values().next().value as string);
    return false;
  }
}

/** Reads newline-delimited JSON-RPC messages from a stream (one listener per stream, attached by `listen`). */
export class NdjsonMessageReader extends DecodedMessageReader {
  constructor(readable: Readable, options: NdjsonReaderOptions = {}) {
    super((receiver) => decodeNdjson(readable, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, receiver), options);
  }
}

/** How many answered request ids a reader remembers to drop duplicate answers. */
const RECENT_IDS = 4096;

/** What may wait for an agent that does not read its input; past it, writes are refused at once. */
export const MAX_WRITE_BACKLOG_BYTES = 16 * 1024 * 1024;
/** How long a write may wait for the agent to read its input before the agent counts as stuck. */
export const DEFAULT_WRITE_STALL_MS = 60_000;

export interface NdjsonWriterOptions {
  maxBacklogBytes?: number;
  /** 0: never stalls. */
  stallMs?: number;
  /** The agent read nothing of what waits for it for `stallMs` (called once per stuck write). */
  onStall?: (waitingBytes: number, stallMs: number) => void;
}

/** A frame refused because too much already waits for an agent that does not read its input. */
export class WriteBacklogError extends Error {
  constructor(
    readonly waitingBytes: number,
    readonly limit: number,
  ) {
    super(`The agent is not reading its input: ${waitingBytes} bytes already wait for it (at most ${limit}); not sent`);
    this.name = 'WriteBacklogError';
  }
}

/**
 * Writes one JSON message per line through a single queue, so frames never interleave and back-pressure
 * from the agent's stdin is respected. What waits is bounded (`maxBacklogBytes`; a frame is always taken
 * when nothing waits), and a write the agent does not take within `stallMs` is reported (`onStall`).
 */
export class NdjsonMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private queue: Promise<void> = Promise.resolve();
  private errorCount = 0;
  /** Characters of the frames queued or being written. */
  private backlog = 0;
  private written = 0;
  private readonly maxBacklog: number;
  private readonly stallMs: number;

  constructor(
    private readonly writable: Writable,
    private readonly options: NdjsonWriterOptions = {},
  ) {
    super();
    this.maxBacklog = options.maxBacklogBytes ?? MAX_WRITE_BACKLOG_BYTES;
    this.stallMs = options.stallMs ?? DEFAULT_WRITE_STALL_MS;
  }

  /** Characters waiting to be taken by the agent. */
  get waitingBytes(): number {
    return this.backlog;
  }

  /** Bytes of the frames the stream took (the traffic counters). */
  get bytesWritten(): number {
    return this.written;
  }

  /** One frame per write: a JSON-RPC message, or any JSON object (pi RPC frames). */
  write(msg: object): Promise<void> {
    const frame = `${JSON.stringify(msg)}\n`;
    if (this.backlog > 0 && this.backlog + frame.length > this.maxBacklog) {
      const error = new WriteBacklogError(this.backlog, this.maxBacklog);
      this.fireError(error, undefined, ++this.errorCount);
      return Promise.reject(error);
    }
    this.backlog += frame.length;
    const result = this.queue
      .then(() => this.writeFrame(frame))
      .finally(() => {
        this.backlog -= frame.length;
      });
    this.queue = result.catch(() => undefined);
    return result;
  }

  end(): void {
    this.writable.end();
  }

  private writeFrame(frame: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.writable.destroyed || this.writable.writableEnded) {
        reject(new Error('Agent stdin is closed'));
        return;
      }
      let stall: NodeJS.Timeout | undefined;
      const settle = (error?: Error) => {
        clearTimeout(stall);
        this.writable.off('drain', onDrain);
        this.writable.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = () => settle();
      const onClose = () => settle(new Error('Agent stdin is closed'));
      const ok = this.writable.write(frame, 'utf8', (error) => {
        if (error) {
          this.fireError(error, undefined, ++this.errorCount);
          settle(error);
        } else {
          this.written += Buffer.byteLength(frame);
          if (ok) settle();
        }
      });
      if (ok) return;
      this.writable.once('drain', onDrain);
      this.writable.once('close', onClose);
      if (this.stallMs > 0) stall = setTimeout(() => this.options.onStall?.(this.backlog, this.stallMs), this.stallMs);
    });
  }
}

/** A JSON-RPC message writer over any `send` (a transport's write); `tap` sees each message first. */
export class SendingMessageWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(
    private readonly send: (message: object) => Promise<void>,
    private readonly tap?: (message: object) => void,
  ) {
    super();
  }

  write(message: Message): Promise<void> {
    this.tap?.(message);
    return this.send(message);
  }

  end(): void {}
}
