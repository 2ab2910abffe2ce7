import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TimelineEntity } from '../../src/session/sessionModel';
import { boundedHistory, slimEntity } from '../../src/session/transcriptCopy';

const message = (id: string, text: string): TimelineEntity => ({
  kind: 'message',
  id,
  role: 'agent',
  text,
  parts: [
    { type: 'text', text },
    { type: 'image', data: 'A'.repeat(1000), mimeType: 'image/png' },
  ],
});

test('kept transcript entries hold text and small metadata: no raw tool output, no images, pending permissions cancelled', () => {
  const tool = slimEntity({
    kind: 'tool_call',
    id: 't',
    title: 'Run tests',
    toolKind: 'execute',
    status: 'completed',
    content: [{ type: 'content', content: { type: 'text', text: 'x'.repeat(100_000) } }],
    locations: [{ path: '/w/a.ts' }],
    rawInput: { command: 'npm test' },
    rawOutput: { stdout: 'y'.repeat(100_000) },
  });
  assert.equal(tool.kind, 'tool_call');
  assert.ok(tool.kind === 'tool_call' && tool.content.length === 0 && tool.rawOutput === undefined && tool.rawInput === undefined);
  const msg = slimEntity(message('m', 'hello'));
  assert.deepEqual(msg.kind === 'message' && msg.parts, [{ type: 'text', text: 'hello' }]);
  const perm = slimEntity({ kind: 'permission', id: 'p', toolCallId: 't', title: 'x', options: [], state: 'pending' });
  assert.equal(perm.kind === 'permission' && perm.state, 'cancelled');
});

test('a kept tool call left pending or running ends failed, saying so (nothing can finish it in a copy)', () => {
  const base = { kind: 'tool_call' as const, title: 'Run tests', toolKind: 'execute', content: [], locations: [] };
  for (const status of ['pending', 'in_progress'] as const) {
    const kept = slimEntity({ ...base, id: status, status });
    assert.deepEqual(kept.kind === 'tool_call' && [kept.status, kept.interrupted], ['failed', 'Not finished when this session ended.']);
  }
  const crashed = slimEntity({ ...base, id: 'c', status: 'failed', interrupted: 'Agent exited with code 3 before this finished.' });
  assert.equal(crashed.kind === 'tool_call' && crashed.interrupted, 'Agent exited with code 3 before this finished.');
  const done = slimEntity({ ...base, id: 'd', status: 'completed' });
  assert.deepEqual(done.kind === 'tool_call' && [done.status, done.interrupted], ['completed', undefined]);
});

test('the kept history is capped in entries and bytes, newest first, and live entities replace older copies', () => {
  const previous = Array.from({ length: 50 }, (_, i) => message(`p${i}`, `old ${i}`));
  const live = Array.from({ length: 50 }, (_, i) => message(`l${i}`, 'z'.repeat(2000)));
  const kept = boundedHistory(previous, live, { entries: 60, bytes: 64 * 1024, textChars: 1000 });
  assert.ok(Buffer.byteLength(JSON.stringify(kept)) <= 64 * 1024);
  assert.equal(kept.at(-1)?.id, 'l49', 'the newest entry is kept');
  assert.ok(kept.length < 60, 'the byte cap bites before the entry cap');
  assert.ok(
    kept.every((e) => e.kind !== 'message' || e.text.length < 1100),
    'long texts are clipped',
  );
  const again = boundedHistory(kept, [message('l49', 'updated')]);
  assert.equal(again.filter((e) => e.id === 'l49').length, 1);
  assert.equal(again.at(-1)?.kind === 'message' && again.at(-1)!.kind === 'message' ? (again.at(-1) as { text: string }).text : '', 'updated');
});
