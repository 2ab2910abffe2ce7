import * as fs from 'node:fs';
import * as path from 'node:path';

/** Relative path → mtime of every file under `dir` (dot-folders skipped). */
export function snapshot(dir: string, base = dir, out = new Map<string, number>()): Map<string, number> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) snapshot(full, base, out);
    else out.set(path.relative(base, full), fs.statSync(full).mtimeMs);
  }
  return out;
}

/** Files under `dir` that are new or modified since `before` was taken. */
export function changedSince(before: Map<string, number>, dir: string): string[] {
  return [...snapshot(dir)].filter(([f, t]) => before.get(f) !== t).map(([f]) => f);
}
