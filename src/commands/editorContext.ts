/**
 * The code context of a selection command, read through the editor (unsaved edits included): the target
 * range, the selection and visible text as `{filepath, range, text}`, and for tests the symbol context — the
 * enclosing class and the definitions (and type definitions) of the symbols the code uses.
 */
import * as vscode from 'vscode';
import type { CodeContext } from '../tasks/promptParts';

const FUNCTION_KINDS = new Set([vscode.SymbolKind.Function, vscode.SymbolKind.Method, vscode.SymbolKind.Constructor]);
const CONTAINER_KINDS = new Set([vscode.SymbolKind.Class, vscode.SymbolKind.Interface, vscode.SymbolKind.Struct]);

export interface FunctionSymbol {
  name: string;
  kind: vscode.SymbolKind;
  range: vscode.Range;
  /** The class (or interface) it belongs to, when it is a method. */
  container?: { name: string; range: vscode.Range };
}

export function toContext(label: string, document: vscode.TextDocument, range: vscode.Range): CodeContext {
  return {
    label,
    filepath: document.uri.fsPath,
    range: {
      start: { line: range.start.line, character: range.start.character },
      end: { line: range.end.line, character: range.end.character },
    },
    text: document.getText(range),
    languageId: document.languageId,
  };
}

async function documentSymbols(uri: vscode.Uri): Promise<vscode.DocumentSymbol[]> {
  try {
    const result = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>('vscode.executeDocumentSymbolProvider', uri);
    return (result ?? []).filter((s): s is vscode.DocumentSymbol => 'children' in s);
  } catch {
    return [];
  }
}

/** Python without a language server still gets functions: `def` headers, ended by the next line indented as deep or less. */
function pythonFunctions(document: vscode.TextDocument): FunctionSymbol[] {
  const out: FunctionSymbol[] = [];
  const classes: { name: string; indent: number; start: number }[] = [];
  const lineCount = document.lineCount;
  const indentAt = (l: number) => /^[ \t]*/.exec(document.lineAt(l).text)?.[0].length ?? 0;
  const endOf = (start: number, indent: number) => {
    let end = start;
    for (let l = start + 1; l < lineCount; l++) {
      const text = document.lineAt(l).text;
      if (text.trim() === '') continue;
      if (indentAt(l) <= indent) break;
      end = l;
    }
    return end;
  };
  for (let l = 0; l < lineCount; l++) {
    const text = document.lineAt(l).text;
    const m = /^([ \t]*)(async\s+)?(def|class)\s+(\w+)/.exec(text);
    if (!m) continue;
    const indent = m[1]?.length ?? 0;
    // Decorators above belong to the function.
    let start = l;
    while (start > 0 && /^\s*@/.test(document.lineAt(start - 1).text)) start--;
    const end = endOf(l, indent);
    const range = new vscode.Range(start, indentAt(start), end, document.lineAt(end).text.length);
    if (m[3] === 'class') {
      classes.push({ name: m[4] ?? '', indent, start: l });
      continue;
    }
    const owner = [...classes].reverse().find((c) => c.indent < indent && endOf(c.start, c.indent) >= l);
    out.push({
      name: m[4] ?? '',
      kind: owner ? vscode.SymbolKind.Method : vscode.SymbolKind.Function,
      range,
      ...(owner ? { container: { name: owner.name, range: new vscode.Range(owner.start, 0, endOf(owner.start, owner.indent), 0) } } : {}),
    });
  }
  return out;
}

/** Every function and method of the document, from its symbol provider (or the Python fallback). */
export async function functionSymbols(document: vscode.TextDocument): Promise<FunctionSymbol[]> {
  const out: FunctionSymbol[] = [];
  const walk = (symbols: vscode.DocumentSymbol[], container?: vscode.DocumentSymbol) => {
    for (const s of symbols) {
      if (FUNCTION_KINDS.has(s.kind)) {
        out.push({ name: s.name, kind: s.kind, range: s.range, ...(container ? { container: { name: container.name, range: container.range } } : {}) });
        // Callbacks and helpers inside a function are part of it, not targets of their own.
        continue;
      }
      walk(s.children, CONTAINER_KINDS.has(s.kind) ? s : container);
    }
  };
  walk(await documentSymbols(document.uri));
  if (out.length === 0 && document.languageId === 'python') return pythonFunctions(document);
  return out;
}

/** The innermost function containing `range`, if any. */
export async function enclosingFunction(document: vscode.TextDocument, range: vscode.Range): Promise<FunctionSymbol | undefined> {
  const containing = (await functionSymbols(document)).filter((f) => f.range.contains(range));
  return containing.sort((a, b) => b.range.start.compareTo(a.range.start))[0];
}

/** Whole lines from the start of `range`'s first line to the end of its last. */
function fullLines(document: vscode.TextDocument, range: vscode.Range): vscode.Range {
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line - 1 : range.end.line;
  return new vscode.Range(range.start.line, 0, last, document.lineAt(last).text.length);
}

export interface Target {
  document: vscode.TextDocument;
  /** What the command works on (the selection, else the function at the cursor, else the line). */
  range: vscode.Range;
  fn?: FunctionSymbol;
}

/**
 * What a command works on. Called from the context menu, CodeLens or a code action with (uri, range);
 * from the palette or a keybinding with nothing: then the active editor's selection.
 */
export async function resolveTarget(uri: unknown, range: unknown): Promise<Target | undefined> {
  let document: vscode.TextDocument;
  let selected: vscode.Range;
  const editor = vscode.window.activeTextEditor;
  if (uri instanceof vscode.Uri && range instanceof vscode.Range) {
    document = await vscode.workspace.openTextDocument(uri);
    selected = range;
  } else if (editor && (!(uri instanceof vscode.Uri) || uri.toString() === editor.document.uri.toString())) {
    document = editor.document;
    selected = editor.selection;
  } else if (uri instanceof vscode.Uri) {
    document = await vscode.workspace.openTextDocument(uri);
    selected = new vscode.Range(0, 0, 0, 0);
  } else {
    return undefined;
  }
  // Whole lines selected with the keyboard end at column 0 of the next line: that line is not part of it.
  if (selected.end.character === 0 && selected.end.line > selected.start.line) {
    const last = selected.end.line - 1;
    selected = new vscode.Range(selected.start, new vscode.Position(last, document.lineAt(last).text.length));
  }
  const fn = await enclosingFunction(document, selected);
  if (!selected.isEmpty) return { document, range: selected, ...(fn ? { fn } : {}) };
  if (fn) return { document, range: fn.range, fn };
  return { document, range: document.lineAt(selected.start.line).range };
}

/** The text visible in the editor showing `document` (first to last visible line), or undefined. */
export function visibleContext(document: vscode.TextDocument): CodeContext | undefined {
  const editor = vscode.window.visibleTextEditors.find((e) => e.document === document);
  const ranges = editor?.visibleRanges ?? [];
  const first = ranges[0];
  const last = ranges[ranges.length - 1];
  if (!first || !last) return undefined;
  return toContext('visible code', document, fullLines(document, new vscode.Range(first.start, last.end)));
}

const KEYWORDS = new Set(
  (
    'def class return if else elif for while in not and or is None True False self import from as with try except finally raise ' +
    'lambda yield pass break continue global nonlocal assert del async await function const let var new this typeof instanceof ' +
    'export default extends implements interface type enum public private protected static readonly null undefined true false ' +
    'void number string boolean any unknown never of case switch catch throw super get set'
  ).split(' '),
);

async function locations(command: string, uri: vscode.Uri, position: vscode.Position): Promise<vscode.Location[]> {
  try {
    const result = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(command, uri, position);
    return (result ?? []).map((l) => ('targetUri' in l ? new vscode.Location(l.targetUri, l.targetRange) : l));
  } catch {
    return [];
  }
}

/**
 * Symbol context for the unit-test prompt: the enclosing class, and the definitions and type definitions
 * (other files of the workspace included) of the identifiers the code uses. Bounded in count and time.
 */
export async function symbolContext(target: Target, max = 8, budgetMs = 4000): Promise<CodeContext[]> {
  const { document, range } = target;
  const out: CodeContext[] = [];
  const seen = new Set<string>();
  const deadline = Date.now() + budgetMs;
  if (target.fn?.container) {
    const container = target.fn.container.range;
    out.push(toContext(`enclosing class ${target.fn.container.name}`, document, fullLines(document, container)));
    seen.add(`${document.uri.toString()}#${container.start.line}`);
  }
  const text = document.getText(range);
  const base = document.offsetAt(range.start);
  const names = new Map<string, number>();
  for (const m of text.matchAll(/[A-Za-z_$][\w$]*/g)) {
    if (!KEYWORDS.has(m[0]) && !names.has(m[0]) && m.index !== undefined) names.set(m[0], m.index);
  }
  for (const [name, offset] of names) {
    if (out.length >= max || Date.now() > deadline) break;
    const position = document.positionAt(base + offset);
    const found = [...(await locations('vscode.executeDefinitionProvider', document.uri, position)), ...(await locations('vscode.executeTypeDefinitionProvider', document.uri, position))];
    for (const loc of found) {
      if (out.length >= max) break;
      if (loc.uri.toString() === document.uri.toString() && range.contains(loc.range)) continue;
      if (!vscode.workspace.getWorkspaceFolder(loc.uri)) continue;
      if (/[\\/]node_modules[\\/]/.test(loc.uri.fsPath)) continue;
      const doc = await vscode.workspace.openTextDocument(loc.uri);
      // The whole declaration when the provider knows it, else a few lines from the definition.
      const fns = await documentSymbols(loc.uri);
      const decl = flatten(fns)
        .filter((s) => s.range.contains(loc.range))
        .sort((a, b) => b.range.start.compareTo(a.range.start))[0];
      const declRange = decl && decl.range.end.line - decl.range.start.line < 80 ? decl.range : new vscode.Range(loc.range.start.line, 0, Math.min(doc.lineCount - 1, loc.range.start.line + 12), 0);
      const key = `${loc.uri.toString()}#${declRange.start.line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(toContext(`definition of ${name}`, doc, fullLines(doc, declRange)));
    }
  }
  return out;
}

function flatten(symbols: vscode.DocumentSymbol[]): vscode.DocumentSymbol[] {
  return symbols.flatMap((s) => [s, ...flatten(s.children)]);
}
