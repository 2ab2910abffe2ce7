import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TimelineEntity } from '../../src/session/sessionModel';
import { buildPromptParts, legacyPickers, normalizeConfigOptions, SNAPSHOT_CHARS, SNAPSHOT_ENTITIES, sessionDivider, settledHistory, windowStart } from '../../src/views/chat/chatContent';

test('prompt blocks: text first, files as resource_link, selection embedded only when the agent takes it', () => {
  const chips = [
    { id: 'a', kind: 'file' as const, label: 'a.ts', uri: 'file:///w/a.ts' },
    { id: 'b', kind: 'selection' as const, label: 'b.py:2-3', uri: 'file:///w/b.py', range: { startLine: 2, endLine: 3 }, text: 'x = 1\n' },
    { id: 'c', kind: 'image' as const, label: 'p.png', text: 'AAAA', mimeType: 'image/png' },
  ];
  const plain = buildPromptParts('hi', chips, { image: false, embeddedContext: false });
  assert.deepEqual(plain.parts, [
    { type: 'text', text: 'hi' },
    { type: 'resource_link', uri: 'file:///w/a.ts', name: 'a.ts', mimeType: 'text/x-typescript' },
    { type: 'resource_link', uri: 'file:///w/b.py#L2-L3', name: 'b.py:2-3', mimeType: 'text/x-python' },
  ]);
  assert.deepEqual(
    plain.dropped.map((c) => c.id),
    ['c'],
  );
  const rich = buildPromptParts('', chips, { image: true, embeddedContext: true });
  assert.deepEqual(rich.parts[1], { type: 'resource', resource: { uri: 'file:///w/b.py#L2-L3', text: 'x = 1\n', mimeType: 'text/x-python' } });
  assert.deepEqual(rich.parts[2], { type: 'image', data: 'AAAA', mimeType: 'image/png' });
  assert.equal(rich.parts[0]!.type, 'resource_link', 'no empty text block');
});

test('config options: agent order, grouped options flattened, booleans, malformed ones dropped', () => {
  const views = normalizeConfigOptions([
    {
      id: 'mode',
      name: 'Mode',
      category: 'mode',
      type: 'select',
      currentValue: 'ask',
      options: [
        { value: 'ask', name: 'Ask' },
        { value: 'code', name: 'Code' },
      ],
    },
    {
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: 'm2',
      options: [
        {
          group: 'g',
          name: 'Fast',
          options: [
            { value: 'm1', name: 'M1' },
            { value: 'm2', name: 'M2' },
          ],
        },
      ],
    },
    { id: 'web', name: 'Web search', type: 'boolean', currentValue: true },
    { name: 'no id' },
    { id: 'empty', type: 'select', options: [] },
  ]);
  assert.deepEqual(
    views.map((v) => v.id),
    ['mode', 'model', 'web'],
  );
  assert.deepEqual(
    views[1]!.options.map((o) => [o.value, o.group]),
    [
      ['m1', 'Fast'],
      ['m2', 'Fast'],
    ],
  );
  assert.equal(views[2]!.currentValue, true);
  assert.deepEqual(legacyPickers(views), { modes: false, models: false });
  assert.deepEqual(legacyPickers([]), { modes: true, models: true });
});

test("an earlier session's error notice loses its Restart (the agent has run again since); the rest is shown as it was", () => {
  const exit: TimelineEntity = { kind: 'notice', id: 'prev:1', severity: 'error', title: 'Agent exited', detail: 'code 3' };
  const info: TimelineEntity = { kind: 'notice', id: 'prev:2', severity: 'info', title: 'Session resumed' };
  const message: TimelineEntity = { kind: 'message', id: 'prev:3', role: 'agent', text: 'hi', parts: [] };
  const shown = settledHistory([exit, info, message]);
  assert.deepEqual(shown, [{ ...exit, settled: true }, info, message]);
  assert.equal('settled' in exit, false, 'the kept copy is not changed');
});

test('the divider between two sessions is kept as a phrase, worded when shown (a reload in another language words it anew)', () => {
  const divider = sessionDivider('s1', 'opencode');
  assert.equal(divider.title, 'Continued with opencode');
  assert.deepEqual(divider.phrases, { title: { key: 'continuedWith', args: ['opencode'] } });
});

test('a snapshot or a page carries at most its count of the newest entities and about SNAPSHOT_CHARS of them, at least one', () => {
  const m = (id: string, chars: number): TimelineEntity => ({ kind: 'message', id, role: 'agent', text: 'x'.repeat(chars), parts: [{ type: 'text', text: 'x'.repeat(chars) }] });
  const short = Array.from({ length: 1000 }, (_, i) => m(`s${i}`, 10));
  assert.equal(windowStart(short, 1000, SNAPSHOT_ENTITIES), 1000 - SNAPSHOT_ENTITIES, 'short entities: the count bounds');
  assert.equal(windowStart(short, 100, 500), 0, 'no further than the first');
  const long = Array.from({ length: 1000 }, (_, i) => m(`l${i}`, 3000));
  const from = windowStart(long, 1000, SNAPSHOT_ENTITIES);
  const carried = 1000 - from;
  assert.ok(carried > 10 && carried * 6000 <= SNAPSHOT_CHARS, `3 KB answers: ${carried} carried, about ${SNAPSHOT_CHARS} characters`);
  assert.equal(windowStart([m('huge', 4_000_000)], 1, SNAPSHOT_ENTITIES), 0, 'one entity over the bound is still carried');
  assert.equal(windowStart(long, -1, 10), -1, 'an unknown entity: nothing');
});
