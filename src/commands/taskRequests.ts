/**
 * The selection commands' structured requests (src/session/selectionTask.ts) read from the editor: what an
 * agent that runs the tasks itself (the agent service's `exec_*`) receives instead of the prompt. Positions are
 * 0-based, paths absolute; the visible text is the editor's visible lines, else the selection itself.
 */
import * as vscode from 'vscode';
import type { TaskRange, TaskSymbol, TextContext } from '../session/selectionTask';
import type { CodeContext } from './promptParts';

export function taskRange(range: vscode.Range | CodeContext['range']): TaskRange {
  return { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } };
}

export function textContext(context: CodeContext): TextContext {
  return { filepath: context.filepath, range: taskRange(context.range), text: context.text };
}

/** The symbols of `document` within `range` (the function under test and what it declares), as SymbolKind names. */
export async function symbolsIn(document: vscode.TextDocument, range: vscode.Range): Promise<TaskSymbol[]> {
  let found: (vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined;
  try {
    found = await vscode.commands.executeCommand('vscode.executeDocumentSymbolProvider', document.uri);
  } catch {
    found = undefined;
  }
  const convert = (s: vscode.DocumentSymbol): TaskSymbol => ({ name: s.name, kind: vscode.SymbolKind[s.kind] ?? String(s.kind), range: taskRange(s.range), children: s.children.map(convert) });
  const within = (list: vscode.DocumentSymbol[]): TaskSymbol[] => list.flatMap((s) => (range.contains(s.range) ? [convert(s)] : s.range.intersection(range) ? within(s.children) : []));
  return within((found ?? []).filter((s): s is vscode.DocumentSymbol => 'children' in s));
}
