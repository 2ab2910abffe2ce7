/**
 * The NDJSON framing over a pair of byte streams, shared by the stdio transport and the in-memory pair:
 * lines split on \n only with a size limit (core/lineSplitter.ts), one write queue with its bounded backlog
 * and stall report (core/ndjson.ts), and the byte and message counters.
 */
import type { Readable, Writable } from 'node:stream';
import { Listeners } from '../core/listeners';
import { decodeNdjson, DEFAULT_MAX_LINE_BYTES, NdjsonMessageWriter, type Disposable, type StreamReceiver } from '../core/ndjson';
import type { CloseReason, MessageTransport, TransportStats } from './transport';

export interface NdjsonTransportOptions {
  /** Longer lines from the peer are dropped (reported with their size and ends). */
  maxLineBytes?: number;
  /** How long a write may wait for the peer to read before it is reported stalled (ms; 0 = never). */
  writeStallMs?: number;
  /** What may wait for a peer that does not read; past it, writes are refused at once. */
  maxBacklogBytes?: number;
}

export abstract class NdjsonTransport implements MessageTransport {
  abstract readonly closed: Promise<CloseReason>;
  private readonly counts = { bytesIn: 0, messagesIn: 0, messagesOut: 0, linesDropped: 0 };
  private readonly writer: NdjsonMessageWriter;
  private readonly stalls = new Listeners<{ bytes: number; ms: number }>();
  private listening = false;

  protected constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: NdjsonTransportOptions = {},
  ) {
    this.writer = new NdjsonMessageWriter(output, {
      ...(options.writeStallMs !== undefined ? { stallMs: options.writeStallMs } : {}),
      ...(options.maxBacklogBytes !== undefined ? { maxBacklogBytes: options.maxBacklogBytes } : {}),
      onStall: (bytes, ms) => this.stalls.fire({ bytes, ms }),
    });
  }

  abstract close(): Promise<CloseReason>;

  /** The peer's output ended (no more messages will come). */
  protected inputEnded(): void {}

  get stats(): TransportStats {
    return { ...this.counts, bytesOut: this.writer.bytesWritten };
  }

  get writable(): boolean {
    const out = this.output;
    return !(out.destroyed || out.writableEnded || out.errored !== null);
  }

  listen(receiver: StreamReceiver): Disposable {
    if (this.listening) throw new Error('This transport already has a listener');
    this.listening = true;
    const counts = this.counts;
    const onData = (data: Buffer) => {
      counts.bytesIn += data.length;
    };
    // Counted first: the receiver sees the read after its bytes are counted.
    this.input.on('data', onData);
    const decoding = decodeNdjson(this.input, this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, {
      ...receiver,
      message: (message, text) => {
        counts.messagesIn++;
        receiver.message(message, text);
      },
      malformed: (error) => {
        counts.linesDropped++;
        receiver.malformed(error);
      },
      end: () => {
        receiver.end?.();
        this.inputEnded();
      },
    });
    return {
      dispose: () => {
        this.input.off('data', onData);
        decoding.dispose();
      },
    };
  }

  write(message: object): Promise<void> {
    const written = this.writer.write(message);
    written.then(
      () => this.counts.messagesOut++,
      () => undefined,
    );
    return written;
  }

  onStall(listener: (waitingBytes: number, ms: number) => void): () => void {
    return this.stalls.add(({ bytes, ms }) => listener(bytes, ms));
  }

  /** Ends what we send: the peer reads its end of the stream; writes it never took fail instead of waiting. */
  protected endOutput(): void {
    const out = this.output;
    if (out.writableNeedDrain) out.destroy();
    else if (!out.destroyed && !out.writableEnded) out.end();
  }
}
