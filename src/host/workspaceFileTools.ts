/**
 * Host tools over plain files, for hosts without an editor (the CLI, tests): `read_project_file`, and
 * `get_document_symbols` with the IDE tool's own definition and result shape (src/host/ideTools.ts), from a
 * line-pattern outline instead of a language server. Paths outside the workspace are refused.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { HostToolProvider } from '../session/hostTools';
import { IDE_TOOL_DEFINITIONS, type IdeSymbolNode } from './ideTools';
import { resolveInWorkspace } from './workspacePaths';

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

/** Top-level declarations of a TypeScript/JavaScript/Python file, in the IDE tool's shape (0-based). */
export function outlineSymbols(text: string): IdeSymbolNode[] {
  const out: IdeSymbolNode[] = [];
  text.split('\n').forEach((line, i) => {
    for (const { kind, re } of SYMBOL_PATTERNS) {
      const m = re.exec(line);
      if (!m?.[1]) continue;
      const character = line.indexOf(m[1]);
      const end = { line: i, character: character + m[1].length };
      out.push({
        name: m[1],
        kind,
        range: { start: { line: i, character: 0 }, end },
        selectionRange: { start: { line: i, character }, end },
        children: [],
      });
      break;
    }
  });
  return out;
}

const SYMBOLS_TOOL = IDE_TOOL_DEFINITIONS.find((d) => d.name === 'get_document_symbols')!;

/** `read_project_file` and `get_document_symbols` over the files inside `root`. */
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
      SYMBOLS_TOOL,
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
