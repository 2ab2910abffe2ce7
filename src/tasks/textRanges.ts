/**
 * A file's text without an editor: 0-based positions (end exclusive, VS Code's convention), the text of a
 * range, whole lines, the code around a selection, and the language of a file by its name. No vscode.
 */
import type { TaskPosition, TaskRange, TextContext } from '../session/selectionTask';

/** The lines of `text` without their line breaks (a final newline gives a last, empty line, as in an editor). */
export function linesOf(text: string): string[] {
  return text.split('\n').map((l) => l.replace(/\r$/, ''));
}

export function offsetAt(text: string, pos: TaskPosition): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  return offset + pos.character;
}

export function textIn(text: string, range: TaskRange): string {
  return text.slice(offsetAt(text, range.start), offsetAt(text, range.end));
}

/** `text` with `range` replaced by `replacement`. */
export function replaceRange(text: string, range: TaskRange, replacement: string): string {
  return text.slice(0, offsetAt(text, range.start)) + replacement + text.slice(offsetAt(text, range.end));
}

export function comparePositions(a: TaskPosition, b: TaskPosition): number {
  return a.line - b.line || a.character - b.character;
}

export function rangeContains(outer: TaskRange, inner: TaskRange): boolean {
  return comparePositions(outer.start, inner.start) <= 0 && comparePositions(inner.end, outer.end) <= 0;
}

export function isEmptyRange(range: TaskRange): boolean {
  return comparePositions(range.start, range.end) === 0;
}

export function sameRange(a: TaskRange, b: TaskRange): boolean {
  return comparePositions(a.start, b.start) === 0 && comparePositions(a.end, b.end) === 0;
}

/** From the start of line `first` to the end of line `last` (clipped to the text). */
export function wholeLines(text: string, first: number, last: number): TaskRange {
  const lines = linesOf(text);
  const end = Math.max(0, Math.min(last, lines.length - 1));
  return { start: { line: Math.max(0, Math.min(first, end)), character: 0 }, end: { line: end, character: lines[end]?.length ?? 0 } };
}

/** The whole text as a range. */
export function wholeText(text: string): TaskRange {
  return wholeLines(text, 0, Number.MAX_SAFE_INTEGER);
}

/** Lines the CLI takes as "the code visible around" a selection: headless there is no viewport. */
export const VISIBLE_MARGIN = 20;

/** The selection widened by `margin` whole lines each side, clipped to the file: the stand-in for the editor's visible code. */
export function visibleRange(text: string, range: TaskRange, margin = VISIBLE_MARGIN): TaskRange {
  return wholeLines(text, range.start.line - margin, range.end.line + margin);
}

export function textContext(text: string, filepath: string, range: TaskRange): TextContext {
  return { filepath, range, text: textIn(text, range) };
}

const EXTENSIONS: Record<string, string> = {
  py: 'python',
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'typescriptreact',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascriptreact',
  go: 'go',
  rs: 'rust',
  java: 'java',
  kt: 'kotlin',
  cs: 'csharp',
  cpp: 'cpp',
  cc: 'cpp',
  hpp: 'cpp',
  c: 'c',
  h: 'c',
  php: 'php',
  rb: 'ruby',
  swift: 'swift',
};

/** VS Code's language id for a file name ('plaintext' when the extension is not known). */
export function languageIdOf(filepath: string): string {
  const ext = /\.([^./\\]+)$/.exec(filepath)?.[1]?.toLowerCase() ?? '';
  return EXTENSIONS[ext] ?? 'plaintext';
}
