/** A tool call's diff as its card shows it, from the `diff` package's hunks (the same line diff the host counts with). */
import { structuredPatch } from 'diff';

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

/** Past this many edits the card shows "all removed, all added" instead of waiting on the diff. */
const MAX_EDITS = 5_000;

/** Changed lines with `context` lines around them; each run of unchanged lines left out is one `null` gap. */
export function diffHunks(oldText: string, newText: string, context = 3): (DiffLine | null)[] {
  const patch = structuredPatch('a', 'b', oldText, newText, '', '', { context, maxEditLength: MAX_EDITS });
  if (!patch) return [...lines(oldText).map((text) => ({ op: '-' as const, text })), ...lines(newText).map((text) => ({ op: '+' as const, text }))];
  const out: (DiffLine | null)[] = [];
  let next = 1;
  for (const hunk of patch.hunks) {
    const start = hunk.oldStart;
    if (start > next) out.push(null);
    for (const l of hunk.lines) if (!l.startsWith('\\')) out.push({ op: l[0] as DiffLine['op'], text: l.slice(1) });
    next = start + hunk.oldLines;
  }
  if (next <= lines(oldText).length) out.push(null);
  return out;
}

function lines(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}
