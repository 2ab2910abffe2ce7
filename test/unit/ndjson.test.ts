import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { Message } from 'vscode-jsonrpc/node';
import { LineSplitter, NdjsonMessageReader, NdjsonMessageWriter, peekFields, WriteBacklogError } from '../../src/core/ndjson';

function split(chunks: (string | Buffer)[], max = 1024) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const s = new LineSplitter(
    max,
    (l) => lines.push(l),
    (n) => oversize.push(n),
  );
  for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c) : c);
  s.end();
  return { lines, oversize };
}

describe('LineSplitter', () => {
  it('splits on \\n only, across chunks, tolerating \\r\\n and keeping U+2028 inside lines', () => {
    const { lines } = split(['{"a":1}\n{"b":', '"x\u2028y"}\r\n', '\n', '{"c":3}']);
    assert.deepEqual(lines, ['{"a":1}', '{"b":"x\u2028y"}', '{"c":3}']);
  });

  it('joins a multi-byte character split between chunks', () => {
    const bytes = Buffer.from('"héllo 😀"\n');
    const { lines } = split([bytes.subarray(0, 3), bytes.subarray(3, 9), bytes.subarray(9)]);
    assert.deepEqual(lines, ['"héllo 😀"']);
  });

  it('drops a line over the limit, reports it, and goes on with the next', () => {
    const { lines, oversize } = split(['{"ok":1}\n', 'x'.repeat(600), 'y'.repeat(600), '\n{"ok":2}\n'], 1000);
    assert.deepEqual(lines, ['{"ok":1}', '{"ok":2}']);
    assert.equal(oversize.length, 1);
    assert.ok(oversize[0]! > 1000);
  });

  it('drops an over-limit line that arrives in one chunk', () => {
    const { lines, oversize } = split([`${'z'.repeat(2000)}\n{"ok":3}\n`], 1000);
    assert.deepEqual(lines, ['{"ok":3}']);
    assert.deepEqual(oversize, [2000]);
  });
});

describe('LineSplitter over a huge line', () => {
  it('holds at most the limit while a 50 MB line streams through, and keeps its size and both ends', () => {
    const limit = 1024 * 1024;
    const lines: string[] = [];
    const dropped: { bytes: number; head: string; tail: string }[] = [];
    const s = new LineSplitter(
      limit,
      (l) => lines.push(l),
      (bytes, ends) => dropped.push({ bytes, ...ends }),
    );
    const head = Buffer.from('{"jsonrpc":"2.0","id":7,"result":{"pad":"');
    const read = Buffer.alloc(64 * 1024, 0x78);
    let peak = 0;
    s.push(head);
    for (let sent = head.length; sent < 50_000_000; sent += read.length) {
      s.push(read);
      peak = Math.max(peak, s.bufferedBytes);
    }
    s.push(Buffer.from('"}}\n{"ok":1}\n'));
    assert.ok(peak <= limit, `held ${peak} bytes`);
    assert.equal(s.bufferedBytes, 0);
    assert.deepEqual(lines, ['{"ok":1}']);
    assert.equal(dropped.length, 1);
    assert.ok(dropped[0]!.bytes > 50_000_000);
    assert.ok(dropped[0]!.head.startsWith('{"jsonrpc":"2.0","id":7,') && dropped[0]!.head.length === 1024);
    assert.ok(dropped[0]!.tail.endsWith('xx"}}'));
  });

  it('reports an unterminated over-limit line at the end of the stream', () => {
    const { lines, oversize } = split(['{"a":1}\n', 'z'.repeat(3000)], 1000);
    assert.deepEqual(lines, ['{"a":1}']);
    assert.deepEqual(oversize, [3000]);
  });
});

describe('peekFields', () => {
  it('reads the simple fields a line starts with, up to the first nested value, and an id it ends with', () => {
    assert.deepEqual(peekFields('{"jsonrpc":"2.0","id":12,"result":{"x":', '…}}'), { jsonrpc: '2.0', id: 12 });
    assert.deepEqual(peekFields('{"jsonrpc": "2.0", "id": "a\\"b", "method": "fs/write_text_file", "params": {', '"}}'), { jsonrpc: '2.0', id: 'a"b', method: 'fs/write_text_file' });
    assert.deepEqual(peekFields('{"jsonrpc":"2.0","result":{"pad":"xx', 'xx"},"id":-3}\n'), { jsonrpc: '2.0', id: -3 });
    assert.deepEqual(peekFields('{"type":"response","id":"ah-1","command":"get_messages","success":true,"data":{', '}}'), { type: 'response', id: 'ah-1', command: 'get_messages' });
    // A nested id is not the message's: the text must end right after it.
    assert.deepEqual(peekFields('{"result":{"a":"', '","b":{"id":5}}}'), {});
    assert.deepEqual(peekFields('not json at all', ''), {});
  });
});

describe('NdjsonMessageWriter against an input nobody reads', () => {
  it('refuses a frame past the backlog limit at once, and reports the stall', async () => {
    const stream = new PassThrough({ highWaterMark: 1024 }); // never read: it never drains
    let stalled!: (bytes: number) => void;
    const stall = new Promise<number>((r) => (stalled = r));
    const writer = new NdjsonMessageWriter(stream, { maxBacklogBytes: 64 * 1024, stallMs: 50, onStall: (bytes) => stalled(bytes) });
    const first = writer.write({ pad: 'a'.repeat(40 * 1024) });
    const second = writer.write({ pad: 'b'.repeat(20 * 1024) });
    await assert.rejects(writer.write({ pad: 'c'.repeat(10 * 1024) }), (e: unknown) => e instanceof WriteBacklogError && e.limit === 64 * 1024);
    assert.ok((await stall) > 60 * 1024, 'the stall did not report what waits');
    assert.ok(writer.waitingBytes > 60 * 1024);
    stream.destroy();
    await assert.rejects(first, /Agent stdin is closed/);
    await assert.rejects(second, /Agent stdin is closed/);
    assert.equal(writer.waitingBytes, 0);
  });
});

describe('NdjsonMessageReader / Writer', () => {
  it('reports malformed and non-object lines and keeps delivering messages', async () => {
    const stream = new PassThrough();
    const reader = new NdjsonMessageReader(stream);
    const got: Message[] = [];
    const errors: string[] = [];
    reader.onError((e) => errors.push(e.message));
    reader.listen((m) => got.push(m));
    stream.write('{"jsonrpc":"2.0","method":"a"}\nnot json\n42\n{"jsonrpc":"2.0","id":0,"result":null}\n');
    stream.end();
    await new Promise((r) => reader.onClose(r));
    assert.equal(got.length, 2);
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /Malformed JSON/);
    assert.match(errors[1]!, /not a JSON object/);
  });

  it("calls onRead once per read, before that read's lines, also for a line still arriving, from its one listener", async () => {
    const stream = new PassThrough();
    const seen: string[] = [];
    const reader = new NdjsonMessageReader(stream, { onRead: () => seen.push('read') });
    assert.equal(stream.listenerCount('data'), 0, 'nothing reads before listen()');
    reader.listen((m) => seen.push(`message ${(m as { method?: string }).method}`));
    assert.equal(stream.listenerCount('data'), 1);
    stream.write('{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}\n');
    await new Promise((r) => setImmediate(r));
    stream.write('{"jsonrpc":"2.0","meth');
    await new Promise((r) => setImmediate(r));
    stream.end('od":"c"}\n');
    await new Promise((r) => reader.onClose(r));
    assert.deepEqual(seen, ['read', 'message a', 'message b', 'read', 'read', 'message c']);
  });

  it('writes one frame per line, in order, with no interleaving', async () => {
    const stream = new PassThrough();
    const writer = new NdjsonMessageWriter(stream);
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const big = 'x'.repeat(256 * 1024);
    await Promise.all([writer.write({ jsonrpc: '2.0', method: 'one', params: { big } } as Message), writer.write({ jsonrpc: '2.0', method: 'two', params: { s: 'a\nb\u2028' } } as Message)]);
    const lines = chunks.join('').split('\n');
    assert.equal(lines.length, 3);
    assert.equal(JSON.parse(lines[0]!).method, 'one');
    assert.deepEqual(JSON.parse(lines[1]!).params, { s: 'a\nb\u2028' });
  });
});
