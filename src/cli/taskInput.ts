/**
 * What `agent-host task` reads and prints besides the agent: the --range it is given (1-based, as VS Code's
 * status bar shows positions), the project's files for the test plan, and a proposed edit as a unified diff.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import type { TaskRange } from '../session/selectionTask';
import type { ProjectView } from '../tasks/testFramework';
import { linesOf } from '../tasks/textRanges';

/**
 * `L1:C1-L2:C2` (1-based lines and columns; the end column is exclusive, like a selection's end) or `L1-L2`
 * (whole lines), as a 0-based range of `text`; an Error saying what is wrong when it is malformed or not in the file.
 */
export function parseRange(spec: string, text: string, file: string): TaskRange {
  const lines = linesOf(text);
  const m = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(spec) ?? /^(\d+)-(\d+)$/.exec(spec);
  if (!m) throw new Error(`--range "${spec}" is not L1:C1-L2:C2 or L1-L2 (1-based lines and columns, e.g. 6:1-10:17 or 6-10)`);
  const n = m.slice(1).map(Number);
  const [l1, c1, l2, c2] = n.length === 4 ? n : [n[0]!, 1, n[1]!, (lines[n[1]! - 1]?.length ?? 0) + 1];
  const where = `${path.basename(file)}: lines 1 to ${lines.length}`;
  for (const line of [l1!, l2!]) {
    if (line < 1 || line > lines.length) throw new Error(`--range "${spec}": line ${line} is not in the file (${where})`);
  }
  for (const [line, col] of [
    [l1!, c1!],
    [l2!, c2!],
  ] as const) {
    const max = (lines[line - 1]?.length ?? 0) + 1;
    if (col < 1 || col > max) throw new Error(`--range "${spec}": column ${col} is not on line ${line} (columns 1 to ${max})`);
  }
  if (l2! < l1! || (l2 === l1 && c2! < c1!)) throw new Error(`--range "${spec}" ends before it starts`);
  return { start: { line: l1! - 1, character: c1! - 1 }, end: { line: l2! - 1, character: c2! - 1 } };
}

const SKIPPED_DIRS = new Set(['node_modules', '.git', '.venv', 'dist', 'out']);
const PLAN_FILES = /\.(py|ts|tsx|js|jsx|mjs|cjs|toml|cfg|ini|json)$/;
const READ_FOR_PLAN = /(^|\/)(package\.json|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini)$|test/;
const MAX_FILES = 5000;

/** The project under `root` as the test planner sees it (the editor's search: the same files, folders skipped and limit). */
export function projectView(root: string, source: string, languageId: string): ProjectView {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (files.length >= MAX_FILES) return;
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(rel);
      } else if (entry.isFile() && PLAN_FILES.test(entry.name)) files.push(rel);
    }
  };
  walk('');
  const texts = new Map<string, string>();
  return {
    languageId,
    source,
    files,
    read: (rel) => {
      if (!READ_FOR_PLAN.test(rel) || !files.includes(rel)) return undefined;
      if (!texts.has(rel)) texts.set(rel, readFileSync(path.join(root, rel), 'utf8'));
      return texts.get(rel);
    },
  };
}

/** A unified diff `git apply` and `patch -p1` take: `a/<rel>` → `b/<rel>`, or from /dev/null for a new file. */
export function unifiedDiff(rel: string, before: string | undefined, after: string): string {
  return createTwoFilesPatch(before === undefined ? '/dev/null' : `a/${rel}`, `b/${rel}`, before ?? '', after, undefined, undefined, { headerOptions: FILE_HEADERS_ONLY });
}
