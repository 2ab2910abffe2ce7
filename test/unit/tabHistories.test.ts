import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type * as vscode from 'vscode';
import type { TimelineEntity } from '../../src/session/sessionModel';
import { ChatBatch } from '../../src/views/chat/chatBatch';
import { TabHistories } from '../../src/views/chat/tabHistories';
import type { HostEvent } from '../../src/shared/chatProtocol';
import { scratchDir } from '../support/paths';
import { sleep, until } from '../support/wait';

const msg = (id: string, text = id): TimelineEntity => ({ kind: 'message', id, role: 'agent', text, parts: [{ type: 'text', text }] });

/** A workspace state in memory, counting its updates (each one VS Code would send whole). */
function memento(initial: Record<string, unknown> = {}) {
  const values = new Map(Object.entries(initial));
  let updates = 0;
  const m = {
    get: <T>(key: string, fallback?: T) => (values.has(key) ? values.get(key) : fallback) as T,
    update: async (key: string, value: unknown) => {
      updates++;
      if (value === undefined) values.delete(key);
      else values.set(key, value);
    },
    keys: () => [...values.keys()],
  };
  return { m: m as unknown as vscode.Memento, values, updates: () => updates };
}

const log = { warn: (line: string) => warnings.push(line) } as unknown as vscode.LogOutputChannel;
const warnings: string[] = [];
const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as TimelineEntity[];

test('a tab history is a file of its own, the newest write winning; a new window reads it back, the workspace state untouched', async () => {
  const dir = path.join(scratchDir('tab-histories'), 'storage');
  const state = memento();
  const h = new TabHistories(dir, state.m, log);
  for (let i = 1; i <= 20; i++) h.save('t2', [msg(`m${i}`)], [], 'p');
  const file = path.join(dir, 'chat-history-t2.json');
  await until(() => fs.existsSync(file) && read(file)[0]?.id === 'm20', { what: 'the newest copy on disk' });
  assert.equal(fs.readdirSync(dir).length, 1, `only the tab's file: ${fs.readdirSync(dir)}`);
  assert.equal(state.updates(), 0, 'no workspace-state update');
  assert.deepEqual(
    new TabHistories(dir, state.m, log).get('t2').map((e) => e.id),
    ['m20'],
  );
  assert.deepEqual(h.get('t9'), []);
});

test('a history an earlier version kept in the workspace state is shown, then moved to the file at the next write', async () => {
  const dir = scratchDir('tab-histories-old');
  const state = memento({ 'agentHost.chat.history': [msg('old1')], 'agentHost.chat.history.t3': [msg('old3')] });
  const h = new TabHistories(dir, state.m, log);
  assert.deepEqual(
    h.get('t1').map((e) => e.id),
    ['old1'],
  );
  assert.deepEqual(
    h.get('t3').map((e) => e.id),
    ['old3'],
  );
  assert.deepEqual(
    h.save('t1', [msg('old1')], [msg('new1')], 'live').map((e) => e.id),
    ['old1', 'live:new1'],
  );
  await until(() => !state.values.has('agentHost.chat.history'), { what: 'the old copy leaving the workspace state' });
  assert.deepEqual(
    read(path.join(dir, 'chat-history-t1.json')).map((e) => e.id),
    ['old1', 'live:new1'],
  );
  assert.ok(state.values.has('agentHost.chat.history.t3'), "another tab's old copy stays until that tab is written");
});

test('in this window a tab shows what it kept; forget deletes, empties or keeps the file; a write not done yet is what is read', async () => {
  const dir = scratchDir('tab-histories-forget');
  const h = new TabHistories(dir, memento().m, log);
  h.keep('t1', [msg('shown')]);
  h.save('t1', [msg('shown')], [msg('live')], 'p');
  assert.deepEqual(
    h.get('t1').map((e) => e.id),
    ['shown'],
    'the window shows its kept copy, not the stored one',
  );
  const file = path.join(dir, 'chat-history-t1.json');
  await until(() => fs.existsSync(file), { what: 'the file' });
  h.forget('t1', 'empty');
  assert.deepEqual(h.get('t1'), [], 'emptied at once, before the write lands');
  await until(() => read(file).length === 0, { what: 'the emptied file' });
  h.save('t2', [msg('a')], [], 'p');
  await until(() => fs.existsSync(path.join(dir, 'chat-history-t2.json')), { what: 't2' });
  h.forget('t2', 'keep');
  await sleep(50);
  assert.deepEqual(
    h.get('t2').map((e) => e.id),
    ['a'],
    'kept on disk for the last tab',
  );
  h.forget('t2', 'delete');
  await until(() => !fs.existsSync(path.join(dir, 'chat-history-t2.json')), { what: 'the deleted file' });
  assert.deepEqual(h.get('t2'), []);
});

test('a history file that is not a list is said in the log and the tab starts empty; a tab id cannot name a path', async () => {
  const dir = scratchDir('tab-histories-bad');
  fs.writeFileSync(path.join(dir, 'chat-history-t1.json'), '{"not": "a list"}');
  warnings.length = 0;
  const h = new TabHistories(dir, memento().m, log);
  assert.deepEqual(h.get('t1'), []);
  assert.match(warnings.join('\n'), /tab t1: not a list/);
  h.save('../../evil', [msg('x')], [], 'p');
  await until(() => fs.readdirSync(dir).some((f) => f.startsWith('chat-history-') && f.includes('evil')), { what: 'the sanitized file' });
  assert.deepEqual(fs.readdirSync(dir).sort(), ['chat-history-______evil.json', 'chat-history-t1.json']);
});

test('the chat batch holds back changes to entities the page was not sent, until the page asks for them', async () => {
  const posted: HostEvent[] = [];
  const batch = new ChatBatch((e) => posted.push(e), { plan: () => ({ type: 'plan', entries: [] }), header: () => ({ type: 'focusInput' }) });
  batch.reset(['message:old']);
  batch.entity(msg('old', 'changed'));
  batch.append('old', ' more', () => undefined);
  batch.entity(msg('new'));
  batch.append('new', ' text', () => msg('new', 'new text'));
  await sleep(80);
  assert.deepEqual(
    posted.map((e) => e.type),
    ['entities'],
    JSON.stringify(posted),
  );
  assert.deepEqual(posted[0]?.type === 'entities' && posted[0].entities.map((e) => e.kind === 'message' && e.text), ['new text'], 'only the entity the page has');
  posted.length = 0;
  batch.sent(['message:old']);
  batch.append('old', ' more', () => undefined);
  await sleep(80);
  assert.deepEqual(posted, [{ type: 'appends', appends: [{ id: 'old', text: ' more' }] }]);
  batch.dispose();
});

test("a turn's copy is made and written within the delay, the newest winning; what waits is what is read; flush writes it now", async () => {
  const dir = scratchDir('tab-histories-soon');
  const h = new TabHistories(dir, memento().m, log);
  const file = path.join(dir, 'chat-history-t1.json');
  const live = [msg('a')];
  h.saveSoon('t1', [msg('old')], live, 'p');
  live.push(msg('later')); // the next turn's entities are not in this turn's copy
  h.saveSoon('t1', [msg('old')], [msg('a'), msg('b')], 'p');
  assert.equal(fs.existsSync(file), false, 'nothing written at once');
  assert.deepEqual(
    new TabHistories(dir, memento().m, log).get('t1').map((e) => e.id),
    [],
  );
  h.saveSoon('t2', [], [msg('c')], 'q');
  h.flush();
  assert.deepEqual(
    read(file).map((e) => e.id),
    ['old', 'p:a', 'p:b'],
  );
  assert.deepEqual(
    read(path.join(dir, 'chat-history-t2.json')).map((e) => e.id),
    ['q:c'],
  );
  const h2 = new TabHistories(dir, memento().m, log);
  h2.saveSoon('t3', [], live, 'r');
  live.push(msg('after'));
  assert.deepEqual(
    h2.get('t3').map((e) => e.id),
    ['r:a', 'r:later'],
    'the copy read before it is written: the entities as the turn ended',
  );
  await until(() => fs.existsSync(path.join(dir, 'chat-history-t3.json')), { what: 'the copy written after the delay', timeoutMs: 10_000 });
});
