/**
 * Paths whose change runs code or reconfigures the editor later (git config and hooks, editor and
 * dev-container settings, CI workflows, workspace files): a write there always asks the person, whatever
 * rule or mode is active; the CLI refuses it unless told otherwise. Patterns are relative to a workspace
 * folder (minimatch, dot files included); a setting adds more.
 */
import * as path from 'node:path';
import { minimatch } from 'minimatch';

export const DEFAULT_PROTECTED_PATTERNS = ['.git/**', '.vscode/**', '.devcontainer/**', '.husky/**', '.github/workflows/**', '**/*.code-workspace'];

/** The pattern that protects `absPath` (inside one of `roots`), or undefined. */
export function protectedBy(absPath: string, roots: readonly string[], patterns: readonly string[] = DEFAULT_PROTECTED_PATTERNS): string | undefined {
  for (const root of roots) {
    const rel = path.relative(root, absPath);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
    const posix = rel.split(path.sep).join('/');
    const hit = patterns.find((p) => minimatch(posix, p, { dot: true, nocase: process.platform !== 'linux' }));
    if (hit) return hit;
  }
  return undefined;
}
