/**
 * Streaming through the headless CLI is linear in the message's length: each chunk is printed (text) or
 * emitted as one small `append` event (JSON) — never the whole message so far.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const CHUNKS = 20_000;

function cli(format: 'text' | 'json') {
  return spawnSync(process.execPath, [cliPath, '--command', process.execPath, '--arg', hostileAgent, '--arg', 'flood', '--arg', String(CHUNKS), '--cwd', scratchDir('flood'), '--format', format, 'go'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 120_000,
  });
}

test(`JSON: ${CHUNKS.toLocaleString('en')} chunks are ${(CHUNKS - 1).toLocaleString('en')} append events of one chunk each (output linear in the message)`, () => {
  const r = cli('json');
  assert.equal(r.status, 0, r.stderr);
  const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; text?: string; id?: string });
  const appends = events.filter((e) => e.type === 'append');
  assert.equal(appends.length, CHUNKS - 1, 'the first chunk creates the message; every later one is an append');
  assert.ok(appends.every((e) => e.text === undefined || e.text.length < 20), 'an append carries its chunk only');
  // The whole message streamed once: about 12 bytes a chunk plus the event's own fields.
  assert.ok(r.stdout.length < CHUNKS * 120, `${r.stdout.length} bytes of output for ${CHUNKS} chunks`);
  assert.equal(events.at(-1)?.type, 'result');
});

test('text: the streamed message is printed exactly once, chunk by chunk', () => {
  const r = cli('text');
  assert.equal(r.status, 0, r.stderr);
  assert.equal((r.stdout.match(/chunk \d+ /g) ?? []).length, CHUNKS);
  assert.ok(r.stdout.includes(`chunk 0 chunk 1 `) && r.stdout.includes(`chunk ${CHUNKS - 1} `));
});
