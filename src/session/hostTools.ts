/**
 * Tools the host (the editor) offers to the agent, whatever the protocol: pi RPC registers them with
 * `set_host_tools` and answers `host_tool_call`; the ACP side can serve the same provider through MCP.
 * Node-only (no `vscode`): the extension supplies a provider backed by the editor's language services,
 * the CLI and tests use `workspaceFileTools` below.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { resolveInWorkspace } from '../host/workspacePaths';

export interface HostToolDefinition {
  name: string;
  label: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

export interface HostToolContent {
  type: 'text';
  text: string;
}

export interface HostToolResult {
  content: HostToolContent[];
  isError?: boolean;
}

export interface HostToolProvider {
  definitions(): HostToolDefinition[];
  /**
   * Runs one tool. `signal` aborts when the agent cancels the call; `onUpdate` streams partial output.
   * A thrown error is reported to the agent as an error result.
   */
  call(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onUpdate: (partial: HostToolResult) => void,
  ): Promise<HostToolResult>;
}

export interface SymbolNode {
  name: string;
  kind: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  children: SymbolNode[];
}

const SYMBOL_PATTERNS: { kind: string; re: RegExp }[] = [
  { kind: 'Class', re: /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/ },
  { kind: 'Interface', re: /^\s*(?:export\s+)?interface\s+([A-Za-z_$][\w$]*)/ },
  { kind: 'Function', re: /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/ },
  { kind: 'Variable', re: /^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)/ },
  { kind: 'Enum', re: /^\s*(?:export\s+)?(?:const\s+)?enum\s+([A-Za-z_$][\w$]*)/ },
  { kind: 'TypeParameter', re: /^\s*(?:export\s+)?type\s+([A-Za-z_$][\w$]*)\s*[=<]/ },
  { kind: 'Function', re: /^def\s+([A-Za-z_]\w*)/ },
  { kind: 'Class', re: /^class\s+([A-Za-z_]\w*)/ },
  { kind: 'Method', re: /^\s+(?:async\s+)?def\s+([A-Za-z_]\w*)/ },
];

/**
 * A line-pattern outline of a source file (TypeScript/JavaScript/Python top-level declarations), in the
 * devchat `get_document_symbols` shape. A stand-in for the editor's symbol provider outside VS Code.
 */
export function outlineSymbols(text: string): SymbolNode[] {
  const out: SymbolNode[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const { kind, re } of SYMBOL_PATTERNS) {
      const m = re.exec(line);
      if (!m || !m[1]) continue;
      const character = line.indexOf(m[1]);
      out.push({
        name: m[1],
        kind,
        range: { start: { line: i, character: 0 }, end: { line: i, character: character + m[1].length } },
        children: [],
      });
      break;
    }
  });
  return out;
}

/**
 * Two read-only tools over files inside `root`: `read_project_file` and `get_document_symbols`.
 * Paths may be absolute or relative to `root`; anything outside `root` is refused.
 */
export function workspaceFileTools(root: string): HostToolProvider {
  const resolve = (p: unknown): string => {
    if (typeof p !== 'string' || !p) throw new Error('"path" must be a non-empty string');
    return resolveInWorkspace(p, [root]);
  };
  return {
    definitions: () => [
      {
        name: 'read_project_file',
        label: 'Read project file',
        description: 'Read a text file of the open project in the editor (unsaved changes included).',
        parameters: {
          type: 'object',
          properties: { path: { type: 'string', description: 'File path, absolute or relative to the project root' } },
          required: ['path'],
          additionalProperties: false,
        },
      },
      {
        name: 'get_document_symbols',
        label: 'Document symbols',
        description: 'List the symbols (classes, functions, variables) declared in a source file of the project, with 0-based ranges.',
        parameters: {
          type: 'object',
          properties: { abspath: { type: 'string', description: 'Absolute path of the source file' } },
          required: ['abspath'],
          additionalProperties: false,
        },
      },
    ],
    async call(name, args, signal, onUpdate) {
      if (signal.aborted) throw new Error('cancelled');
      switch (name) {
        case 'read_project_file': {
          const file = resolve(args.path);
          onUpdate({ content: [{ type: 'text', text: `Reading ${path.relative(root, file) || file}…` }] });
          const text = await fs.readFile(file, { encoding: 'utf8', signal });
          return { content: [{ type: 'text', text }] };
        }
        case 'get_document_symbols': {
          const file = resolve(args.abspath ?? args.path);
          onUpdate({ content: [{ type: 'text', text: `Outlining ${path.relative(root, file) || file}…` }] });
          const text = await fs.readFile(file, { encoding: 'utf8', signal });
          return { content: [{ type: 'text', text: JSON.stringify(outlineSymbols(text)) }] };
        }
        default:
          return { content: [{ type: 'text', text: `Unknown host tool: ${name}` }], isError: true };
      }
    },
  };
}
