import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { defaultStateDir, exportFileName, SessionStore, titleFrom, transcriptMarkdown } from '../../src/session/sessionStore';
import type { TimelineEntity } from '../../src/session/sessionModel';
import { scratchDir } from '../support/paths';

test('state dir: XDG_STATE_HOME when absolute, else ~/.local/state', () => {
  assert.equal(defaultStateDir({ XDG_STATE_HOME: '/x/state' }), '/x/state/agent-host');
  assert.match(defaultStateDir({ XDG_STATE_HOME: 'relative' }), /\.local\/state\/agent-host$/);
});

test('index: upsert keeps the first prompt and title, newest first, rename, delete', async () => {
  const dir = scratchDir('store');
  const store = new SessionStore(dir);
  store.upsert({ sessionId: 'a', agent: 'codex', cwd: '/w', firstPrompt: 'Fix the parser\nand more' });
  await new Promise((r) => setTimeout(r, 5));
  store.upsert({ sessionId: 'b', agent: 'claude', cwd: '/v', firstPrompt: 'x'.repeat(200) });
  await new Promise((r) => setTimeout(r, 5));
  store.upsert({ sessionId: 'a', agent: 'codex', cwd: '/w', firstPrompt: 'A later prompt' });
  assert.deepEqual(
    store.list().map((r) => r.sessionId),
    ['a', 'b'],
  );
  assert.equal(store.get('a')!.title, 'Fix the parser');
  assert.equal(store.get('a')!.firstPrompt, 'Fix the parser\nand more');
  assert.equal(store.get('b')!.title.length, 80);
  assert.deepEqual(
    store.list({ agent: 'claude' }).map((r) => r.sessionId),
    ['b'],
  );
  assert.deepEqual(
    store.list({ cwd: '/w' }).map((r) => r.sessionId),
    ['a'],
  );
  assert.equal(store.rename('a', 'Parser work'), true);
  assert.equal(store.get('a')!.title, 'Parser work');
  assert.equal(store.rename('nope', 'x'), false);
  assert.equal(store.delete('b'), true);
  assert.equal(store.delete('b'), false);
  assert.deepEqual(
    store.list().map((r) => r.sessionId),
    ['a'],
  );
  // Deleted here while the agent keeps it: hidden from lists from now on.
  assert.equal(store.delete('kept-by-agent', true), true);
  assert.deepEqual([...store.hidden()], ['kept-by-agent']);
  assert.deepEqual(
    store.list().map((r) => r.sessionId),
    ['a'],
  );
  // Files are private to the user; no temporary file is left.
  const index = path.join(dir, 'sessions', 'index.json');
  assert.equal(fs.statSync(index).mode & 0o777, 0o600);
  assert.deepEqual(
    fs.readdirSync(path.dirname(index)).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('transcripts: an agent-chosen id never names a path; slim copy; markdown export', () => {
  const dir = scratchDir('store');
  const store = new SessionStore(dir);
  const hostile = '../../../etc/passwd';
  const entities: TimelineEntity[] = [
    { kind: 'message', id: 'u1', role: 'user', text: 'Explain this', parts: [{ type: 'text', text: 'Explain this' }] },
    { kind: 'tool_call', id: 't1', title: 'Read a.ts', toolKind: 'read', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'big' } }] as never, locations: [] },
    { kind: 'message', id: 'a1', role: 'agent', text: 'It parses.', parts: [{ type: 'text', text: 'It parses.' }] },
    { kind: 'notice', id: 'n1', severity: 'info', title: 'Session resumed' } as TimelineEntity,
  ];
  store.saveTranscript(hostile, entities);
  const files = fs.readdirSync(path.join(dir, 'sessions', 'transcripts'));
  assert.equal(files.length, 1);
  assert.match(files[0]!, /^[0-9a-f]{32}\.json$/);
  const back = store.transcript(hostile)!;
  assert.equal(back.length, 4);
  assert.deepEqual((back[1] as { content: unknown[] }).content, [], 'tool output is not kept');
  const md = transcriptMarkdown({ title: 'T', agent: 'codex', cwd: '/w', sessionId: hostile, updatedAt: 'now' }, back);
  assert.match(md, /^# T\n/);
  assert.match(md, /## User\n\nExplain this\n\n- Tool `read`: Read a.ts \(completed\)\n\n## Agent\n\nIt parses\.\n\n> \*\*Session resumed\*\*/);
  assert.equal(store.transcript('missing'), undefined);
});

test('an export suggests a clean file name: words joined by -, nothing dangling, never hidden or empty', () => {
  assert.equal(exportFileName('HIST-ONE-AGAIN what was it about?'), 'HIST-ONE-AGAIN-what-was-it-about.md');
  assert.equal(exportFileName('  Fix the parser…  '), 'Fix-the-parser.md');
  assert.equal(exportFileName('../../etc/passwd'), 'etc-passwd.md');
  assert.equal(exportFileName('重构 解析器'), '重构-解析器.md');
  assert.equal(exportFileName('???'), 'session.md');
  assert.ok(exportFileName(`${'a '.repeat(50)}?`).length <= 63);
});

test('a damaged index is moved aside with a warning, not silently overwritten', () => {
  const dir = scratchDir('store');
  const index = path.join(dir, 'sessions', 'index.json');
  fs.mkdirSync(path.dirname(index), { recursive: true });
  fs.writeFileSync(index, '{not json');
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  const store = new SessionStore(dir);
  assert.deepEqual(store.list(), []);
  store.upsert({ sessionId: 'x', agent: 'a', cwd: '/w' });
  assert.equal(store.list().length, 1);
  const aside = fs.readdirSync(path.dirname(index)).filter((f) => f.startsWith('index.json.damaged-'));
  assert.equal(aside.length, 1);
  assert.equal(fs.readFileSync(path.join(path.dirname(index), aside[0]!), 'utf8'), '{not json');
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      process.off('warning', onWarning);
      assert.ok(warnings.some((w) => /session index was unreadable/.test(w)));
      assert.equal(titleFrom('  one\ntwo'), 'one');
      resolve();
    }),
  );
});

test("a turn's transcript copy waits: the turns of the delay cost one write, this store reads the waiting copy, flush and delete settle it", async () => {
  const dir = scratchDir('store-soon');
  const store = new SessionStore(dir);
  const other = new SessionStore(dir); // another process: reads only the files
  const turn = (n: number): TimelineEntity[] =>
    Array.from({ length: n }, (_, i) => ({ kind: 'message', id: `m${i}`, role: 'agent', text: `answer ${i}`, parts: [{ type: 'text', text: `answer ${i}` }] }));
  const transcripts = path.join(dir, 'sessions', 'transcripts');
  const writes = () => (fs.existsSync(transcripts) ? fs.readdirSync(transcripts).length : 0);
  for (let n = 1; n <= 5; n++) store.saveTranscriptSoon('s1', turn(n), undefined, 200);
  assert.equal(writes(), 0, 'nothing written before the delay');
  assert.equal(store.transcript('s1')?.length, 5, 'this store reads the waiting copy');
  assert.equal(other.transcript('s1'), undefined);
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(other.transcript('s1')?.length, 5, 'written once the delay passed: the newest copy');
  store.saveTranscriptSoon('s1', turn(7), undefined, 60_000);
  store.flush();
  assert.equal(other.transcript('s1')?.length, 7, 'flush writes what waits');
  store.saveTranscriptSoon('s2', turn(2), undefined, 60_000);
  store.delete('s2');
  store.flush();
  assert.equal(other.transcript('s2'), undefined, 'a deleted session is not written back by a waiting copy');
  const failures: string[] = [];
  fs.writeFileSync(path.join(dir, 'a-file'), '');
  const broken = new SessionStore(path.join(dir, 'a-file'));
  broken.saveTranscriptSoon('s3', turn(1), (id, error) => failures.push(`${id}: ${error.message}`), 60_000);
  broken.flush();
  assert.equal(failures.length, 1, `a failed write is reported: ${failures}`);
});
