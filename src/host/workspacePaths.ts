import { realpathSync } from 'node:fs';
import * as path from 'node:path';

/** Raised for a path the agent may not touch; carries a message fit to show the user and the agent. */
export class OutsideWorkspaceError extends Error {
  constructor(readonly requested: string) {
    super(`Refused: ${requested} is outside the workspace folders`);
    this.name = 'OutsideWorkspaceError';
  }
}

/** realpath of the nearest existing ancestor, with the missing tail re-attached. */
function realpathLenient(p: string): string {
  const missing: string[] = [];
  let current = p;
  for (;;) {
    try {
      return path.join(realpathSync.native(current), ...missing.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return p;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolves an agent-supplied path against the workspace roots, following `..` and symlinks,
 * and refuses anything that lands outside every root.
 */
export function resolveInWorkspace(requested: string, roots: readonly string[]): string {
  if (!path.isAbsolute(requested)) {
    if (roots.length === 0) throw new OutsideWorkspaceError(requested);
    requested = path.resolve(roots[0]!, requested);
  }
  const normal = path.resolve(requested);
  const real = realpathLenient(normal);
  for (const root of roots) {
    const realRoot = realpathLenient(path.resolve(root));
    if (isInside(real, realRoot)) return normal;
  }
  throw new OutsideWorkspaceError(requested);
}
