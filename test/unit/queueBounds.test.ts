/**
 * The bounds of the chat's prompt queue and the selection commands' task queue (src/core/boundedQueue.ts, the
 * code both use): filled to the bound, one more is refused and the held ones stay intact and run in order; a
 * changed setting takes effect at the next item; the manifest's defaults are the code's.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { enqueueBounded, QUEUE_BOUNDS, queueBound, SerialQueue } from '../../src/core/boundedQueue';
import { repoRoot } from '../support/paths';

const ROOT = repoRoot;

/** A job that runs until `release` is called, recording when it started into `log`. */
function heldJob(name: string, log: string[]): { job: () => Promise<void>; release: () => void } {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    job: async () => {
      log.push(`start ${name}`);
      await gate;
      log.push(`end ${name}`);
    },
    release: () => release(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the chat prompt queue bound', () => {
  it('takes prompts up to the bound, refuses the next and keeps the queued ones as they were', () => {
    const queue: { id: string; text: string }[] = [];
    for (let i = 1; i <= 3; i++) assert.equal(enqueueBounded(queue, { id: `q${i}`, text: `message ${i}` }, 3), true);
    assert.equal(enqueueBounded(queue, { id: 'q4', text: 'one too many' }, 3), false);
    assert.deepEqual(
      queue.map((q) => q.text),
      ['message 1', 'message 2', 'message 3'],
    );
    // One sent (shifted off): room for one more, at the end.
    queue.shift();
    assert.equal(enqueueBounded(queue, { id: 'q5', text: 'message 5' }, 3), true);
    assert.deepEqual(
      queue.map((q) => q.id),
      ['q2', 'q3', 'q5'],
    );
  });

  it('reads the setting: a whole number of at least 1, anything else is the default', () => {
    assert.equal(queueBound(5, QUEUE_BOUNDS.chatPrompts), 5);
    assert.equal(queueBound(1, QUEUE_BOUNDS.chatPrompts), 1);
    for (const bad of [undefined, 0, -3, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '7', null]) assert.equal(queueBound(bad, QUEUE_BOUNDS.chatPrompts), 20, `setting ${String(bad)}`);
  });
});

describe('the selection task queue bound', () => {
  it('runs the held tasks one at a time in order, refuses the one past the bound and loses none', async () => {
    const log: string[] = [];
    const queue = new SerialQueue(() => 3);
    const jobs = ['a', 'b', 'c'].map((n) => heldJob(n, log));
    const done = jobs.map((j) => queue.run(j.job));
    assert.ok(done.every((d) => d instanceof Promise));
    assert.equal(queue.size, 3);
    const refused = heldJob('d', log);
    assert.equal(queue.run(refused.job), undefined, 'the fourth task was taken past a bound of 3');
    await tick();
    assert.deepEqual(log, ['start a'], 'only the first task runs while the others wait');
    for (const j of jobs) {
      j.release();
      await tick();
    }
    await Promise.all(done);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.equal(queue.size, 0);
  });

  it('takes a task again once one ended, and a failing task does not stop the ones behind it', async () => {
    const log: string[] = [];
    const queue = new SerialQueue(() => 1);
    const first = queue.run(async () => {
      log.push('first');
      throw new Error('boom');
    });
    assert.equal(
      queue.run(async () => {}),
      undefined,
    );
    await assert.rejects(first!, /boom/);
    const second = queue.run(async () => void log.push('second'));
    assert.ok(second);
    await second;
    assert.deepEqual(log, ['first', 'second']);
  });

  it('applies a changed bound at the next task, keeping the ones already held', async () => {
    let setting: unknown = 2;
    const queue = new SerialQueue(() => queueBound(setting, QUEUE_BOUNDS.selectionTasks));
    const log: string[] = [];
    const jobs = ['a', 'b'].map((n) => heldJob(n, log));
    const done = jobs.map((j) => queue.run(j.job));
    assert.equal(
      queue.run(async () => {}),
      undefined,
      'a bound of 2 took a third task',
    );
    setting = 3;
    const c = heldJob('c', log);
    const third = queue.run(c.job);
    assert.ok(third, 'the bound raised to 3 did not take a third task');
    setting = 1;
    assert.equal(
      queue.run(async () => {}),
      undefined,
      'the bound lowered to 1 took a fourth task',
    );
    for (const j of [...jobs, c]) {
      j.release();
      await tick();
    }
    await Promise.all([...done, third]);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'], 'lowering the bound dropped or reordered held tasks');
  });

  it('takes a replacing task past the bound (the held ones were cancelled), and an at-once task without waiting', async () => {
    const log: string[] = [];
    const queue = new SerialQueue(() => 1);
    const a = heldJob('a', log);
    const first = queue.run(a.job);
    const second = queue.run(async () => void log.push('replacing'), { replacing: true, atOnce: true });
    assert.ok(second, 'a replacing task was refused');
    await second;
    assert.deepEqual(log, ['start a', 'replacing'], 'the at-once task waited for the held one');
    a.release();
    await first;
  });
});

describe('the queue settings', () => {
  it('are declared with the code defaults and a description in both languages', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const props = manifest.contributes.configuration.properties;
    const nls = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.json'), 'utf8'));
    const zh = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.zh-cn.json'), 'utf8'));
    for (const [key, fallback] of [
      ['agentHost.chat.maxQueuedPrompts', QUEUE_BOUNDS.chatPrompts],
      ['agentHost.tasks.maxQueued', QUEUE_BOUNDS.selectionTasks],
    ] as const) {
      const prop = props[key];
      assert.ok(prop, `${key} is not declared`);
      assert.equal(prop.default, fallback, `${key}'s default is not the code's`);
      assert.equal(prop.minimum, 1);
      const nlsKey = String(prop.markdownDescription).replace(/^%|%$/g, '');
      assert.ok(nls[nlsKey] && zh[nlsKey], `${key} has no description in both languages`);
    }
  });
});
