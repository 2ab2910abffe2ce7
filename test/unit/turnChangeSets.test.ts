/**
 * The turn changes of each chat tab (src/host/turnChangeSets.ts) on a real folder: a turn's summary counts files
 * and lines with the `diff` package; two tabs whose turns run at once each keep the files their tool calls named
 * (a change no tool call named goes to both); a later turn of a tab replaces its set; reverting one file of a turn
 * leaves the others. And the chat card's diff (webview-ui/src/diff.ts) from the same package.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { hunkAt, lineCounts, TurnChangeSets } from '../../src/host/turnChangeSets';
import { SessionModel } from '../../src/session/sessionModel';
import { diffHunks } from '../../webview-ui/src/diff';

function folder(): { root: string; file: (name: string, text?: string) => string; read: (name: string) => string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'turn-sets-'));
  return {
    root,
    file: (name, text) => {
      const p = path.join(root, name);
      if (text === undefined) fs.rmSync(p, { force: true });
      else fs.writeFileSync(p, text);
      return p;
    },
    read: (name) => fs.readFileSync(path.join(root, name), 'utf8'),
  };
}

/** A tool call of the tab's agent that names a file, as an adapter records it. */
function edits(model: SessionModel, id: string, file: string): void {
  model.upsertToolCall({ id, title: `Edit ${file}`, toolKind: 'edit', status: 'completed', locations: [{ path: file }] });
}

const TEN = `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

test('a turn that edits two files, creates one and deletes one: 4 files, its lines counted; one file reverted leaves the others', async () => {
  const f = folder();
  f.file('a.txt', TEN);
  f.file('b.txt', 'b\n');
  f.file('gone.txt', 'x\ny\n');
  const sets = new TurnChangeSets(() => [f.root]);
  const model = new SessionModel('s');
  await sets.begin('tab-1', () => model);
  f.file('a.txt', TEN.replace('line 2\n', 'line two\n').replace('line 9\n', 'line nine\n'));
  f.file('b.txt', 'b\nmore\n');
  f.file('new.txt', 'one\ntwo\nthree\n');
  f.file('gone.txt');
  const summary = await sets.end('tab-1');
  assert.deepEqual(summary, { tab: 'tab-1', turn: 1, files: 4, added: 2 + 1 + 3, removed: 2 + 0 + 2 });
  assert.deepEqual(await sets.end('tab-1'), undefined, 'a turn ends once');
  const now = await sets.changes('tab-1');
  assert.deepEqual(
    now?.changes.map((c) => [path.basename(c.path), c.status]),
    [
      ['a.txt', 'modified'],
      ['b.txt', 'modified'],
      ['gone.txt', 'deleted'],
      ['new.txt', 'added'],
    ],
  );
  assert.equal(sets.before('tab-1', 1, path.join(f.root, 'a.txt')), TEN);
  assert.equal(sets.before('tab-1', 2, path.join(f.root, 'a.txt')), undefined, 'another turn has no content');
  assert.deepEqual(await sets.revert('tab-1', [path.join(f.root, 'gone.txt'), path.join(f.root, 'new.txt')]), []);
  assert.equal(f.read('gone.txt'), 'x\ny\n');
  assert.ok(!fs.existsSync(path.join(f.root, 'new.txt')));
  assert.equal(f.read('b.txt'), 'b\nmore\n', 'a file not named stays as the turn left it');
  assert.deepEqual((await sets.summary('tab-1'))?.files, 2);
  fs.rmSync(f.root, { recursive: true, force: true });
});

test('two tabs writing at once: each keeps the files its tool calls named; a change nobody named goes to both', async () => {
  const f = folder();
  f.file('one.txt', 'one\n');
  f.file('two.txt', 'two\n');
  const sets = new TurnChangeSets(() => [f.root]);
  const [m1, m2] = [new SessionModel('s1'), new SessionModel('s2')];
  await sets.begin('tab-1', () => m1);
  await sets.begin('tab-2', () => m2);
  f.file('one.txt', 'one by tab 1\n');
  edits(m1, 't1', 'one.txt');
  f.file('two.txt', 'two by tab 2\n');
  edits(m2, 't2', path.join(f.root, 'two.txt'));
  f.file('shell.txt', 'nobody named me\n');
  const first = await sets.end('tab-1');
  const second = await sets.end('tab-2');
  const names = async (tab: string) => (await sets.changes(tab))?.changes.map((c) => path.basename(c.path));
  assert.deepEqual(await names('tab-1'), ['one.txt', 'shell.txt']);
  assert.deepEqual(await names('tab-2'), ['shell.txt', 'two.txt']);
  assert.equal(first?.files, 2);
  assert.equal(second?.files, 2);
  // Undo all of tab 1 leaves tab 2's file.
  assert.deepEqual(await sets.revert('tab-1'), []);
  assert.equal(f.read('one.txt'), 'one\n');
  assert.equal(f.read('two.txt'), 'two by tab 2\n');
  // The next turn of tab 2 replaces its set; a closed tab's goes.
  await sets.begin('tab-2', () => m2);
  assert.equal((await sets.end('tab-2'))?.files, 0);
  sets.keepOnly(['tab-2']);
  assert.equal(await sets.changes('tab-1'), undefined);
  fs.rmSync(f.root, { recursive: true, force: true });
});

test('lines counted and the card diff come from the diff package: hunks with context, gaps between them', () => {
  assert.deepEqual(lineCounts('a\nb\nc\n', 'a\nB\nc\nd\n'), { added: 2, removed: 1 });
  assert.deepEqual(lineCounts('', 'x\n'), { added: 1, removed: 0 });
  const after = TEN.replace('line 1\n', 'line one\n').replace('line 10\n', 'line ten\n');
  const lines = diffHunks(TEN, after, 1);
  assert.deepEqual(
    lines.map((l) => (l ? `${l.op}${l.text}` : '…')),
    ['-line 1', '+line one', ' line 2', '…', ' line 9', '-line 10', '+line ten'],
  );
  assert.deepEqual(
    diffHunks('a\nb\nc\nd\ne\n', 'a\nb\nC\nd\ne\n', 1).map((l) => (l ? `${l.op}${l.text}` : '…')),
    ['…', ' b', '-c', '+C', ' d', '…'],
  );
  assert.deepEqual(
    diffHunks('', 'new\n').map((l) => (l ? `${l.op}${l.text}` : '…')),
    ['+new'],
  );
});

test("a turn's summary in the transcript: the files and lines, worded from the catalog", () => {
  const model = new SessionModel('s');
  const n = model.changesSummary({ tab: 'tab-1', turn: 3, files: 4, added: 6, removed: 4 });
  assert.equal(n.title, '4 files changed');
  assert.equal(n.detail, '+6 −4');
  assert.equal(n.code, 'changes');
  assert.deepEqual(n.changes, { tab: 'tab-1', turn: 3, files: 4, added: 6, removed: 4 });
  assert.equal(model.changesSummary({ tab: 'tab-1', turn: 4, files: 1, added: 1, removed: 0 }).title, '1 file changed');
});

test('the change at a line: its lines go back to their text before the turn, the other change stays', () => {
  const now = TEN.replace('line 2\n', 'line two\nline two b\n').replace('line 9\n', '');
  const apply = (text: string, h: NonNullable<ReturnType<typeof hunkAt>>) => {
    const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    return [...lines.slice(0, h.from), h.before, ...lines.slice(h.to)].join('');
  };
  const first = hunkAt(TEN, now, 2);
  assert.deepEqual(first, { from: 1, to: 3, before: 'line 2\n' });
  assert.equal(apply(now, first!), TEN.replace('line 9\n', ''), 'the deletion further down stays');
  // The deletion of line 9 answers on the line before it (line 8) and after it (line 10); it goes back before line 10.
  const second = hunkAt(TEN, now, 8);
  assert.deepEqual(second, { from: 9, to: 9, before: 'line 9\n' });
  assert.deepEqual(hunkAt(TEN, now, 9), second);
  assert.equal(apply(now, second!), TEN.replace('line 2\n', 'line two\nline two b\n'));
  assert.equal(hunkAt(TEN, now, 5), undefined, 'no change on an unchanged line');
});
