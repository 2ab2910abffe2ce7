/**
 * The checkpoint store (src/host/checkpoints.ts) on real folders with the real git: a restore brings the folder
 * back byte for byte (modified, created, deleted, renamed, binary, mode), leaves ignored and excluded files alone,
 * keeps a user's own repository untouched, skips files over the size bound and prunes past `keep`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { CheckpointStore, CheckpointTooLargeError, checkpointFolders, DEFAULT_CHECKPOINT_LIMITS, excludePatterns, restoreFolders } from '../../src/host/checkpoints';
import { SessionModel } from '../../src/session/sessionModel';
import { slimEntity } from '../../src/session/transcriptCopy';
import { scratchDir } from '../support/paths';

function setup() {
  const base = fs.realpathSync(scratchDir('checkpoints'));
  const ws = path.join(base, 'ws');
  const storage = path.join(base, 'storage');
  fs.mkdirSync(ws, { recursive: true });
  return { base, ws, storage, cleanup: () => fs.rmSync(base, { recursive: true, force: true }) };
}

/** Every file of a folder (but `.git`) with its bytes and mode: the byte-for-byte comparison. */
function snapshot(dir: string, skip = new Set(['.git'])): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (skip.has(e.name)) continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), `${(fs.statSync(p).mode & 0o777).toString(8)}:${fs.readFileSync(p).toString('base64')}`);
    }
  };
  walk(dir);
  return out;
}

const write = (ws: string, rel: string, content: string | Buffer) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), content);
};

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' } });

describe('checkpoint store', () => {
  it('restores modified, created, deleted and renamed files byte for byte; ignored and excluded files untouched', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      write(ws, 'a.txt', 'alpha\r\nwith CRLF\r\n');
      write(ws, 'src/b.ts', 'export const b = 1;\n');
      write(ws, 'src/deep/c.bin', Buffer.from([0, 1, 2, 255, 13, 10, 0]));
      write(ws, 'run.sh', '#!/bin/sh\necho hi\n');
      fs.chmodSync(path.join(ws, 'run.sh'), 0o755);
      write(ws, '.gitattributes', '* text=auto eol=crlf\n'); // must not convert what is restored
      write(ws, '.gitignore', 'build/\n');
      write(ws, 'build/out.js', 'built 1\n');
      write(ws, 'secret.env', 'excluded 1\n');
      const store = new CheckpointStore(storage);
      const before = snapshot(ws);
      const cp = await store.create(ws, 'tab-1: first prompt', ['secret.env']);
      assert.match(cp.id, /^[0-9a-f]{40}$/);

      write(ws, 'a.txt', 'changed\n');
      fs.rmSync(path.join(ws, 'src/b.ts'));
      fs.renameSync(path.join(ws, 'src/deep/c.bin'), path.join(ws, 'moved.bin'));
      fs.rmdirSync(path.join(ws, 'src/deep'));
      write(ws, 'new/dir/created.txt', 'created by the agent\n');
      fs.chmodSync(path.join(ws, 'run.sh'), 0o644);
      write(ws, 'build/out.js', 'built 2\n');
      write(ws, 'secret.env', 'excluded 2\n');

      await store.restoreFiles(ws, cp.id);
      const after = snapshot(ws);
      assert.equal(after.get('build/out.js'), snapshot(ws).get('build/out.js'));
      assert.equal(fs.readFileSync(path.join(ws, 'build/out.js'), 'utf8'), 'built 2\n', 'an ignored file is left as it is');
      assert.equal(fs.readFileSync(path.join(ws, 'secret.env'), 'utf8'), 'excluded 2\n', 'an excluded file is left as it is');
      after.delete('build/out.js');
      after.delete('secret.env');
      before.delete('build/out.js');
      before.delete('secret.env');
      assert.deepEqual(after, before);
      assert.equal(fs.existsSync(path.join(ws, 'new')), false, 'created folders go with their files');
      assert.deepEqual(
        (await store.list(ws)).map((c) => c.label),
        ['tab-1: first prompt'],
      );
    } finally {
      cleanup();
    }
  });

  it('a checkpoint with no change is cheap, and a later checkpoint restores to its own state', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      write(ws, 'f.txt', 'one\n');
      const store = new CheckpointStore(storage);
      const first = await store.create(ws, 'one');
      const same = await store.create(ws, 'same');
      assert.notEqual(first.id, same.id);
      write(ws, 'f.txt', 'two\n');
      write(ws, 'g.txt', 'g\n');
      const second = await store.create(ws, 'two');
      write(ws, 'f.txt', 'three\n');
      await store.restoreFiles(ws, second.id);
      assert.equal(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8'), 'two\n');
      await store.restoreFiles(ws, first.id);
      assert.equal(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8'), 'one\n');
      assert.equal(fs.existsSync(path.join(ws, 'g.txt')), false);
      await assert.rejects(store.restoreFiles(ws, 'a'.repeat(40)), /no longer kept/);
      await assert.rejects(store.restoreFiles(ws, '--upload-pack=x'), /Not a checkpoint id/);
    } finally {
      cleanup();
    }
  });

  it('a folder that is a git repository: its .git, index and status are not touched', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      git(ws, 'init', '-q');
      write(ws, 'tracked.txt', 'v1\n');
      git(ws, 'add', 'tracked.txt');
      git(ws, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init');
      write(ws, 'tracked.txt', 'v2 unstaged\n');
      write(ws, 'untracked.txt', 'u\n');
      const status = git(ws, 'status', '--porcelain');
      git(ws, 'update-index', '-q', '--refresh'); // the index's stat data current: only a writer would change it now
      const gitBefore = snapshot(path.join(ws, '.git'), new Set());
      const indexTime = fs.statSync(path.join(ws, '.git', 'index')).mtimeMs;

      const store = new CheckpointStore(storage);
      const cp = await store.create(ws, 'p');
      write(ws, 'tracked.txt', 'v3 by the agent\n');
      fs.rmSync(path.join(ws, 'untracked.txt'));
      await store.restoreFiles(ws, cp.id);

      assert.equal(fs.readFileSync(path.join(ws, 'tracked.txt'), 'utf8'), 'v2 unstaged\n');
      assert.equal(fs.readFileSync(path.join(ws, 'untracked.txt'), 'utf8'), 'u\n');
      assert.deepEqual(snapshot(path.join(ws, '.git'), new Set()), gitBefore);
      assert.equal(fs.statSync(path.join(ws, '.git', 'index')).mtimeMs, indexTime);
      assert.equal(git(ws, 'status', '--porcelain'), status);
      assert.equal(git(ws, 'ls-files'), 'tracked.txt\n');
    } finally {
      cleanup();
    }
  });

  it('size bound: a file over maxFileBytes is not kept nor touched by a restore; too much change refuses the checkpoint', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      const store = new CheckpointStore(storage, undefined, { ...DEFAULT_CHECKPOINT_LIMITS, maxFileBytes: 1000, maxChangedBytes: 5000 });
      write(ws, 'small.txt', 's1\n');
      write(ws, 'big.dat', 'x'.repeat(2000));
      const cp = await store.create(ws, 'p');
      assert.deepEqual(cp.skipped, ['big.dat']);
      write(ws, 'big.dat', 'y'.repeat(3000));
      write(ws, 'small.txt', 's2\n');
      await store.restoreFiles(ws, cp.id);
      assert.equal(fs.readFileSync(path.join(ws, 'small.txt'), 'utf8'), 's1\n');
      assert.equal(fs.readFileSync(path.join(ws, 'big.dat'), 'utf8'), 'y'.repeat(3000));
      write(ws, 'small.txt', 'g'.repeat(1500)); // kept before, past the bound now: left out from here on
      const grown = await store.create(ws, 'grown');
      assert.deepEqual(grown.skipped, ['small.txt']);
      await store.restoreFiles(ws, cp.id);
      assert.equal(fs.readFileSync(path.join(ws, 'small.txt'), 'utf8'), 'g'.repeat(1500), 'a file grown past the bound is not touched');
      for (let i = 0; i < 10; i++) write(ws, `many/${i}.txt`, 'z'.repeat(900));
      await assert.rejects(store.create(ws, 'q'), (e: unknown) => e instanceof CheckpointTooLargeError && /the bound is/.test((e as Error).message));
    } finally {
      cleanup();
    }
  });

  it('keeps the newest `keep` checkpoints per folder; two folders have their own stores', async () => {
    const { base, ws, storage, cleanup } = setup();
    try {
      const other = path.join(base, 'other');
      fs.mkdirSync(other);
      const store = new CheckpointStore(storage, undefined, { ...DEFAULT_CHECKPOINT_LIMITS, keep: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 13; i++) {
        write(ws, 'n.txt', `${i}\n`);
        ids.push((await store.create(ws, `p${i}`)).id);
      }
      const kept = await store.list(ws);
      assert.deepEqual(
        kept.map((c) => c.label),
        ['p12', 'p11'],
      );
      await assert.rejects(store.restoreFiles(ws, ids[0]!), /no longer kept/);
      write(other, 'o.txt', 'o\n');
      await store.create(other, 'o');
      assert.notEqual(store.storeOf(other), store.storeOf(ws));
      assert.deepEqual(
        (await store.list(other)).map((c) => c.label),
        ['o'],
      );
    } finally {
      cleanup();
    }
  });

  it('warm reads the folder in before any checkpoint, and many loose objects are packed after it', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      for (let i = 0; i < 60; i++) write(ws, `d${i % 10}/f${i}.txt`, `file ${i}\n`);
      const store = new CheckpointStore(storage, undefined, { ...DEFAULT_CHECKPOINT_LIMITS, maxLoose: 50 });
      await store.warm(ws);
      await store.list(ws); // after the pack queued behind the warm
      const counts = execFileSync('git', [`--git-dir=${store.storeOf(ws)}`, 'count-objects', '-v'], { encoding: 'utf8' });
      assert.match(counts, /^count: 0$/m, counts);
      assert.match(counts, /^in-pack: 60$/m, counts);
      assert.deepEqual(await store.list(ws), [], 'warm takes no checkpoint');
      write(ws, 'd0/f0.txt', 'changed\n');
      const cp = await store.create(ws, 'p');
      write(ws, 'd0/f0.txt', 'changed again\n');
      await store.restoreFiles(ws, cp.id);
      assert.equal(fs.readFileSync(path.join(ws, 'd0/f0.txt'), 'utf8'), 'changed\n');
    } finally {
      cleanup();
    }
  });

  it('two tabs at once: checkpoints of one folder taken together each get their own commit (one git at a time per store)', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      for (let i = 0; i < 200; i++) write(ws, `f${i}.txt`, `${i}\n`);
      const store = new CheckpointStore(storage);
      const taken = await Promise.all(Array.from({ length: 6 }, (_, i) => store.create(ws, `tab ${i % 2}: prompt ${i}`)));
      assert.equal(new Set(taken.map((t) => t.id)).size, 6);
      assert.deepEqual((await store.list(ws)).map((c) => c.label).sort(), Array.from({ length: 6 }, (_, i) => `tab ${i % 2}: prompt ${i}`).sort());
    } finally {
      cleanup();
    }
  });

  it('a file kept by a checkpoint and ignored since is left alone by a restore', async () => {
    const { ws, storage, cleanup } = setup();
    try {
      const store = new CheckpointStore(storage);
      write(ws, 'a.txt', 'a\n');
      const empty = await store.create(ws, 'before the file');
      write(ws, 'local.env', 'TOKEN=1\n');
      const withFile = await store.create(ws, 'with the file');
      write(ws, '.gitignore', 'local.env\n');
      write(ws, 'local.env', 'TOKEN=2\n');
      const untouched = fs.statSync(path.join(ws, 'a.txt')).mtimeMs;
      await store.restoreFiles(ws, withFile.id);
      assert.equal(fs.readFileSync(path.join(ws, 'local.env'), 'utf8'), 'TOKEN=2\n', 'an ignored file the checkpoint kept is not rewritten');
      assert.equal(fs.statSync(path.join(ws, 'a.txt')).mtimeMs, untouched, 'an unchanged file is not written');
      write(ws, '.gitignore', 'local.env\n');
      await store.restoreFiles(ws, empty.id);
      assert.equal(fs.readFileSync(path.join(ws, 'local.env'), 'utf8'), 'TOKEN=2\n', 'an ignored file is neither deleted nor rewritten');
      assert.equal(fs.existsSync(path.join(ws, '.gitignore')), false, 'the .gitignore created since goes');
    } finally {
      cleanup();
    }
  });

  it('files.exclude globs become gitignore patterns (anchored unless they start with **/, braces expanded, `when` clauses left out)', () => {
    assert.deepEqual(excludePatterns({ '**/.git': true, 'out/**': true, '**/*.{log,tmp}': true, off: false, '**/*.js': { when: '$(basename).ts' } }), ['**/.git', '/out/**', '**/*.log', '**/*.tmp']);
  });

  it('a workspace of two folders: one checkpoint each; a folder no longer in the workspace is not restored', async () => {
    const { base, ws, storage, cleanup } = setup();
    try {
      const other = path.join(base, 'other');
      fs.mkdirSync(other);
      write(ws, 'a.txt', 'a1\n');
      write(other, 'b.txt', 'b1\n');
      const store = new CheckpointStore(storage);
      const taken = await checkpointFolders(store, [ws, other, path.join(base, 'missing')], 'p', () => []);
      assert.deepEqual(Object.keys(taken), [ws, other], 'a folder that fails is left out, the others kept');
      write(ws, 'a.txt', 'a2\n');
      write(other, 'b.txt', 'b2\n');
      const failed = await restoreFolders(store, taken, [ws]);
      assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'a1\n');
      assert.equal(fs.readFileSync(path.join(other, 'b.txt'), 'utf8'), 'b2\n');
      assert.deepEqual(failed, [`${other}: no longer a workspace folder`]);
    } finally {
      cleanup();
    }
  });
});

describe('a user message carries its checkpoint', () => {
  it('the next user message takes the checkpoint (not an agent message), keeps it in the history copy, and truncation drops it and what followed', () => {
    const model = new SessionModel('s');
    const events: string[] = [];
    model.on((e) => events.push(e.type));
    model.appendChunk('user', { type: 'text', text: 'first' }, 'u1');
    model.nextCheckpoint = { '/ws': 'c'.repeat(40) };
    model.appendChunk('agent', { type: 'text', text: 'answer' }, 'a1');
    const second = model.appendChunk('user', { type: 'text', text: 'second' }, 'u2');
    model.appendChunk('agent', { type: 'text', text: 'later' }, 'a2');
    const third = model.appendChunk('user', { type: 'text', text: 'third' }, 'u3');
    assert.deepEqual(second.checkpoint, { '/ws': 'c'.repeat(40) });
    assert.equal(model.messages('agent')[0]!.checkpoint, undefined);
    assert.equal(model.messages('user')[0]!.checkpoint, undefined);
    assert.equal(third.checkpoint, undefined, 'one checkpoint, one message');
    assert.deepEqual((slimEntity(second) as typeof second).checkpoint, second.checkpoint);
    model.truncateFrom(second);
    assert.deepEqual(
      model.timeline().map((e) => (e.kind === 'message' ? e.text : e.kind)),
      ['first', 'answer'],
    );
    assert.equal(events.at(-1), 'truncated');
  });
});
