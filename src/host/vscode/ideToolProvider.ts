import * as vscode from 'vscode';
import type { HostToolProvider, HostToolResult } from '../../session/hostTools';
import { IDE_LIMITS, IDE_TOOL_DEFINITIONS, jsonResult, limitText, limitTree, type IdeLocation, type IdeSymbolNode, type Range, type RangeWithText } from '../ideTools';
import { resolveInWorkspace } from '../workspacePaths';

const range = (r: vscode.Range): Range => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

function symbolNode(s: vscode.DocumentSymbol | vscode.SymbolInformation): IdeSymbolNode {
  if ('children' in s) {
    return { name: s.name, kind: vscode.SymbolKind[s.kind], range: range(s.range), selectionRange: range(s.selectionRange), children: s.children.map(symbolNode) };
  }
  return { name: s.name, kind: vscode.SymbolKind[s.kind], range: range(s.location.range), selectionRange: range(s.location.range), children: [] };
}

function location(l: vscode.Location | vscode.LocationLink): IdeLocation {
  return 'targetUri' in l ? { abspath: l.targetUri.fsPath, range: range(l.targetRange) } : { abspath: l.uri.fsPath, range: range(l.range) };
}

function int(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`"${name}" must be a 0-based integer`);
  return v;
}

/** What get_selected_range / get_visible_range answer for an editor whose document is not a workspace file. */
const NOT_IN_WORKSPACE: HostToolResult = {
  content: [{ type: 'text', text: 'The active editor is not showing a file in the workspace folders: its text is not shared.' }],
  isError: true,
};

/**
 * The IDE lookups, answered by the editor's language features; inputs confined to the workspace folders, and
 * the selection / visible text only of editors showing a workspace file.
 */
export class IdeToolProvider implements HostToolProvider {
  constructor(private readonly roots: () => readonly string[]) {}

  definitions() {
    return IDE_TOOL_DEFINITIONS;
  }

  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<HostToolResult> {
    if (signal.aborted) throw new Error('cancelled');
    switch (name) {
      case 'get_document_symbols': {
        const uri = await this.open(args.abspath);
        const raw = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>('vscode.executeDocumentSymbolProvider', uri);
        const { nodes, truncated } = limitTree((raw ?? []).map(symbolNode), IDE_LIMITS.symbols);
        return jsonResult(nodes, truncated ? `only the first ${IDE_LIMITS.symbols} symbols` : undefined);
      }
      case 'find_def_locations':
      case 'find_type_def_locations': {
        const uri = await this.open(args.abspath);
        const pos = new vscode.Position(int(args.line, 'line'), int(args.character, 'character'));
        const command = name === 'find_def_locations' ? 'vscode.executeDefinitionProvider' : 'vscode.executeTypeDefinitionProvider';
        const raw = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(command, uri, pos);
        const all = (raw ?? []).map(location);
        return jsonResult(all.slice(0, IDE_LIMITS.locations), all.length > IDE_LIMITS.locations ? `${all.length} locations, first ${IDE_LIMITS.locations} shown` : undefined);
      }
      case 'get_selected_range':
      case 'get_visible_range': {
        const editor = vscode.window.activeTextEditor;
        if (!editor) return jsonResult(null);
        // Only the workspace's own files: the active editor may show anything the user (or a click on an
        // agent's link) opened, e.g. ~/.aws/credentials. Its path is not told either.
        if (!this.documentInside(editor.document.uri)) return NOT_IN_WORKSPACE;
        const r = name === 'get_selected_range' ? editor.selection : editor.visibleRanges[0];
        if (!r) return jsonResult(null);
        const { text, truncated } = limitText(editor.document.getText(r), IDE_LIMITS.text);
        const value: RangeWithText = { abspath: editor.document.uri.fsPath, range: range(r), text };
        return jsonResult(value, truncated ? `text cut at ${IDE_LIMITS.text} characters` : undefined);
      }
      case 'get_diagnostics': {
        const entries: [vscode.Uri, readonly vscode.Diagnostic[]][] =
          args.abspath === undefined
            ? vscode.languages.getDiagnostics().filter(([uri]) => uri.scheme === 'file' && this.inside(uri.fsPath))
            : [[vscode.Uri.file(this.resolve(args.abspath)), vscode.languages.getDiagnostics(vscode.Uri.file(this.resolve(args.abspath)))]];
        const all = entries.flatMap(([uri, diags]) =>
          diags.map((d) => ({
            abspath: uri.fsPath,
            range: range(d.range),
            severity: vscode.DiagnosticSeverity[d.severity],
            message: d.message,
            ...(d.source ? { source: d.source } : {}),
            ...(d.code !== undefined ? { code: typeof d.code === 'object' ? d.code.value : d.code } : {}),
          })),
        );
        return jsonResult(all.slice(0, IDE_LIMITS.diagnostics), all.length > IDE_LIMITS.diagnostics ? `${all.length} diagnostics, first ${IDE_LIMITS.diagnostics} shown` : undefined);
      }
      case 'ide_language':
        return jsonResult(vscode.env.language);
      default:
        return { content: [{ type: 'text', text: `Unknown IDE tool: ${name}` }], isError: true };
    }
  }

  private resolve(p: unknown): string {
    if (typeof p !== 'string' || !p) throw new Error('"abspath" must be a non-empty string');
    return resolveInWorkspace(p, this.roots());
  }

  private documentInside(uri: vscode.Uri): boolean {
    return uri.scheme === 'file' && this.inside(uri.fsPath);
  }

  private inside(p: string): boolean {
    try {
      resolveInWorkspace(p, this.roots());
      return true;
    } catch {
      return false;
    }
  }

  /** Opens the document so its language features start (the TypeScript server loads on first open). */
  private async open(p: unknown): Promise<vscode.Uri> {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(this.resolve(p)));
    return doc.uri;
  }
}
