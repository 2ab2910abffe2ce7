/**
 * The IDE lookups the editor offers agents (devchat-compatible shapes, 0-based positions), declared once:
 * the VS Code provider (src/host/vscode/ideToolProvider.ts) implements them, pi RPC agents get them through
 * `set_host_tools`, ACP agents through the MCP bridge. Also the bounds every result is held to. No vscode.
 */
import type { HostToolDefinition, HostToolResult } from '../session/hostTools';

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}
export interface IdeSymbolNode {
  name: string;
  /** SymbolKind name, e.g. "Function". */
  kind: string;
  range: Range;
  selectionRange: Range;
  children: IdeSymbolNode[];
}
export interface IdeLocation {
  abspath: string;
  range: Range;
}
export interface RangeWithText {
  abspath: string;
  range: Range;
  text: string;
}

export const IDE_LIMITS = {
  /** Symbol nodes per file, counted through the whole tree. */
  symbols: 2000,
  locations: 100,
  diagnostics: 500,
  /** Characters of selected / visible text. */
  text: 64 * 1024,
  /** Characters of one tool result. */
  result: 256 * 1024,
};

const positionArgs = {
  abspath: { type: 'string', description: 'Absolute path of the source file' },
  line: { type: 'integer', minimum: 0, description: '0-based line' },
  character: { type: 'integer', minimum: 0, description: '0-based character in the line' },
};

export const IDE_TOOL_DEFINITIONS: HostToolDefinition[] = [
  {
    name: 'get_document_symbols',
    label: 'Document symbols',
    description: 'The symbol tree of a source file from the editor\'s language features: [{name, kind (e.g. "Function"), range, selectionRange, children}], 0-based positions.',
    parameters: { type: 'object', properties: { abspath: positionArgs.abspath }, required: ['abspath'], additionalProperties: false },
  },
  {
    name: 'find_def_locations',
    label: 'Find definitions',
    description: 'Where the symbol at a 0-based position is defined: [{abspath, range}].',
    parameters: { type: 'object', properties: positionArgs, required: ['abspath', 'line', 'character'], additionalProperties: false },
  },
  {
    name: 'find_type_def_locations',
    label: 'Find type definitions',
    description: 'Where the type of the symbol at a 0-based position is defined: [{abspath, range}].',
    parameters: { type: 'object', properties: positionArgs, required: ['abspath', 'line', 'character'], additionalProperties: false },
  },
  {
    name: 'get_selected_range',
    label: 'Selection',
    description: 'The selection in the active editor: {abspath, range, text}, or null when no editor is active.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'get_visible_range',
    label: 'Visible code',
    description: 'The code visible in the active editor: {abspath, range, text}, or null when no editor is active.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'get_diagnostics',
    label: 'Diagnostics',
    description: 'Errors and warnings the editor reports, for one file or (without abspath) the whole workspace: [{abspath, range, severity, message, source, code}].',
    parameters: { type: 'object', properties: { abspath: positionArgs.abspath }, additionalProperties: false },
  },
  {
    name: 'ide_language',
    label: 'IDE language',
    description: 'The language of the editor\'s user interface, e.g. "en" or "zh-cn".',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
];

/** Keeps at most `max` nodes of a tree (depth first); returns the kept tree and whether anything was cut. */
export function limitTree<T extends { children: T[] }>(nodes: T[], max: number): { nodes: T[]; truncated: boolean } {
  let left = max;
  let truncated = false;
  const walk = (list: T[]): T[] => {
    const out: T[] = [];
    for (const n of list) {
      if (left <= 0) {
        truncated = true;
        break;
      }
      left--;
      out.push({ ...n, children: walk(n.children) });
    }
    return out;
  };
  return { nodes: walk(nodes), truncated };
}

/** Cuts text to `max` characters (never inside a surrogate pair), saying so. */
export function limitText(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true };
}

/** A tool result carrying `value` as JSON, held to IDE_LIMITS.result characters. */
export function jsonResult(value: unknown, note?: string): HostToolResult {
  const json = JSON.stringify(value);
  const { text, truncated } = limitText(json, IDE_LIMITS.result);
  const notes = [note, truncated ? `result cut at ${IDE_LIMITS.result} characters` : undefined].filter(Boolean);
  return { content: [{ type: 'text', text: notes.length ? `${text}\n(${notes.join('; ')})` : text }] };
}
