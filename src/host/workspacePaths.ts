import { lstatSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';

/** Raised for a path the agent may not touch; carries a message fit to show the user and the agent. */
export class OutsideWorkspaceError extends Error {
  constructor(
    readonly requested: string,
    reason = 'is outside the workspace folders',
  ) {
    super(`Refused: ${requested} ${reason}`);
    this.name = 'OutsideWorkspaceError';
  }
}

/** As many symlinks as Linux follows in one lookup before ELOOP. */
const MAX_LINKS = 40;

const SEPARATORS = process.platform === 'win32' ? /[\\/]+/ : /\/+/;

class SymlinkLoopError extends Error {}

/**
 * Where `p` (absolute) really leads, resolved one component at a time as the kernel does: every component is
 * looked at with `lstat`; a symbolic link — dangling or not — is replaced by its target (read with
 * `readlink`, relative targets against the link's folder) and the walk goes on through the target's own
 * components, so `..` after a link climbs from where the link points. Components that do not exist are kept
 * as written (a file about to be created). Never falls back to the link's own path.
 */
export function resolvePhysical(p: string): string {
  if (!path.isAbsolute(p)) throw new Error(`not an absolute path: ${p}`);
  let links = 0;
  const root = path.parse(p).root;
  let current = root;
  const queue = p.slice(root.length).split(SEPARATORS).filter(Boolean);
  while (queue.length) {
    const part = queue.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let isLink = false;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      // Missing (or under a file): a plain name from here on.
    }
    if (!isLink) {
      current = next;
      continue;
    }
    if (++links > MAX_LINKS) throw new SymlinkLoopError(p);
    const target = readlinkSync(next);
    const targetRoot = path.parse(target).root;
    if (path.isAbsolute(target)) current = targetRoot;
    queue.unshift(
      ...target
        .slice(path.isAbsolute(target) ? targetRoot.length : 0)
        .split(SEPARATORS)
        .filter(Boolean),
    );
  }
  return current;
}

function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** Device names Windows resolves in every folder (`C:\\ws\\NUL.txt` is the null device). */
const WIN_DEVICES = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;

/**
 * Why a path must not be used on Windows, whatever folder it names: the verbatim and device namespaces
 * (`\\?\\`, `\\.\\`, `\\??\\`: no normalization, `..` and `/` taken literally, any device), NTFS alternate
 * streams (`file.txt:secret`, `file::$DATA`), reserved device names (`NUL`, `COM1.txt`), and names ending in a
 * dot or space (Windows drops them: `secret.` opens `secret`, `.. ` climbs). Undefined when the path is
 * plain. Checked on Windows (and testable anywhere); case and `/` vs `\\` are left to `path.win32`, which
 * compares drive and folder names case-insensitively.
 */
export function windowsPathProblem(p: string): string | undefined {
  if (/^[\\/]{2}[?.][\\/]|^[\\/]{1,2}\?\?[\\/]/.test(p)) return 'uses the Windows device or verbatim namespace';
  const root = path.win32.parse(p).root;
  const parts = p
    .slice(root.length)
    .split(/[\\/]+/)
    .filter(Boolean);
  for (const part of parts) {
    if (part === '.' || part === '..') continue;
    if (part.includes(':')) return 'names an NTFS alternate data stream';
    if (WIN_DEVICES.test(part.trimEnd())) return 'names a Windows device';
    if (/[. ]$/.test(part)) return 'has a name ending in a dot or space (Windows drops it)';
  }
  return undefined;
}

/** `child` inside `root`, by Windows rules (case-insensitive drive and names, either slash); lexical. */
export function isInsideWin32(child: string, root: string): boolean {
  const rel = path.win32.relative(root, child);
  return rel === '' || (!rel.startsWith('..\\') && rel !== '..' && !path.win32.isAbsolute(rel));
}

/**
 * Resolves an agent-supplied path against the workspace roots and refuses anything that does not land inside
 * one of them. Symlinks are followed component by component (see resolvePhysical): a path through a link
 * whose target is outside — existing or dangling — is refused. Returns the RESOLVED path (under the root as
 * configured), so a write goes to the link's target, never through the link.
 */
export function resolveInWorkspace(requested: string, roots: readonly string[]): string {
  if (process.platform === 'win32') {
    const problem = windowsPathProblem(requested);
    if (problem) throw new OutsideWorkspaceError(requested, problem);
  }
  let absolute = requested;
  if (!path.isAbsolute(requested)) {
    if (roots.length === 0) throw new OutsideWorkspaceError(requested);
    // Joined as text, not path.resolve()d: `..` must climb from where symlinks lead, not lexically.
    absolute = `${path.resolve(roots[0]!)}${path.sep}${requested}`;
  }
  let real: string;
  try {
    real = resolvePhysical(absolute);
  } catch (error) {
    if (error instanceof SymlinkLoopError) throw new OutsideWorkspaceError(requested, 'goes through too many symbolic links');
    throw error;
  }
  for (const root of roots) {
    const given = path.resolve(root);
    const realRoot = resolvePhysical(given);
    if (isInside(real, realRoot)) return path.join(given, path.relative(realRoot, real));
  }
  throw new OutsideWorkspaceError(requested);
}
