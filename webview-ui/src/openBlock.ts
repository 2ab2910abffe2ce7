/**
 * The open block of a streamed message — the paragraph or fenced code block still being written at its end —
 * rendered incrementally once it is long (see renderStreamed): its parts (segments.ts) are rendered once, when
 * later text can no longer change them, and only the open end is rendered again each frame. The parts fall
 * where the whole text's render puts them, so the block ends exactly as renderMarkdown renders it.
 * A paragraph that turns out to be something else (a line that could start another block) gives up; the
 * caller then renders the tail afresh.
 */
import type { Tokens } from 'marked';
import { highlightable, highlightWhenSeen, PENDING } from './highlight';
import { appendGrouped, type CodePre, codeHtml, inlineHtml, lexBlocks, renderHtml, renderMarkdown, segHtml } from './markdown';
import { type CodeCuts, type CodePart, codeLine, codeLongLine, codeParts, cutParagraph, LONG_PARTS, type ParagraphCuts, plainLine } from './segments';

export interface OpenBlock {
  /** The block's element in the tail: a `<p>`, or the code block (its `<pre>`, or the wrapper decorate put it in). */
  node(): Node;
  /**
   * Renders the block as it stands in `src` (`complete`: the message is whole, nothing more will come); false
   * when it is not a block this renders any more.
   */
  update(src: string, complete: boolean): boolean;
  /**
   * Where the text after the block starts once the block has ended (a new block starts there: the caller
   * settles this one); undefined while it is open.
   */
  readonly end: number | undefined;
}

/** The block that starts at `from` (blank lines skipped), if it is a paragraph of plain lines or a fence at column 0. */
export function openBlock(src: string, from: number): OpenBlock | undefined {
  // Blank lines before it render nothing.
  let start = from;
  let nl = src.indexOf('\n', start);
  while (nl >= 0 && !/\S/.test(src.slice(start, nl))) {
    start = nl + 1;
    nl = src.indexOf('\n', start);
  }
  const first = src.slice(start, nl < 0 ? src.length : nl);
  if (nl >= 0 && /^(`{3,}|~{3,})[^`]*$/.test(first)) return new OpenFence(src, start, nl);
  return plainLine(first, true) ? new OpenParagraph(start) : undefined;
}

/** Nodes rendered for the open end, replaced on each update. */
class OpenEnd {
  private nodes: Node[] = [];
  replace(parent: Node, frag: DocumentFragment): void {
    for (const n of this.nodes) n.parentNode?.removeChild(n);
    this.nodes = [...frag.childNodes];
    parent.appendChild(frag);
  }
}

/** Lines that start a block which interrupts a paragraph (in marked as in CommonMark): heading, quote, fence, list item, rule. */
const INTERRUPTS = /^ {0,3}(?:#{1,6}(?:[ \t]|$)|>|`{3,}|~{3,}|[-+*][ \t]+\S|1[.)][ \t]+\S)/;

class OpenParagraph implements OpenBlock {
  private readonly p = document.createElement('p');
  private readonly cuts: ParagraphCuts;
  /** The first line not yet read whole, and how far it has no newline. */
  private scanned: number;
  private searched = 0;
  /** Where the text ends, once a blank line or another block has ended the paragraph. */
  private textEnd: number | undefined;
  private parts = 0;
  private readonly openEnd = new OpenEnd();
  private rendered = false;
  end: number | undefined;

  constructor(private readonly start: number) {
    this.cuts = { f: start, attempt: 0 };
    this.scanned = start;
  }

  node(): Node {
    return this.p;
  }

  update(src: string, complete: boolean): boolean {
    if (this.rendered) return true; // ended, and rendered as it ended
    let textEnd = this.textEnd;
    while (textEnd === undefined) {
      // (A long last line is searched for its end only where it grew.)
      const nl = src.indexOf('\n', Math.max(this.scanned, this.searched));
      this.searched = nl < 0 ? src.length : 0;
      const line = src.slice(this.scanned, nl < 0 ? src.length : nl);
      const first = this.scanned === this.start;
      const plain = plainLine(line, first);
      if (nl < 0 && !complete && (plain || !/\S/.test(line) || INTERRUPTS.test(line))) {
        // The last line, still growing. Blank so far, or another block's start: the text ends before it for now.
        textEnd = plain ? src.length : this.scanned - 1;
      } else if (!/\S/.test(line) || (!first && INTERRUPTS.test(line))) {
        // A blank line ends the paragraph; so does the start of a block that may interrupt one, where it starts.
        this.textEnd = textEnd = this.scanned - 1;
        this.end = /\S/.test(line) ? this.scanned : nl < 0 ? src.length : nl + 1;
      } else if (!plain) return false;
      else if (nl < 0) textEnd = src.length;
      else this.scanned = nl + 1;
    }
    const end = textEnd;
    let settled = 0;
    const parts = renderHtml(() => {
      let html = '';
      cutParagraph(src, end, this.cuts, inlineHtml, (part) => {
        html += segHtml(part);
        settled++;
      });
      return html;
    });
    if (settled) {
      this.openEnd.replace(this.p, document.createDocumentFragment());
      this.parts += settled;
      // As the whole render marks it: more than LONG_PARTS parts, counting the open end; then in groups.
      const long = this.parts + 1 > LONG_PARTS;
      this.p.classList.toggle('md-long', long);
      if (long) appendGrouped(this.p, parts);
      else this.p.appendChild(parts);
    }
    this.openEnd.replace(
      this.p,
      renderHtml(() => {
        const html = inlineHtml(src.slice(this.cuts.f, end));
        return this.parts ? segHtml(html) : html;
      }),
    );
    this.rendered = this.textEnd !== undefined;
    return true;
  }
}

class OpenFence implements OpenBlock {
  /** The opening line, with its newline. */
  private readonly fenceLine: string;
  private readonly close: RegExp;
  private readonly codeStart: number;
  /** Lines before this are code for certain: fed to `cuts`. */
  private fed: number;
  private readonly cuts: CodeCuts = { cur: '', lines: 0 };
  private parts = 0;
  /** Every part but the last was settled when the block became final (as the whole render groups them). */
  private finalParts = false;
  private readonly pre: CodePre;
  private readonly code: HTMLElement;
  private readonly openEnd = new OpenEnd();
  /** What the open end was last rendered for (where it starts, how long the block is, whether final). */
  private rendered = '';
  end: number | undefined;

  constructor(src: string, start: number, nl: number) {
    this.fenceLine = src.slice(start, nl + 1);
    // A closing fence as marked reads one: the opening run, more of the fence characters, spaces.
    this.close = new RegExp(`^ {0,3}${/^(`{3,}|~{3,})/.exec(this.fenceLine)![1]}[~\`]* *$`);
    this.codeStart = this.fed = nl + 1;
    const frag = renderMarkdown(this.fenceLine);
    this.pre = frag.querySelector('pre') as CodePre;
    this.code = this.pre.querySelector('code') as HTMLElement;
    this.code.classList.remove(PENDING);
  }

  node(): Node {
    const wrap = this.pre.parentElement;
    return wrap?.classList.contains('codeblock') ? wrap : this.pre;
  }

  update(src: string, complete: boolean): boolean {
    // A line is code, newline and all, once the line after it is whole and is no closing fence.
    // (A line being written is no closing fence once it has anything but spaces and fence characters.)
    const settled: CodePart[] = [];
    const emit = (part: CodePart) => settled.push(part);
    for (;;) {
      const nl = src.indexOf('\n', this.fed);
      if (nl < 0 || this.close.test(src.slice(this.fed, nl))) break;
      const next = src.indexOf('\n', nl + 1);
      const after = src.slice(nl + 1, next < 0 ? src.length : next);
      if (next < 0 ? !/[^ `~]/.test(after) : this.close.test(after)) break;
      codeLine(this.cuts, src.slice(this.fed, nl + 1), emit);
      this.fed = nl + 1;
    }
    // A line over LONG_LINE still being written: its whole pieces are out already.
    if (src.indexOf('\n', this.fed) < 0 && /[^ `~]/.test(src.slice(this.fed, this.fed + 64))) codeLongLine(this.cuts, src.slice(this.fed), emit);
    // The rest as marked reads it: where the code ends (a closing fence, or the end), and the block after it.
    const block = lexBlocks(this.fenceLine + src.slice(this.fed))[0] as Tokens.Code | undefined;
    if (block?.type !== 'code') return false;
    const after = this.fed + block.raw.length - this.fenceLine.length;
    const lastLine = block.raw.replace(/\n$/, '').split('\n').at(-1) ?? '';
    // Ended once its closing line is whole ("```" may still become "```js", an opening).
    this.end = after < src.length || (block.raw.endsWith('\n') && this.close.test(lastLine)) ? after : undefined;
    const language = (block.lang ?? '').trim().split(/\s+/)[0] ?? '';
    // Highlighting waits for the end: the open end is rendered again each frame.
    const final = this.end !== undefined || complete;
    const state = `${this.fed} ${block.raw.length} ${final}`;
    if (state === this.rendered && !settled.length) return true;
    // Its parts were settled as final, and it changed after all: rendered afresh by the caller.
    if (this.finalParts) return false;
    this.rendered = state;
    let rest = codeParts(block.text, { ...this.cuts });
    if (final && rest.length > 1) {
      // Nothing more will come: every part but the last is settled, in groups, as the whole render has them.
      settled.push(...rest.slice(0, -1));
      rest = rest.slice(-1);
      this.finalParts = true;
    }
    // With no part settled before, the code element holds only the open end (which highlighting may have rebuilt).
    if (!this.parts) this.code.replaceChildren();
    if (settled.length) {
      this.openEnd.replace(this.code, document.createDocumentFragment());
      appendGrouped(
        this.code,
        renderHtml(() => codeHtml(settled, '', language, true)),
      );
      this.parts += settled.length;
    }
    const text = src.slice(this.codeStart, this.fed) + block.text;
    this.openEnd.replace(
      this.code,
      renderHtml(() => codeHtml(rest, text, language, this.parts > 0, !final)),
    );
    // One part: the code element itself waits to be highlighted, as the renderer marks it.
    const waiting = final && !this.parts && rest.length <= 1 && highlightable(language, text, true);
    this.code.classList.toggle(PENDING, waiting);
    if (waiting) highlightWhenSeen(this.code);
    this.pre.codeText = text;
    return true;
  }
}
