import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { Message } from 'vscode-jsonrpc/node';
import { acpChunkCoalescer } from '../../src/acp/coalesce';
import { NdjsonMessageReader } from '../../src/core/ndjson';

const chunk = (text: string, extra: Record<string, unknown> = {}, messageId: string | null = 'm1', kind = 'agent_message_chunk') => ({
  jsonrpc: '2.0',
  method: 'session/update',
  params: { sessionId: 's1', update: { sessionUpdate: kind, ...(messageId ? { messageId } : {}), content: { type: 'text', text }, ...extra } },
});

/** Writes `reads` (each one data event of lines) and returns the messages delivered and the lines tapped. */
async function read(reads: unknown[][]): Promise<{ delivered: Message[]; tapped: number }> {
  const stream = new PassThrough();
  let tapped = 0;
  const reader = new NdjsonMessageReader(stream, { tap: () => tapped++, coalesce: acpChunkCoalescer });
  const delivered: Message[] = [];
  reader.listen((m) => delivered.push(m));
  for (const lines of reads) {
    stream.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    await new Promise((r) => setImmediate(r));
  }
  stream.end();
  await new Promise((r) => setImmediate(r));
  return { delivered, tapped };
}

const texts = (ms: Message[]) =>
  ms.map((m) => (m as { params?: { update?: { content?: { text?: string } } }; id?: unknown }).params?.update?.content?.text ?? `#${String((m as { id?: unknown }).id)}`);

test('adjacent text chunks of one message in one read are delivered as one, in order with everything else', async () => {
  const { delivered, tapped } = await read([
    [chunk('a'), chunk('b'), chunk('c'), { jsonrpc: '2.0', id: 7, result: {} }, chunk('d'), chunk('e', {}, 'm2'), chunk('f', {}, 'm2'), chunk('g', {}, 'm2', 'agent_thought_chunk')],
  ]);
  assert.deepEqual(texts(delivered), ['abc', '#7', 'd', 'ef', 'g']);
  assert.equal(tapped, 8, 'the tap sees every line as the agent sent it');
});

test('chunks with anything more (_meta, annotations, images) or in another read are never merged', async () => {
  const { delivered } = await read([[chunk('a'), chunk('b', { _meta: { x: 1 } }), chunk('c'), { ...chunk('d'), params: { ...chunk('d').params, _meta: {} } }], [chunk('e'), chunk('f')], [chunk('g')]]);
  assert.deepEqual(texts(delivered), ['a', 'b', 'c', 'd', 'ef', 'g']);
  const img = { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'x', mimeType: 'image/png' } } } };
  assert.equal(acpChunkCoalescer.key(img as unknown as Message), undefined);
  assert.equal(acpChunkCoalescer.key({ ...chunk('x'), id: 3 } as unknown as Message), undefined, 'a request is never merged');
  assert.notEqual(acpChunkCoalescer.key(chunk('x', {}, null) as unknown as Message), acpChunkCoalescer.key(chunk('x') as unknown as Message));
});
