/**
 * Functions and methods of a file found in its text, for where no language server answers (the CLI): Python by
 * its `def` headers and indentation, the brace languages by their declaration headers and matching braces.
 * Then what the editor's commands derive from them: the target of a command, the range a docstring replaces.
 * 0-based ranges. No vscode.
 */
import type { TaskRange, TaskSymbol } from '../session/selectionTask';
import { docStyle } from './docstring';
import { comparePositions, isEmptyRange, linesOf, rangeContains, sameRange, wholeLines } from './textRanges';

const indentOf = (line: string) => /^[ \t]*/.exec(line)?.[0].length ?? 0;

function pythonFunctions(lines: string[]): TaskSymbol[] {
  const out: TaskSymbol[] = [];
  const classes: { indent: number; range: TaskRange }[] = [];
  // A block ends before the next non-blank line indented as deep or less.
  const endOf = (start: number, indent: number) => {
    let end = start;
    for (let l = start + 1; l < lines.length; l++) {
      if ((lines[l] ?? '').trim() === '') continue;
      if (indentOf(lines[l] ?? '') <= indent) break;
      end = l;
    }
    return end;
  };
  lines.forEach((text, l) => {
    const m = /^([ \t]*)(?:async\s+)?(def|class)\s+(\w+)/.exec(text);
    if (!m) return;
    const indent = m[1]?.length ?? 0;
    // Decorators above belong to the function.
    let start = l;
    while (start > 0 && /^\s*@/.test(lines[start - 1] ?? '')) start--;
    const end = endOf(l, indent);
    const range = { start: { line: start, character: indentOf(lines[start] ?? '') }, end: { line: end, character: (lines[end] ?? '').length } };
    if (m[2] === 'class') {
      classes.push({ indent, range });
      return;
    }
    const owner = classes.some((c) => c.indent < indent && rangeContains(c.range, range));
    out.push({ name: m[3] ?? '', kind: owner ? 'Method' : 'Function', range, children: [] });
  });
  return out;
}

const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'function', 'else', 'do', 'try', 'new', 'typeof', 'await']);
const FUNCTION_HEADERS: RegExp[] = [
  /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(\w+)/,
  /^\s*(?:export\s+)?(?:const|let|var)\s+(\w+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|\w+\s*=>)/,
  /^\s*func\s+(?:\([^)]*\)\s*)?(\w+)/,
  /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)/,
  // Methods, and C-family functions with a return type: a name, its parameters and `{` on the same line.
  /^\s*(?:[\w<>[\],.?*&:]+\s+)*?(\w+)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^{;]+|->\s*[^{;]+|throws\s+[^{;]+)?\{\s*(?:\/\/.*)?$/,
];
const CLASS_HEADER = /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:public\s+|final\s+)*(?:class|interface|struct|impl|trait)\s+(\w+)/;

/** Just past the `}` closing the body that opens at or after line `from` (or the `;` ending a bodiless arrow). */
function blockEnd(lines: string[], from: number): { line: number; character: number } | undefined {
  let depth = 0;
  let parens = 0;
  let opened = false;
  let quote: string | undefined;
  for (let l = from; l < lines.length; l++) {
    const text = lines[l] ?? '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = undefined;
        continue;
      }
      if (c === '/' && text[i + 1] === '/') break;
      if (c === '"' || c === "'" || c === '`') quote = c;
      else if (c === '(') parens++;
      else if (c === ')') parens--;
      else if (parens > 0)
        continue; // braces in a parameter list (types, defaults) do not open the body
      else if (c === '{') {
        depth++;
        opened = true;
      } else if (c === '}') {
        depth--;
        if (opened && depth === 0) return { line: l, character: i + 1 };
      } else if (c === ';' && !opened && parens === 0) return { line: l, character: i + 1 };
    }
    if (quote !== '`') quote = undefined;
  }
  return undefined;
}

function braceFunctions(lines: string[]): TaskSymbol[] {
  const out: TaskSymbol[] = [];
  const classes: TaskRange[] = [];
  lines.forEach((text, l) => {
    if (/^\s*(\/\/|\*|\/\*|#)/.test(text)) return;
    const cls = CLASS_HEADER.exec(text);
    if (cls) {
      const end = blockEnd(lines, l);
      if (end) classes.push({ start: { line: l, character: 0 }, end });
      return;
    }
    const name = FUNCTION_HEADERS.map((re) => re.exec(text)?.[1]).find((n) => n !== undefined);
    if (!name || KEYWORDS.has(name)) return;
    const end = blockEnd(lines, l);
    if (!end) return;
    let start = l;
    // Decorators and annotations above belong to the function.
    while (start > 0 && /^\s*@/.test(lines[start - 1] ?? '')) start--;
    const range = { start: { line: start, character: indentOf(lines[start] ?? '') }, end };
    const method = classes.some((c) => rangeContains(c, range));
    out.push({ name, kind: method ? 'Method' : 'Function', range, children: [] });
  });
  return out;
}

/** Every function and method of the text, in order of their start. */
export function functionsIn(text: string, languageId: string): TaskSymbol[] {
  const lines = linesOf(text);
  return languageId === 'python' ? pythonFunctions(lines) : braceFunctions(lines);
}

/** The innermost function containing `range`, with the functions inside it as its children (the service's `func_symbols`). */
export function functionAt(text: string, languageId: string, range: TaskRange): TaskSymbol | undefined {
  const all = functionsIn(text, languageId);
  const fn = all.filter((f) => rangeContains(f.range, range)).sort((a, b) => comparePositions(b.range.start, a.range.start))[0];
  if (!fn) return undefined;
  return { ...fn, children: all.filter((f) => f !== fn && rangeContains(fn.range, f.range)) };
}

/**
 * What a selection command works on, as the editor takes it: a selection ending at column 0 of a line does not
 * take that line; an empty one is the function at the cursor, else the cursor's line.
 */
export function commandTarget(text: string, languageId: string, selected: TaskRange): { range: TaskRange; fn?: TaskSymbol } {
  const lines = linesOf(text);
  let range = selected;
  if (range.end.character === 0 && range.end.line > range.start.line) {
    const last = range.end.line - 1;
    range = { start: range.start, end: { line: last, character: lines[last]?.length ?? 0 } };
  }
  const fn = functionAt(text, languageId, range);
  if (!isEmptyRange(range)) return { range, ...(fn ? { fn } : {}) };
  if (fn) return { range: fn.range, fn };
  return { range: wholeLines(text, range.start.line, range.start.line) };
}

/**
 * The range a docstring replaces: the whole function around a partial selection, with the doc comment right
 * above it (`/** … *\/` or `//` lines), or the function's first line taken whole so the comment lands at its indentation.
 */
export function docstringRange(text: string, languageId: string, range: TaskRange, fn?: TaskSymbol): TaskRange {
  const lines = linesOf(text);
  const widened = fn && !sameRange(range, fn.range) && rangeContains(fn.range, range) ? fn.range : range;
  const style = docStyle(languageId);
  if (style === 'python') return widened;
  const above = (start: number): TaskRange => ({ start: { line: start, character: 0 }, end: widened.end });
  let line = widened.start.line - 1;
  if (line >= 0 && style === 'block' && /\*\/\s*$/.test(lines[line] ?? '')) {
    while (line > 0 && !/^\s*\/\*\*/.test(lines[line] ?? '')) line--;
    if (/^\s*\/\*\*/.test(lines[line] ?? '')) return above(line);
    return widened;
  }
  if (line >= 0 && style === 'line' && /^\s*\/\//.test(lines[line] ?? '')) {
    while (line > 0 && /^\s*\/\//.test(lines[line - 1] ?? '')) line--;
    return above(line);
  }
  const first = lines[widened.start.line] ?? '';
  return widened.start.character > 0 && first.slice(0, widened.start.character).trim() === '' ? above(widened.start.line) : widened;
}
