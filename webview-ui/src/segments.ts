/**
 * How a long paragraph or code block is cut into parts (`.md-seg`, each laid out only near the viewport), as
 * pure functions of its text: the whole render (markdown.ts) and the streamed one (openBlock.ts) cut at the
 * same places, so a streamed block ends exactly as the whole text renders, while streaming renders each part
 * once and only the open end again.
 * - A code block: groups of at most CODE_LINES lines and CODE_CHARS characters, highlighted each on its own; a
 *   line over LONG_LINE characters stands alone, cut every LONG_LINE characters and not highlighted.
 * - A paragraph (top level, every line plain text: nothing that could start another block): cut at a space
 *   followed by a word, at least SEG_CHARS after the last cut, where the text before renders settled — no
 *   emphasis, code span, link or autolink left open that later text could close. A cut that is not settled
 *   is tried again twice as far on.
 * No DOM and no marked here: inline rendering is passed in.
 */

/** A paragraph's parts: at least this long. */
export const SEG_CHARS = 2048;
/** A paragraph of more parts than this lays them out as blocks, each only near the viewport (`.md-long`). */
export const LONG_PARTS = 8;
/**
 * A code block's parts, and a long paragraph's (`.md-long`), are kept in groups of this many (`.md-grp`): a group
 * far from the viewport is skipped whole (its parts cost the browser's visibility checks, layout and the
 * highlighter's observer next to nothing), near it each part is laid out only near the viewport. Every part but
 * the block's last (the open end while it streams) is in a group; the last group fills as parts settle.
 */
export const GROUP_PARTS = 32;
/** A code block's parts: at most this many lines and characters (highlighting one takes a few ms). */
export const CODE_LINES = 50;
export const CODE_CHARS = 4096;
/** A code line longer than this stands alone, in pieces this long, never highlighted. */
export const LONG_LINE = 8192;

/**
 * A line that can only be paragraph text. The first line: nothing but a paragraph can start with it (no
 * indent, no heading, quote, list, fence, rule, HTML or link definition; a table needs a delimiter row, which no
 * later line may be). A later line: nothing can
 * interrupt the paragraph with it — no heading, quote, list item, fence, rule, setext underline, HTML block
 * or table delimiter row.
 */
export function plainLine(line: string, first: boolean): boolean {
  if (!/\S/.test(line)) return false;
  if (first) return !/^(?:\s|[#>\-+*_=`~<[!\\|]|\d{1,9}[.)])/.test(line);
  return !/^ {0,3}(?:#{1,6}(?:[ \t]|$)|>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|`{3,}|~{3,}|([-*_])(?:[ \t]*\1){2,}[ \t]*$|=+[ \t]*$|-+[ \t]*$|<[a-zA-Z/!?]|\|?[\s:|-]*-[\s:|-]*$)/.test(line);
}

/**
 * Rendered inline HTML whose source later text cannot change: outside code spans no delimiter (`*`, `~`, a
 * `_` not inside a word), backtick, bracket or `<` is left as text.
 */
export function settled(html: string): boolean {
  const text = html.replace(/<code>[\s\S]*?<\/code>/g, '').replace(/<[^>]*>/g, '');
  return !/[*~`[\]]|&lt;|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/u.test(text);
}

/** Where a paragraph's next part starts: its cut (`f`) and how many cuts from there were not settled. */
export interface ParagraphCuts {
  f: number;
  attempt: number;
}

/** The first place at or after `from`, before `end`, where a space is followed by a non-space; -1 if none. */
function nextCut(t: string, from: number, end: number): number {
  for (let i = t.indexOf(' ', from - 1); i >= 0 && i + 1 < end; i = t.indexOf(' ', i + 1)) {
    if (!/\s/.test(t[i + 1]!)) return i + 1;
  }
  return -1;
}

/**
 * Cuts `t` (a paragraph's text, known up to `end`) from `cuts.f` on as far as the rule allows; each settled
 * part's rendered HTML goes to `emit`. `cuts` is advanced in place, so streaming calls it again as text comes.
 */
export function cutParagraph(t: string, end: number, cuts: ParagraphCuts, inline: (src: string) => string, emit: (html: string) => void): void {
  for (;;) {
    const c = nextCut(t, cuts.f + SEG_CHARS * 2 ** Math.min(cuts.attempt, 20), end);
    if (c < 0) return;
    const html = inline(t.slice(cuts.f, c));
    if (settled(html)) {
      emit(html);
      cuts.f = c;
      cuts.attempt = 0;
    } else cuts.attempt++;
  }
}

/** A top-level paragraph's parts (rendered inline HTML), or undefined when it stays one piece. */
export function paragraphParts(t: string, inline: (src: string) => string): string[] | undefined {
  if (t.length <= SEG_CHARS || !t.split('\n').every((line, i) => plainLine(line, i === 0))) return undefined;
  const parts: string[] = [];
  const cuts = { f: 0, attempt: 0 };
  cutParagraph(t, t.length, cuts, inline, (html) => parts.push(html));
  if (!parts.length) return undefined;
  parts.push(inline(t.slice(cuts.f)));
  return parts;
}

/** A code block's part: its text, and whether it is a piece of an over-long line (never highlighted). */
export interface CodePart {
  text: string;
  plain: boolean;
}

/** The code block's group of lines being filled, and how much of a long line still being written is out. */
export interface CodeCuts {
  cur: string;
  lines: number;
  /** Characters of the line being written already emitted, in pieces (it is over LONG_LINE). */
  long?: number;
}

/** Adds a line of code (with its newline, unless it is the last) to the group, emitting the parts it closes. */
export function codeLine(cuts: CodeCuts, line: string, emit: (part: CodePart) => void): void {
  if (line.length > LONG_LINE) {
    const done = cuts.long ?? 0;
    if (!done) flushCode(cuts, emit);
    for (let i = done; i < line.length; i += LONG_LINE) emit({ text: line.slice(i, i + LONG_LINE), plain: true });
    cuts.long = 0;
    return;
  }
  if (cuts.cur && (cuts.lines >= CODE_LINES || cuts.cur.length + line.length > CODE_CHARS)) flushCode(cuts, emit);
  cuts.cur += line;
  cuts.lines++;
}

/**
 * A line still being written, over LONG_LINE already: its whole pieces are what codeLine will cut, whatever
 * follows; they are emitted now.
 */
export function codeLongLine(cuts: CodeCuts, partial: string, emit: (part: CodePart) => void): void {
  if (partial.length <= LONG_LINE) return;
  let done = cuts.long ?? 0;
  if (!done) flushCode(cuts, emit);
  for (; done + LONG_LINE <= partial.length; done += LONG_LINE) emit({ text: partial.slice(done, done + LONG_LINE), plain: true });
  cuts.long = done;
}

/** The code ended with `last` (its last line, no newline): emits what is left. */
export function codeEnd(cuts: CodeCuts, last: string, emit: (part: CodePart) => void): void {
  if (last) codeLine(cuts, last, emit);
  flushCode(cuts, emit);
}

function flushCode(cuts: CodeCuts, emit: (part: CodePart) => void): void {
  if (cuts.cur) emit({ text: cuts.cur, plain: false });
  cuts.cur = '';
  cuts.lines = 0;
}

/** Feeds `text` (code, its last line without a newline) from `cuts` on; returns the parts. */
export function codeParts(text: string, cuts: CodeCuts = { cur: '', lines: 0 }): CodePart[] {
  const parts: CodePart[] = [];
  const emit = (p: CodePart) => parts.push(p);
  let pos = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', pos)) {
    codeLine(cuts, text.slice(pos, nl + 1), emit);
    pos = nl + 1;
  }
  codeEnd(cuts, text.slice(pos), emit);
  return parts;
}
