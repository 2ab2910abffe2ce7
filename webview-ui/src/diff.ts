/** A line diff (LCS) small enough for tool-call diffs; big inputs degrade to "all removed, all added". */
export type DiffLine = { op: ' ' | '-' | '+'; text: string };

const MAX_CELLS = 4_000_000;

export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText === '' ? [] : oldText.split('\n');
  const b = newText.split('\n');
  // Trim the common prefix and suffix: most edits touch a few lines.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = a.slice(0, start).map((text) => ({ op: ' ', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > MAX_CELLS) {
    out.push(...midA.map((text) => ({ op: '-' as const, text })), ...midB.map((text) => ({ op: '+' as const, text })));
  } else {
    const n = midA.length;
    const m = midB.length;
    const dp = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        dp[i * (m + 1) + j] = midA[i] === midB[j] ? dp[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(dp[(i + 1) * (m + 1) + j]!, dp[i * (m + 1) + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        out.push({ op: ' ', text: midA[i]! });
        i++;
        j++;
      } else if (j < m && (i >= n || dp[i * (m + 1) + j + 1]! >= dp[(i + 1) * (m + 1) + j]!)) {
        out.push({ op: '+', text: midB[j++]! });
      } else {
        out.push({ op: '-', text: midA[i++]! });
      }
    }
  }
  out.push(...a.slice(endA).map((text) => ({ op: ' ' as const, text })));
  return out;
}

/** Keeps changed lines with `context` lines around them; runs of unchanged lines become one `null` gap. */
export function hunks(lines: DiffLine[], context = 3): (DiffLine | null)[] {
  const keep = new Uint8Array(lines.length);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = 1;
  });
  const out: (DiffLine | null)[] = [];
  lines.forEach((l, i) => {
    if (keep[i]) out.push(l);
    else if (out.at(-1) !== null) out.push(null);
  });
  return out;
}
