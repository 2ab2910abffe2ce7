/**
 * Paths whose change runs code or reconfigures the editor later (git config and hooks, editor, dev-container
 * and package-manager settings, env files, CI workflows, workspace files): a write there always asks the
 * person, whatever rule or mode is active; the CLI refuses it unless told otherwise. They are protected at any
 * depth — a nested repository's `.git/config` runs its fsmonitor as surely as the root's — and a pattern that
 * names a folder (or a `.git` file) covers everything under it. Patterns are relative to a workspace folder
 * (minimatch, dot files included, case-insensitive); a setting adds more.
 */
import * as path from 'node:path';
import { minimatch } from 'minimatch';
import { pathOf, pickOption, READ_ONLY_KINDS, type PermissionDecider } from '../session/permissions';
import type { ToolCallEntity } from '../session/sessionModel';
import { resolveInWorkspace } from './workspacePaths';

export const DEFAULT_PROTECTED_PATTERNS = [
  '**/.git',
  '**/.gitmodules',
  '**/.gitattributes',
  '**/.vscode',
  '**/.idea',
  '**/.devcontainer',
  '**/.devcontainer.json',
  '**/.husky',
  '**/.github/workflows',
  '**/.env*',
  '**/.npmrc',
  '**/*.code-workspace',
];

/** What a Windows 8.3 short name looks like (`GIT~1` may be `.git`): protected, since it may stand for any name above. */
const SHORT_NAME = /~\d+(\.[^.]*)?$/;
export const SHORT_NAME_LABEL = 'a Windows short name (NAME~1)';

/** Characters HFS+ ignores in names (`.g\u200Cit` opens `.git` there), as git's own check lists them. */
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g;

/** One name as a file system may read it: composed, without HFS+'s ignored characters or the trailing dots and spaces Windows drops. */
function canonical(name: string): string {
  return name
    .normalize('NFC')
    .replace(HFS_IGNORED, '')
    .replace(/[. ]+$/, '');
}

// Case always folds: a Linux folder may sit on a case-insensitive disk (WSL's /mnt/c, exFAT, a mac share).
const MATCH = { dot: true, nocase: true } as const;

/** The pattern that protects `absPath` (inside one of `roots`), or undefined. */
export function protectedBy(absPath: string, roots: readonly string[], patterns: readonly string[] = DEFAULT_PROTECTED_PATTERNS): string | undefined {
  for (const root of roots) {
    const rel = path.relative(root, absPath);
    if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) continue;
    const parts = rel.split(path.sep).map(canonical);
    if (parts.some((p) => SHORT_NAME.test(p))) return SHORT_NAME_LABEL;
    // The path itself, then each folder it is in: `**/.git` covers `sub/.git/hooks/pre-commit`.
    for (let n = parts.length; n > 0; n--) {
      const sub = parts.slice(0, n).join('/');
      const hit = patterns.find((p) => minimatch(sub, p, MATCH));
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The first file a tool call names (its locations, a path in its input) that is protected, with the pattern. */
export function protectedTarget(toolCall: Pick<ToolCallEntity, 'rawInput' | 'locations'>, roots: readonly string[], patterns?: readonly string[]): { path: string; pattern: string } | undefined {
  const named = [...toolCall.locations.map((l) => l.path), pathOf(toolCall)].filter((p): p is string => !!p);
  for (const p of named) {
    let abs: string;
    try {
      abs = resolveInWorkspace(p, roots); // through symlinks, as a write would go
    } catch {
      continue; // outside every folder: not a workspace file
    }
    const pattern = protectedBy(abs, roots, patterns);
    if (pattern) return { path: abs, pattern };
  }
  return undefined;
}

/**
 * The CLI's permission answers with protected files kept out: a tool call that may change things (any kind
 * but read and search) naming a protected file is rejected before `decide` sees it — an agent that asks,
 * then edits with its own tools, is held to the same line as a write through the host.
 */
export function refusingProtectedCalls(decide: PermissionDecider, roots: () => readonly string[], onRefused: (file: string, pattern: string) => void): PermissionDecider {
  return async (request, signal) => {
    const hit = READ_ONLY_KINDS.has(request.toolCall.toolKind) ? undefined : protectedTarget(request.toolCall, roots());
    if (!hit) return decide(request, signal);
    onRefused(hit.path, hit.pattern);
    const reject = pickOption(request.options, 'reject');
    return reject ? { outcome: 'selected', optionId: reject.optionId, by: 'policy' } : { outcome: 'cancelled', by: 'policy' };
  };
}
