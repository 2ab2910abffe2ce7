/**
 * A streamed reply of the agent service put back in order. Reading chosen (the document leaves it open):
 * each frame's `msg` is a piece of the answer (not the answer so far); `stream_seq_id` counts from 0 and
 * orders the pieces, which may arrive out of order; the frame with `stream_finish: true` is the last (its
 * `msg` is kept). A frame without `stream_seq_id` is taken where it arrives, and ends the reply unless it
 * says `stream_finish: false` — a one-frame reply is `{request_id, msg}`. Pieces missing when the finish
 * has come and a grace time has passed are reported as gaps; a stream counted from 1 (only 0 missing) is not.
 */

export interface ReplyFrame {
  msg?: unknown;
  stream_seq_id?: unknown;
  stream_finish?: unknown;
}

export interface AssembledReply {
  text: string;
  /** Sequence numbers that never arrived. */
  gaps: number[];
  frames: number;
}

/** How long pieces still missing may take to arrive once the finishing frame is in (ms). */
export const GAP_GRACE_MS = 1000;

export class StreamAssembler {
  private readonly waiting = new Map<number, string>();
  private next = 0;
  private last: number | undefined;
  private text = '';
  private frames = 0;
  private grace: ReturnType<typeof setTimeout> | undefined;
  private ended = false;

  constructor(
    /** Each piece, in order, as soon as it can be placed. */
    private readonly onText: (piece: string) => void,
    private readonly onDone: (reply: AssembledReply) => void,
    private readonly graceMs = GAP_GRACE_MS,
  ) {}

  push(frame: ReplyFrame): void {
    if (this.ended) return;
    this.frames++;
    const piece = typeof frame.msg === 'string' ? frame.msg : frame.msg === undefined || frame.msg === null ? '' : JSON.stringify(frame.msg);
    const seq = typeof frame.stream_seq_id === 'number' && Number.isInteger(frame.stream_seq_id) && frame.stream_seq_id >= 0 ? frame.stream_seq_id : undefined;
    if (seq === undefined) {
      this.emit(piece);
      if (frame.stream_finish !== false) this.end([]);
      return;
    }
    if (seq < this.next || this.waiting.has(seq)) return; // a repeat
    this.waiting.set(seq, piece);
    if (frame.stream_finish === true) this.last = seq;
    this.drain();
    if (this.last !== undefined && !this.ended && this.grace === undefined) this.grace = setTimeout(() => this.giveUp(), this.graceMs);
  }

  /** The connection went: what arrived, in order, with what is missing. */
  abandon(): AssembledReply {
    if (this.grace) clearTimeout(this.grace);
    this.ended = true;
    return { text: this.text, gaps: [], frames: this.frames };
  }

  private drain(): void {
    while (this.waiting.has(this.next)) {
      const piece = this.waiting.get(this.next)!;
      this.waiting.delete(this.next);
      this.emit(piece);
      if (this.next === this.last) {
        this.end([]);
        return;
      }
      this.next++;
    }
  }

  private giveUp(): void {
    if (this.ended) return;
    const last = this.last ?? Math.max(...this.waiting.keys());
    const gaps: number[] = [];
    for (let seq = this.next; seq <= last; seq++) {
      const piece = this.waiting.get(seq);
      if (piece === undefined) gaps.push(seq);
      else this.emit(piece);
    }
    // Counted from 1: only frame 0 "missing", and nothing was placed before.
    this.end(gaps.length === 1 && gaps[0] === 0 && this.frames === last ? [] : gaps);
  }

  private emit(piece: string): void {
    if (!piece) return;
    this.text += piece;
    this.onText(piece);
  }

  private end(gaps: number[]): void {
    if (this.grace) clearTimeout(this.grace);
    this.ended = true;
    this.onDone({ text: this.text, gaps, frames: this.frames });
  }
}
