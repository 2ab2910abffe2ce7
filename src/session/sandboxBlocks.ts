/**
 * What the sandbox blocked, as the chat shows it (docs/sandbox.md): a write refused by the read-only filesystem,
 * read from what the agent's tools printed ("Read-only file system" in the shell's, Node's and Python's words),
 * and a connection the sandbox's proxy refused (reported by the launcher itself). The tool output is the agent's:
 * a block read from it is a hint for the person, never a decision.
 */
export interface SandboxBlock {
  kind: 'write' | 'network';
  /** The path (write) or `host` / `host:port` (network). */
  target: string;
}

/** The last characters of a text scanned (a long log's end says what failed). */
const SCANNED = 64 * 1024;
/** At most this many blocks kept per tool call. */
export const MAX_BLOCKS = 8;

const WRITE_PATTERNS: RegExp[] = [
  // bash: "/x/y: Read-only file system"; coreutils: "touch: cannot touch '/x/y': Read-only file system"
  /(?:^|[\s:])'?(\/[^\s:'"]+)'?: Read-only file system/gm,
  // Node: "EROFS: read-only file system, open '/x/y'"
  /EROFS: read-only file system, \w+ '(\/[^']+)'/g,
  // Python: "[Errno 30] Read-only file system: '/x/y'"
  /\[Errno 30\] Read-only file system: '(\/[^']+)'/g,
  // zsh: "(eval):1: read-only file system: /x/y"
  /: read-only file system: (\/[^\s'"]+)/g,
];

/** The writes a tool's output says were refused by the read-only filesystem (each path once). */
export function writeBlocksIn(text: string): SandboxBlock[] {
  const tail = text.length > SCANNED ? text.slice(-SCANNED) : text;
  if (!/read-only file system/i.test(tail)) return [];
  const found = new Set<string>();
  for (const re of WRITE_PATTERNS) for (const m of tail.matchAll(re)) if (m[1]) found.add(m[1]);
  return [...found].map((target) => ({ kind: 'write' as const, target }));
}

/** `blocks` with `more` added, each once, at most MAX_BLOCKS. */
export function withBlocks(blocks: readonly SandboxBlock[] | undefined, more: readonly SandboxBlock[]): SandboxBlock[] {
  const out = [...(blocks ?? [])];
  for (const b of more) {
    if (out.length >= MAX_BLOCKS) break;
    if (!out.some((o) => o.kind === b.kind && o.target === b.target)) out.push(b);
  }
  return out;
}

/** The text of a tool call's update that a block could be read from: its text content, its raw output, its terminal output. */
export function outputTextOf(patch: { content?: unknown[]; rawOutput?: unknown; meta?: Record<string, unknown> }): string {
  const parts: string[] = [];
  for (const c of patch.content ?? []) {
    const item = c as { type?: string; content?: { type?: string; text?: unknown } };
    if (item.type === 'content' && typeof item.content?.text === 'string') parts.push(item.content.text);
  }
  const raw = patch.rawOutput;
  if (typeof raw === 'string') parts.push(raw);
  else if (raw && typeof raw === 'object') {
    for (const key of ['output', 'stdout', 'stderr', 'formatted_output', 'aggregated_output', 'error']) {
      const v = (raw as Record<string, unknown>)[key];
      if (typeof v === 'string') parts.push(v);
    }
  }
  const term = patch.meta?.terminal_output as { data?: unknown } | undefined;
  if (typeof term?.data === 'string') parts.push(term.data);
  return parts.join('\n');
}
