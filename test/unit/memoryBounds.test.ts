/**
 * What the extension host keeps per message, measured: a message past the limit keeps its head in memory and its
 * whole text in the session store's folder; a one-part message holds one string (not a second copy in its part);
 * the traffic ring's clip of a frame holds its own characters, not the whole frame it was cut from. The heap is
 * read after a full collection (`--expose-gc` turned on here).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type TestContext, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { boundedModel, longTextDir, longTextStore, MESSAGE_TEXT_LIMIT } from '../../src/session/longText';
import { type NoticeEntity, SessionModel } from '../../src/session/sessionModel';
import { SessionStore } from '../../src/session/sessionStore';
import { TrafficLog } from '../../src/session/traffic';
import { boundedHistory } from '../../src/session/transcriptCopy';
import { scratchDir } from '../support/paths';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 2 ** 20;
/** Heap in use after a full collection. */
function heap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
/** A string of `n` characters built fresh (not shared with any other). */
/** A scratch folder removed when the test ends. */
function scratch(t: TestContext, prefix: string): string {
  const dir = scratchDir(prefix);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
const fresh = (n: number, seed: number) => `${seed}:`.padEnd(n, String.fromCharCode(97 + (seed % 26)));

test('a message past the limit keeps its head in memory, its whole text in a file, and a notice says where', (t) => {
  const dir = scratch(t, 'long-text');
  const model = new SessionModel('s1');
  model.longText = longTextStore(dir, 1000);
  const events: string[] = [];
  model.on((e) => events.push(e.type === 'entity' ? `entity:${e.entity.kind}` : e.type));
  let whole = '';
  for (let i = 0; i < 30; i++) {
    const chunk = `chunk ${String(i).padStart(3, '0')} ${'x'.repeat(90)}\n`;
    whole += chunk;
    model.appendChunk('agent', { type: 'text', text: chunk }, 'm1');
  }
  const m = model.messages('agent')[0]!;
  assert.equal(m.text, whole.slice(0, 1000), 'the head stays in memory');
  assert.deepEqual(m.parts, [{ type: 'text', text: whole.slice(0, 1000) }]);
  assert.equal(m.long?.chars, whole.length);
  assert.equal(path.dirname(m.long!.file), dir);
  assert.equal(fs.readFileSync(m.long!.file, 'utf8'), whole, 'the file holds the whole message');
  // The page still gets every chunk (appends); one notice under the message names the file.
  assert.equal(events.filter((e) => e === 'append').length, 29);
  const notices = model.timeline().filter((e): e is NoticeEntity => e.kind === 'notice');
  assert.equal(notices.length, 1);
  assert.ok(notices[0]!.detail?.includes(m.long!.file), notices[0]!.detail);
  // The chat offers to open it: the notice says what it is and which file.
  assert.equal(notices[0]!.code, 'long');
  assert.equal(notices[0]!.file, m.long!.file);
  // Chunks after the notice still belong to the message (the notice does not close it).
  model.appendChunk('agent', { type: 'text', text: 'tail' });
  assert.equal(model.messages('agent').length, 1);
  assert.equal(fs.readFileSync(m.long!.file, 'utf8'), `${whole}tail`);
  // Deleting the session from the store removes its long messages' files.
  const store = new SessionStore(scratch(t, 'long-store'));
  const stored = new SessionModel('s2');
  stored.longText = longTextStore(longTextDir(store.dir), 10);
  stored.appendChunk('agent', { type: 'text', text: 'more than ten characters' }, 'a');
  const file = stored.messages('agent')[0]!.long!.file;
  assert.ok(fs.existsSync(file));
  store.upsert({ sessionId: 's2', agent: 'a', cwd: '/w' });
  store.delete('s2');
  assert.equal(fs.existsSync(file), false, "the deleted session's long message is gone");
});

test('a file that cannot be written: the head is kept, the notice says the write failed', (t) => {
  const dir = scratch(t, 'long-text-ro');
  fs.writeFileSync(path.join(dir, 'long'), 'a file where the folder should be');
  const model = new SessionModel('s1');
  model.longText = longTextStore(path.join(dir, 'long'), 10);
  model.appendChunk('agent', { type: 'text', text: 'twenty characters!!!' }, 'm');
  model.appendChunk('agent', { type: 'text', text: 'more' }, 'm');
  const m = model.messages('agent')[0]!;
  assert.equal(m.text, 'twenty cha');
  assert.equal(m.long?.chars, 24);
  assert.match(m.long?.error ?? '', /EEXIST|ENOTDIR/);
  const notice = model.timeline().find((e): e is NoticeEntity => e.kind === 'notice')!;
  assert.equal(notice.severity, 'warning');
  assert.equal(notice.file, undefined, 'no file to open');
  assert.match(notice.detail ?? '', /writing the whole message to .* failed \((EEXIST|ENOTDIR)/);
});

test('a session started by an adapter bounds its messages at MESSAGE_TEXT_LIMIT characters', (t) => {
  const model = boundedModel('s-default');
  const dir = scratch(t, 'long-default');
  model.longText = longTextStore(dir, model.longText?.limit);
  const chunk = 'y'.repeat(MiB);
  for (let i = 0; i < MESSAGE_TEXT_LIMIT / MiB + 2; i++) model.appendChunk('agent', { type: 'text', text: chunk }, 'big');
  const m = model.messages('agent')[0]!;
  assert.equal(MESSAGE_TEXT_LIMIT, 16 * MiB);
  assert.equal(m.text.length, MESSAGE_TEXT_LIMIT);
  assert.equal(m.long?.chars, MESSAGE_TEXT_LIMIT + 2 * MiB);
  assert.equal(fs.statSync(m.long!.file).size, MESSAGE_TEXT_LIMIT + 2 * MiB);
});

test('a streamed one-part message holds its text once, not again in its part', () => {
  const model = new SessionModel('s1');
  // In a frame of its own: no register of the test's holds the chunks.
  const stream = () => {
    for (let i = 0; i < 50_000; i++) model.appendChunk('agent', { type: 'text', text: fresh(80, i) }, 'm');
  };
  const before = heap();
  stream();
  // What the end of a turn does: the window's history and the session store clip the message (and V8 flattens its text).
  assert.equal(JSON.stringify(boundedHistory([], model.timeline())).length > 16_000, true);
  const grown = heap() - before;
  // 4,000,000 one-byte characters are 3.8 MiB; a second copy in the part (a tree over every chunk) is as much again and more.
  assert.ok(grown < 5.5 * MiB, `the message holds ${(grown / MiB).toFixed(1)} MiB for 3.8 MiB of text`);
});

test('the traffic ring keeps the clipped text of a big frame, not the whole frame', () => {
  const traffic = new TrafficLog();
  const before = heap();
  for (let i = 0; i < 60; i++) traffic.frame('in', { type: 'message_update', message: { content: [{ type: 'text', text: fresh(MiB, i) }] } });
  const grown = heap() - before;
  assert.equal(traffic.size.entries, 60);
  // 60 entries of 4,000 characters: under 1 MiB; the whole frames would be 60 MiB.
  assert.ok(grown < 8 * MiB, `the ring of 60 clipped frames holds ${(grown / MiB).toFixed(1)} MiB`);
});

test('the traffic ring holds its byte budget once full: a dropped entry is let go at once', () => {
  const traffic = new TrafficLog(2000, MiB);
  const before = heap();
  // 1,900 frames clipped to 4,000 characters: the budget keeps the newest 262; fewer than 2,000 dropped, so no bulk cut yet.
  for (let i = 0; i < 1900; i++) traffic.frame('in', { type: 'message_update', text: fresh(5000, i) });
  const grown = heap() - before;
  assert.ok(traffic.size.bytes <= MiB && traffic.size.entries > 200, JSON.stringify(traffic.size));
  assert.match(traffic.list().at(-1)!.text, /"1899:/);
  // 1 MiB of text kept; the dropped entries, if still held, would be 7 MiB more.
  assert.ok(grown < 3 * MiB, `a ring of 1 MiB holds ${(grown / MiB).toFixed(1)} MiB`);
});
