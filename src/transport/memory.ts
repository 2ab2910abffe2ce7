/**
 * Two connected in-memory ends of one message stream (the same NDJSON framing as stdio, over buffers): an
 * adapter on one end, a scripted agent on the other, no process. Either end's `close` closes both, with
 * its reason.
 */
import { PassThrough } from 'node:stream';
import { NdjsonTransport, type NdjsonTransportOptions } from './ndjsonTransport';
import type { CloseReason } from './transport';

/** The reason an end closes with when none is given: a clean exit. */
const CLEAN: CloseReason = { code: 0, signal: null, stderrTail: '' };

export class MemoryTransport extends NdjsonTransport {
  readonly closed: Promise<CloseReason>;
  /** The other end (set once both exist). */
  peer!: MemoryTransport;
  private settle!: (reason: CloseReason) => void;

  constructor(
    input: PassThrough,
    private readonly out: PassThrough,
    options: NdjsonTransportOptions,
  ) {
    super(input, out, options);
    this.closed = new Promise((resolve) => (this.settle = resolve));
  }

  /** Ends both outputs (what a stuck peer never took is dropped, as a socket's close drops it); both ends close with `reason`. */
  close(reason: CloseReason = CLEAN): Promise<CloseReason> {
    this.endOutput();
    this.peer.endOutput();
    this.settle(reason);
    this.peer.settle(reason);
    return this.closed;
  }

  /** Writes raw text as the peer receives it (broken lines, partial frames: what a faulty agent sends). */
  writeRaw(text: string): void {
    this.out.write(text);
  }
}

/** Two connected ends; `options` apply to both (a small `maxLineBytes`, a short `writeStallMs`). */
export function memoryTransportPair(options: NdjsonTransportOptions = {}): [MemoryTransport, MemoryTransport] {
  const aToB = new PassThrough();
  const bToA = new PassThrough();
  const a = new MemoryTransport(bToA, aToB, options);
  const b = new MemoryTransport(aToB, bToA, options);
  a.peer = b;
  b.peer = a;
  return [a, b];
}
