/**
 * Splitting a byte stream into lines, with a limit on a line's size: the framing of NDJSON. Kept apart from
 * the JSON-RPC reader and writer (ndjson.ts) so that a program needing only lines (the MCP bridge) does not
 * load vscode-jsonrpc.
 */

/** The longest line read from an agent unless configured (`agentHost.maxLineBytes`); longer ones are dropped. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;
/** How much of each end of a dropped line is kept: enough for its id, method or type. */
const PEEK_BYTES = 1024;

/**
 * Splits a byte stream into lines on `\n` only (never on U+2028/U+2029 as readline does),
 * tolerating `\r\n`. A line longer than `maxLineBytes` is dropped whole: past the limit only its size and
 * its two ends are kept, so what one line holds in memory stays under the limit.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;
  /** The current line is over the limit: its size so far, its first bytes and its last ones. */
  private dropping: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (bytes: number, ends: { head: string; tail: string }) => void,
  ) {}

  /** Bytes held for the line not yet complete (at most the limit). */
  get bufferedBytes(): number {
    return this.pending;
  }

  push(data: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl === -1) {
        this.append(data.subarray(start), true);
        return;
      }
      const piece = data.subarray(start, nl);
      start = nl + 1;
      if (!this.dropping && this.pending + piece.length <= this.maxLineBytes) {
        let line = this.pending === 0 ? piece : Buffer.concat([...this.chunks, piece]);
        this.reset();
        if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
        if (line.length > 0) this.onLine(line.toString('utf8'));
        continue;
      }
      this.append(piece, false);
      this.reportDropped();
    }
  }

  /** Whatever was left without a final newline when the stream ended. */
  end(): void {
    if (this.dropping) this.reportDropped();
    else if (this.pending > 0) {
      const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
      if (line.trim()) this.onLine(line);
    }
    this.reset();
  }

  /** Adds bytes to the current line (`copy`: they are kept past this read); past the limit, only its ends. */
  private append(bytes: Buffer, copy: boolean): void {
    if (bytes.length === 0) return;
    if (!this.dropping && this.pending + bytes.length > this.maxLineBytes) {
      const held = [...this.chunks, bytes];
      this.dropping = { bytes: this.pending, head: firstBytes(held, PEEK_BYTES), tail: lastBytes(this.chunks, PEEK_BYTES) };
      this.chunks = [];
      this.pending = 0;
    }
    const d = this.dropping;
    if (d) {
      d.bytes += bytes.length;
      d.tail = lastBytes([d.tail, bytes.subarray(Math.max(0, bytes.length - PEEK_BYTES))], PEEK_BYTES);
      return;
    }
    this.chunks.push(copy ? Buffer.from(bytes) : bytes);
    this.pending += bytes.length;
  }

  private reportDropped(): void {
    const d = this.dropping!;
    this.reset();
    this.onOversize(d.bytes, { head: d.head.toString('utf8'), tail: d.tail.toString('utf8') });
  }

  private reset(): void {
    this.chunks = [];
    this.pending = 0;
    this.dropping = undefined;
  }
}

function firstBytes(chunks: Buffer[], n: number): Buffer {
  const out: Buffer[] = [];
  let size = 0;
  for (const c of chunks) {
    if (size >= n) break;
    out.push(c.subarray(0, n - size));
    size += Math.min(c.length, n - size);
  }
  return Buffer.concat(out);
}

function lastBytes(chunks: Buffer[], n: number): Buffer {
  const out: Buffer[] = [];
  let size = 0;
  for (let i = chunks.length - 1; i >= 0 && size < n; i--) {
    const c = chunks[i]!;
    out.unshift(c.subarray(Math.max(0, c.length - (n - size))));
    size += Math.min(c.length, n - size);
  }
  return Buffer.concat(out);
}
