/**
 * Streaming through the headless CLI is linear in the message's length: each chunk is printed (text) or
 * emitted as a small `append` event of its new text (JSON; chunks of one read may come merged) — never the
 * whole message so far.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const CHUNKS = 20_000;

function cli(format: 'text' | 'json') {
  return spawnSync(
    process.execPath,
    [cliPath, '--command', process.execPath, '--arg', hostileAgent, '--arg', 'flood', '--arg', String(CHUNKS), '--cwd', scratchDir('flood'), '--format', format, 'go'],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      timeout: 120_000,
    },
  );
}

test(`JSON: ${CHUNKS.toLocaleString('en')} chunks stream as append events of new text only (output linear in the message)`, () => {
  const r = cli('json');
  assert.equal(r.status, 0, r.stderr);
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; text?: string; id?: string; entity?: { kind: string; role?: string; text?: string } });
  const created = events.find((e) => e.type === 'entity' && e.entity?.kind === 'message' && e.entity.role === 'agent');
  const appends = events.filter((e) => e.type === 'append');
  // Chunks that came in one read may arrive merged (src/acp/coalesce.ts), so there are at most CHUNKS - 1
  // appends; together with the created message they are the whole text exactly once — no event repeats
  // the message so far.
  assert.ok(appends.length >= 1 && appends.length <= CHUNKS - 1, `${appends.length} append events`);
  const expected = Array.from({ length: CHUNKS }, (_, i) => `chunk ${i} `).join('');
  assert.equal((created?.entity?.text ?? '') + appends.map((e) => e.text ?? '').join(''), expected);
  // The whole message streamed once: about 12 bytes a chunk plus the events' own fields.
  assert.ok(r.stdout.length < CHUNKS * 120, `${r.stdout.length} bytes of output for ${CHUNKS} chunks`);
  assert.equal(events.at(-1)?.type, 'result');
});

test('text: the streamed message is printed exactly once, chunk by chunk', () => {
  const r = cli('text');
  assert.equal(r.status, 0, r.stderr);
  assert.equal((r.stdout.match(/chunk \d+ /g) ?? []).length, CHUNKS);
  assert.ok(r.stdout.includes('chunk 0 chunk 1 ') && r.stdout.includes(`chunk ${CHUNKS - 1} `));
});
