/**
 * Docstrings the devchat way: the agent sees the function with its body replaced by `...`, returns it with a
 * documentation comment, and only that comment is spliced back into the original code — so the body can
 * never change (and `bodyUnchanged` checks it before anything is offered). No vscode.
 */

export type DocStyle = 'python' | 'block' | 'line';

/** Python: a docstring inside; C-family: a `/** *\/` block above; Go and Rust: `//` / `///` lines above. */
export function docStyle(languageId: string): DocStyle {
  if (languageId === 'python') return 'python';
  if (languageId === 'go' || languageId === 'rust') return 'line';
  return 'block';
}

const indentOf = (line: string) => /^[ \t]*/.exec(line)?.[0] ?? '';

/** Index just past the `:` that ends a Python `def`/`class` header (brackets and strings skipped), or -1. */
function pythonHeaderEnd(code: string): number {
  const start = /^[ \t]*(async[ \t]+)?(def|class)\b/m.exec(code);
  if (!start) return -1;
  let depth = 0;
  let quote: string | undefined;
  for (let i = start.index; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ':' && depth === 0) {
      // `-> dict[str, int]:` — the colon that ends the header is followed by a newline or a comment.
      const rest = code.slice(i + 1).split('\n')[0] ?? '';
      if (/^\s*(#.*)?$/.test(rest)) return i + 1 + rest.length;
    }
  }
  return -1;
}

/** Index of the `{` opening a C-family function body: the first at depth 0 after the parameter list, or -1. */
function braceBodyStart(code: string): number {
  const open = code.indexOf('(');
  if (open < 0) return -1;
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '{' && depth === 0) return i;
  }
  return -1;
}

/** Leading doc comment of C-family code: a `/** … *\/` block or `//` lines at the top (with the blank lines after). */
function leadingComment(code: string, style: DocStyle): { comment: string; rest: string } {
  if (style === 'block') {
    const m = /^(\s*\/\*\*[\s\S]*?\*\/[ \t]*\r?\n)/.exec(code);
    if (m?.[1]) return { comment: m[1], rest: code.slice(m[1].length) };
  } else if (style === 'line') {
    const m = /^((?:[ \t]*\/\/.*\r?\n)+)/.exec(code);
    if (m?.[1]) return { comment: m[1], rest: code.slice(m[1].length) };
  }
  return { comment: '', rest: code };
}

/** Python: the docstring that is the first statement of the body (with its line break), if any. */
function pythonDocstring(code: string): { start: number; end: number } | undefined {
  const header = pythonHeaderEnd(code);
  if (header < 0) return undefined;
  const m = /^\r?\n([ \t]*)(?:[rRuU]?)("""|''')[\s\S]*?\2[ \t]*(?=\r?\n|$)/.exec(code.slice(header));
  if (!m) return undefined;
  return { start: header, end: header + m[0].length };
}

/** The function with its body replaced by `...` (what the agent sees); an existing doc comment is dropped. */
export function stubFunction(code: string, languageId: string): string {
  const style = docStyle(languageId);
  const clean = withoutDocComment(code, languageId);
  if (style === 'python') {
    const end = pythonHeaderEnd(clean);
    if (end < 0) return clean.trimEnd();
    const bodyLine =
      clean
        .slice(end)
        .split('\n')
        .find((l) => l.trim() !== '') ?? '';
    const indent = indentOf(bodyLine) || `${indentOf(clean.slice(clean.lastIndexOf('\n', end - 1) + 1))}    `;
    return `${clean.slice(0, end).replace(/^\s*\n/, '')}\n${indent}...`;
  }
  const brace = braceBodyStart(clean);
  if (brace < 0) return clean.trimEnd();
  const lineStart = clean.lastIndexOf('\n', brace) + 1;
  const indent = indentOf(clean.slice(lineStart));
  return `${clean.slice(0, brace + 1).replace(/^\s*\n/, '')}\n${indent}    ...\n${indent}}`;
}

/** The doc comment in the agent's answer (the stub with documentation), normalised to no indentation. */
export function extractDocComment(answerCode: string, languageId: string): string | undefined {
  const style = docStyle(languageId);
  if (style === 'python') {
    const range = pythonDocstring(answerCode);
    if (!range) return undefined;
    return dedent(answerCode.slice(range.start, range.end).replace(/^\r?\n/, ''));
  }
  // The comment right above the declaration (decorators / annotations may sit between).
  const lines = answerCode.split(/\r?\n/);
  const decl = lines.findIndex((l) => /\(/.test(l) && !/^\s*(\/\/|\*|\/\*|@)/.test(l));
  if (decl < 0) return undefined;
  let end = decl;
  while (end > 0 && /^\s*@/.test(lines[end - 1] ?? '')) end--;
  let start = end;
  if (style === 'block') {
    if (!/\*\/\s*$/.test(lines[end - 1] ?? '')) return undefined;
    start = end - 1;
    while (start > 0 && !/^\s*\/\*\*/.test(lines[start] ?? '')) start--;
    if (!/^\s*\/\*\*/.test(lines[start] ?? '')) return undefined;
  } else {
    while (start > 0 && /^\s*\/\//.test(lines[start - 1] ?? '')) start--;
    if (start === end) return undefined;
  }
  return dedent(lines.slice(start, end).join('\n'));
}

function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines.filter((l) => l.trim() !== '').map((l) => indentOf(l).length);
  const min = Math.min(...indents);
  // A Python docstring's first line carries the indentation the later lines share.
  return lines.map((l) => l.slice(Math.min(min, indentOf(l).length))).join('\n');
}

function indentLines(text: string, indent: string): string {
  return text
    .split('\n')
    .map((l) => (l.trim() === '' ? '' : indent + l))
    .join('\n');
}

/** The original code with `doc` as its documentation comment (replacing an existing one). */
export function spliceDocComment(original: string, doc: string, languageId: string): string {
  const style = docStyle(languageId);
  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  const code = withoutDocComment(original, languageId);
  if (style === 'python') {
    const end = pythonHeaderEnd(code);
    if (end < 0) throw new Error('no def or class header found');
    const bodyLine =
      code
        .slice(end)
        .split('\n')
        .find((l) => l.trim() !== '') ?? '';
    const headerLine = code.slice(code.lastIndexOf('\n', end - 1) + 1);
    const indent = bodyLine ? indentOf(bodyLine) : `${indentOf(headerLine)}    `;
    return code.slice(0, end) + eol + indentLines(doc, indent).replace(/\n/g, eol) + code.slice(end);
  }
  const firstCodeLine = code.split('\n').find((l) => l.trim() !== '') ?? '';
  const lead = /^\s*\n/.exec(code)?.[0] ?? '';
  const body = code.slice(lead.length);
  const indent = indentOf(firstCodeLine);
  return lead + indentLines(doc, indent).replace(/\n/g, eol) + eol + body;
}

/** The code without its documentation comment (what must stay byte-identical). */
export function withoutDocComment(code: string, languageId: string): string {
  const style = docStyle(languageId);
  if (style === 'python') {
    const range = pythonDocstring(code);
    return range ? code.slice(0, range.start) + code.slice(range.end) : code;
  }
  const lead = /^\s*\n/.exec(code)?.[0] ?? '';
  const { rest } = leadingComment(code.slice(lead.length), style);
  return lead + rest;
}

/** True when `proposed` differs from `original` only in the documentation comment. */
export function bodyUnchanged(original: string, proposed: string, languageId: string): boolean {
  return withoutDocComment(original, languageId) === withoutDocComment(proposed, languageId);
}
