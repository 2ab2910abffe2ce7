import type { Readable, Writable } from 'node:stream';
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';

export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;

/** A line the framer could not turn into a message; the stream goes on after it. */
export class FramingError extends Error {
  constructor(
    message: string,
    readonly line: string,
  ) {
    super(message);
    this.name = 'FramingError';
  }
}

/**
 * Splits a byte stream into lines on `\n` only (never on U+2028/U+2029 as readline does),
 * tolerating `\r\n`. Lines longer than `maxLineBytes` are dropped whole with an error.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;
  private discarding = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (bytes: number) => void,
  ) {}

  push(data: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl === -1) {
        this.keep(data.subarray(start));
        return;
      }
      const piece = data.subarray(start, nl);
      start = nl + 1;
      if (this.discarding || this.pending + piece.length > this.maxLineBytes) {
        this.onOversize(this.pending + piece.length);
        this.reset();
        continue;
      }
      let line = this.pending === 0 ? piece : Buffer.concat([...this.chunks, piece]);
      this.reset();
      if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
      if (line.length > 0) this.onLine(line.toString('utf8'));
    }
  }

  /** Whatever was left without a final newline when the stream ended. */
  end(): void {
    if (!this.discarding && this.pending > 0) {
      const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
      if (line.trim()) this.onLine(line);
    }
    this.reset();
  }

  private keep(rest: Buffer): void {
    if (rest.length === 0) return;
    if (this.discarding) return;
    if (this.pending + rest.length > this.maxLineBytes) {
      // Stop buffering now; the rest of this line is thrown away when its newline arrives.
      this.chunks = [];
      this.pending = this.maxLineBytes + 1;
      this.discarding = true;
      return;
    }
    this.chunks.push(Buffer.from(rest));
    this.pending += rest.length;
  }

  private reset(): void {
    this.chunks = [];
    this.pending = 0;
    this.discarding = false;
  }
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
 * Reads newline-delimited JSON-RPC messages; malformed lines are reported and skipped. With a `coalesce`r,
 * adjacent mergeable messages of one read are delivered as one (after the tap saw each line): fewer
 * messages through vscode-jsonrpc's queue, which dispatches one message per event-loop turn.
 */
export class NdjsonMessageReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private readonly splitter: LineSplitter;
  /** The mergeable message held until the next one shows whether it merges, and its key. */
  private held: { message: Message; key: string } | undefined;

  constructor(
    private readonly readable: Readable,
    maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    private readonly tap?: (message: Message) => void,
    private readonly coalesce?: Coalescer,
  ) {
    super();
    this.splitter = new LineSplitter(
      maxLineBytes,
      (line) => this.handleLine(line),
      (bytes) =>
        this.fireError(
          new FramingError(`Dropped a line of ${bytes} bytes: over the ${maxLineBytes}-byte limit`, ''),
        ),
    );
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (data: Buffer) => {
      this.splitter.push(data);
      this.release();
    };
    const onEnd = () => {
      this.splitter.end();
      this.release();
      this.fireClose();
    };
    const onError = (error: Error) => this.fireError(error);
    this.readable.on('data', onData);
    this.readable.on('end', onEnd);
    this.readable.on('error', onError);
    return {
      dispose: () => {
        this.readable.off('data', onData);
        this.readable.off('end', onEnd);
        this.readable.off('error', onError);
        this.callback = undefined;
      },
    };
  }

  private handleLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      this.fireError(new FramingError(`Malformed JSON from agent: ${(error as Error).message}`, line));
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.fireError(new FramingError('Agent sent a line that is not a JSON object', line));
      return;
    }
    this.tap?.(message as Message);
    if (this.isDuplicateResponse(message as Record<string, unknown>)) {
      this.fireError(new FramingError('Agent answered the same request twice (the second answer is dropped)', line));
      return;
    }
    const key = this.coalesce?.key(message as Message);
    if (key !== undefined && this.held?.key === key) {
      this.coalesce!.merge(this.held.message, message as Message);
      return;
    }
    this.release();
    if (key !== undefined) this.held = { message: message as Message, key };
    else this.callback?.(message as Message);
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
    if (m.method !== undefined || (m.id === undefined || m.id === null) || !('result' in m || 'error' in m)) return false;
    const key = `${typeof m.id}:${String(m.id)}`;
    if (this.answered.has(key)) return true;
    this.answered.add(key);
    if (this.answered.size > RECENT_IDS) this.answered.delete(this.answered.values().next().value as string);
    return false;
  }
}

/** How many answered request ids a reader remembers to drop duplicate answers. */
const RECENT_IDS = 4096;

/**
 * Writes one JSON message per line through a single queue, so frames never interleave and
 * back-pressure from the agent's stdin is respected.
 */
export class NdjsonMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private queue: Promise<void> = Promise.resolve();
  private errorCount = 0;

  constructor(
    private readonly writable: Writable,
    private readonly tap?: (message: object) => void,
  ) {
    super();
  }

  /** One frame per write: a JSON-RPC message, or any JSON object (pi RPC frames). */
  write(msg: object): Promise<void> {
    this.tap?.(msg);
    const frame = `${JSON.stringify(msg)}\n`;
    const result = this.queue.then(() => this.writeFrame(frame));
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
      const ok = this.writable.write(frame, 'utf8', (error) => {
        if (error) {
          this.errorCount++;
          this.fireError(error, undefined, this.errorCount);
          reject(error);
        } else if (ok) {
          resolve();
        }
      });
      if (!ok) this.writable.once('drain', () => resolve());
    });
  }
}
