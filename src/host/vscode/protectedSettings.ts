import * as vscode from 'vscode';
import { DEFAULT_PROTECTED_PATTERNS } from '../protectedPaths';

/**
 * The protected patterns for paths under `scopes` (files or folders): the defaults, then each scope's
 * `agentHost.files.protectedPaths` (a folder-level setting included). A pattern of any scope protects.
 */
export function protectedPatternsFor(scopes: readonly string[]): string[] {
  const own = scopes.flatMap((p) => vscode.workspace.getConfiguration('agentHost', vscode.Uri.file(p)).get<string[]>('files.protectedPaths', []));
  return [...DEFAULT_PROTECTED_PATTERNS, ...new Set(own)];
}
