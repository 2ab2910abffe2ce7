/**
 * Terminal output kept for `terminal/output` (src/host/terminalService.ts OutputBuffer): the bytes kept, the
 * UTF-8 character boundary at the front, the `truncated` flag, the 16 MiB cap on an agent-chosen limit, and
 * linear cost (no re-copy of what is kept on every chunk).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MAX_OUTPUT_LIMIT, OutputBuffer, outputLimit, TerminalService } from '../../src/host/terminalService';
import { scratchDir } from '../support/paths';

/**
 * The semantics as first written (concat everything, cut at the limit, skip continuation bytes), as the
 * reference. One deliberate difference: once output was cut, continuation bytes at the front are skipped on
 * every push — the first version kept them when the cut had emptied the buffer and the next chunk (the rest
 * of a character whose start was dropped) did not overflow, so the text started mid-character.
 */
class Reference {
  buf = Buffer.alloc(0);
  truncated = false;
  constructor(private readonly limit: number) {}
  push(data: Buffer): void {
    this.buf = Buffer.concat([this.buf, data]);
    let start = 0;
    if (this.buf.length > this.limit) {
      start = this.buf.length - this.limit;
      this.truncated = true;
    }
    if (this.truncated) while (start < this.buf.length && (this.buf[start]! & 0xc0) === 0x80) start++;
    this.buf = this.buf.subarray(start);
  }
}

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHARS = ['a', 'b', '\n', 'é', '€', '漢', '😀'];
/** 400 KB of mixed 1–4 byte characters to cut chunks from. */
const POOL = (() => {
  const next = rng(7);
  const parts: string[] = [];
  for (let i = 0; i < 160_000; i++) parts.push(CHARS[Math.floor(next() * CHARS.length)]!);
  return Buffer.from(parts.join(''));
})();

describe('terminal output buffer', () => {
  it('keeps everything under the limit, untruncated', () => {
    const b = new OutputBuffer(100);
    b.push(Buffer.from('hello '));
    b.push(Buffer.from('wörld'));
    assert.equal(b.text(), 'hello wörld');
    assert.equal(b.truncated, false);
    assert.equal(b.byteLength, Buffer.byteLength('hello wörld'));
  });

  it('keeps exactly the last `limit` bytes of ASCII and says it truncated', () => {
    const b = new OutputBuffer(10);
    for (const s of ['0123', '4567', '89ab', 'cdef']) b.push(Buffer.from(s));
    assert.equal(b.text(), '6789abcdef');
    assert.equal(b.byteLength, 10);
    assert.equal(b.truncated, true);
  });

  it('never starts inside a UTF-8 character, also when the character was split across chunks', () => {
    // '€' is 3 bytes, '😀' 4: a 9-byte limit over "x€€€😀" (14 bytes) cuts inside the second €.
    const text = 'x€€€😀';
    const bytes = Buffer.from(text);
    const b = new OutputBuffer(9);
    for (let i = 0; i < bytes.length; i++) b.push(bytes.subarray(i, i + 1)); // one byte per chunk
    assert.equal(b.text(), '€😀');
    assert.equal(b.byteLength, 7, 'the partial character is dropped, not kept');
    assert.equal(b.truncated, true);
    assert.ok(!b.text().includes('\ufffd'));
    // After a cut that left nothing, the rest of a cut character arriving next is not shown either.
    const c = new OutputBuffer(1);
    c.push(Buffer.from('a€').subarray(0, 3)); // "a" + two bytes of €: the cut leaves nothing
    assert.equal(c.byteLength, 0);
    c.push(Buffer.from('€').subarray(2)); // the last byte of €: fits, but is no character
    assert.equal(c.text(), '');
    c.push(Buffer.from('z'));
    assert.equal(c.text(), 'z');
  });

  it('matches the reference semantics for random text, chunk sizes and limits (incl. chunks over the limit and over a block)', () => {
    const next = rng(42);
    for (let round = 0; round < 60; round++) {
      const limit = [0, 1, 3, 7, 100, 4096, 70_000, 200_000][round % 8]!;
      const ours = new OutputBuffer(limit);
      const ref = new Reference(limit);
      let pushes = 0;
      while (pushes++ < 40) {
        const n = [1, 2, 5, 64, 1000, 65_536, 150_000][Math.floor(next() * 7)]!;
        // A slice at an arbitrary byte offset: characters split across pushes.
        const at = Math.floor(next() * (POOL.length - n));
        const chunk = POOL.subarray(at, at + n);
        ours.push(chunk);
        ref.push(chunk);
        assert.equal(ours.byteLength, ref.buf.length, `round ${round} push ${pushes}: kept bytes`);
        assert.equal(ours.truncated, ref.truncated, `round ${round} push ${pushes}: truncated`);
      }
      assert.equal(ours.text(), ref.buf.toString('utf8'), `round ${round}: text`);
    }
  });

  it('caps an agent-chosen limit at 16 MiB; a bad or missing limit gets the default', () => {
    assert.equal(MAX_OUTPUT_LIMIT, 16 * 1024 * 1024);
    assert.equal(outputLimit(2 ** 40), MAX_OUTPUT_LIMIT);
    assert.equal(new OutputBuffer(Number.MAX_SAFE_INTEGER).limit, MAX_OUTPUT_LIMIT);
    assert.equal(outputLimit(undefined), 1024 * 1024);
    assert.equal(outputLimit(null), 1024 * 1024);
    assert.equal(outputLimit(-5), 1024 * 1024);
    assert.equal(outputLimit(Number.NaN), 1024 * 1024);
    assert.equal(outputLimit(1000.7), 1000);
    const b = new OutputBuffer(2 ** 40);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 320; i++) b.push(chunk); // 20 MiB
    assert.equal(b.byteLength, MAX_OUTPUT_LIMIT);
    assert.equal(b.truncated, true);
  });

  it('costs linear time: 64 MiB through a 16 MiB buffer in 64 KiB chunks takes well under the re-copying cost', () => {
    // Re-copying the kept 16 MiB on each of the 1,024 chunks moves ~16 GiB (many seconds); once is ~64 MiB.
    const b = new OutputBuffer(MAX_OUTPUT_LIMIT);
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    const t0 = performance.now();
    for (let i = 0; i < 1024; i++) b.push(chunk);
    const ms = performance.now() - t0;
    assert.equal(b.byteLength, MAX_OUTPUT_LIMIT);
    assert.ok(ms < 3000, `64 MiB took ${ms.toFixed(0)} ms`);
  });

  it('terminal/output through the TerminalService: a command writing 17 MiB with a 1 TiB limit keeps 16 MiB', { timeout: 60_000 }, async () => {
    const cwd = scratchDir('term');
    const terminals = new TerminalService(() => [cwd]);
    const script = "const c=Buffer.alloc(65536,'y');let n=272;(function w(){while(n>0){n--;if(!process.stdout.write(c))return process.stdout.once('drain',w);}process.stdout.write('END€')})()";
    const { terminalId } = await terminals.create({ command: process.execPath, args: ['-e', script], outputByteLimit: 2 ** 40 });
    const exit = await terminals.waitForExit(terminalId);
    assert.equal(exit.exitCode, 0);
    const out = await terminals.output(terminalId);
    assert.equal(out.truncated, true);
    assert.equal(Buffer.byteLength(out.output), MAX_OUTPUT_LIMIT);
    assert.ok(out.output.endsWith('yyyEND€'));
    await terminals.release(terminalId);
    rmSync(cwd, { recursive: true, force: true });
  });
});
