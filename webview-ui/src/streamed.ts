/**
 * A streamed message's markdown, rendered so that each batch costs its own length, not the message's: the
 * settled blocks (everything before the last block boundary) are rendered once and kept; the open end is
 * rendered again each frame — and when it is one long paragraph or code block (over OPEN_MIN characters), only
 * that block's open end is (openBlock.ts). Output is exactly what renderMarkdown gives for the whole text,
 * block parts and the wrappers `.md-part` and `.md-tail` (which take no part in layout) aside.
 */
import { renderMarkdown } from './markdown';
import { type OpenBlock, openBlock } from './openBlock';

/** An open block longer than this (characters) is rendered incrementally. */
const OPEN_MIN = 1024;

/** Block boundaries found line by line: each line is read once, however often the text grows. */
class BoundaryScan {
  private pos: number;
  private fence: string | undefined;
  private prevBlank = false;
  private searched = 0;
  best: number;

  constructor(from: number) {
    this.pos = this.best = from;
  }

  /**
   * The last block boundary in `src` so far (see blockBoundary): reads the whole lines added since the last call.
   */
  advance(src: string): number {
    for (;;) {
      const nl = src.indexOf('\n', Math.max(this.pos, this.searched));
      // The last line may still grow ("3" becomes "3. item"): only whole lines are read (and a long one is
      // searched for its end only where it grew).
      if (nl < 0) {
        this.searched = src.length;
        return this.best;
      }
      const line = src.slice(this.pos, nl);
      if (this.fence === undefined) {
        // A list item after a blank line continues its list (a loose list): never a boundary.
        if (this.prevBlank && /^\S/.test(line) && !/^(?:[-+*]|\d{1,9}[.)])(?:\s|$)/.test(line)) this.best = this.pos;
        const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
        if (open) this.fence = open[1];
        this.prevBlank = !open && line.trim() === '';
      } else {
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
        if (close && close[1]![0] === this.fence[0] && close[1]!.length >= this.fence.length) this.fence = undefined;
        this.prevBlank = false;
      }
      this.pos = nl + 1;
    }
  }
}

/**
 * The last block boundary in `src` at or after `from` (itself a boundary, outside any code fence): the start
 * of a line that begins at column 0 after a blank line, outside fenced code, and is not a list item (which
 * would continue a list above), read on whole lines only. Everything before it is settled: a later chunk
 * cannot change how it renders.
 */
export function blockBoundary(src: string, from: number): number {
  return new BoundaryScan(from).advance(src);
}

/** What a streamed body shows: the source rendered so far, and where its settled blocks end. */
interface Streamed {
  src: string;
  /** Whether `src` was the whole message (nothing more to come): a code block's open end is then highlighted. */
  complete: boolean;
  stable: number;
  tail: HTMLElement;
  scan: BoundaryScan;
  /** The tail's block, rendered incrementally: the tail holds only it. */
  open?: OpenBlock | undefined;
  /** The settled offset where the tail's block was found not to be one openBlock renders (not tried again). */
  noOpen?: number | undefined;
}
const streamed = new WeakMap<HTMLElement, Streamed>();

/** How much of its text `body` shows (-1: none rendered there yet). */
export function shownLength(body: HTMLElement): number {
  const st = streamed.get(body);
  return st && st.tail.parentElement === body ? st.src.length : -1;
}

function div(className: string): HTMLElement {
  const el = document.createElement('div');
  el.className = className;
  return el;
}

export interface StreamOptions {
  /** Runs on each newly rendered part (code-block actions). */
  decorate?: ((part: HTMLElement) => void) | undefined;
  /** No more text will come: a code block left open is final (highlighted). Default true. */
  complete?: boolean | undefined;
  /** `src` is what `body` showed with text appended (the caller knows): not compared again. */
  appended?: boolean | undefined;
}

/**
 * Renders `src` into `body` — incrementally when `src` extends what `body` shows (a streamed message). The
 * same text again renders nothing; anything else renders afresh, as if it had all streamed in at once.
 */
export function renderStreamed(body: HTMLElement, src: string, opts: StreamOptions = {}): void {
  const { decorate, complete = true } = opts;
  let st = streamed.get(body);
  if (st && st.src.length === src.length && (opts.appended || st.src === src) && st.complete === complete && st.tail.parentElement === body) return; // unchanged
  // Comparing the whole text would cost its length every frame: the caller says when it only grew.
  const grew = st !== undefined && (opts.appended ? src.length >= st.src.length : src.startsWith(st.src));
  if (!st || !grew || st.tail.parentElement !== body) {
    // Afresh: as if the whole text had streamed in at once — its settled blocks in one part, its last block
    // (a long paragraph or code block: in parts, not lexed whole) after them.
    const tail = div('md-tail');
    body.replaceChildren(tail);
    st = { src: '', complete, stable: 0, tail, scan: new BoundaryScan(0) };
    streamed.set(body, st);
  }
  const boundary = st.scan.advance(src);
  if (st.open && !st.open.update(src, complete)) {
    // No longer a block it renders (a setext underline, a table's delimiter row): rendered afresh below, not tried again.
    st.open = undefined;
    st.noOpen = st.stable;
  }
  for (;;) {
    if (st.open?.end !== undefined) {
      // The block has ended, and the next one starts where it ends: it is settled, as it is.
      const part = div('md-part');
      part.append(st.open.node(), '\n'); // marked ends each block with a newline
      body.insertBefore(part, st.tail);
      st.stable = st.open.end;
      st.open = st.noOpen = undefined;
      st.tail.replaceChildren();
    }
    if (boundary > st.stable) {
      const part = div('md-part');
      part.append(renderMarkdown(src.slice(st.stable, boundary)));
      decorate?.(part);
      body.insertBefore(part, st.tail);
      st.stable = boundary;
      st.open = st.noOpen = undefined;
    }
    if (st.open || st.noOpen === st.stable || src.length - st.stable <= OPEN_MIN) break;
    const block = openBlock(src, st.stable);
    if (!block?.update(src, complete)) {
      st.noOpen = st.stable;
      break;
    }
    st.open = block;
    st.tail.replaceChildren(block.node(), '\n'); // marked ends each block with a newline
    decorate?.(st.tail);
  }
  if (!st.open) {
    st.tail.replaceChildren(renderMarkdown(src.slice(st.stable)));
    decorate?.(st.tail);
  }
  st.src = src;
  st.complete = complete;
}
