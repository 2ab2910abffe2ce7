/**
 * What the extension host keeps, measured: the traffic ring's clip of a frame holds its own characters, not the
 * whole frame it was cut from. The heap is read after a full collection (`--expose-gc` turned on here).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TrafficLog } from '../../src/session/traffic';

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
const fresh = (n: number, seed: number) => `${seed}:`.padEnd(n, String.fromCharCode(97 + (seed % 26)));

test('the traffic ring keeps the clipped text of a big frame, not the whole frame', () => {
  const traffic = new TrafficLog();
  const before = heap();
  for (let i = 0; i < 60; i++) traffic.frame('in', { type: 'message_update', message: { content: [{ type: 'text', text: fresh(MiB, i) }] } });
  const grown = heap() - before;
  assert.equal(traffic.size.entries, 60);
  // 60 entries of 4,000 characters: under 1 MiB; the whole frames would be 60 MiB.
  assert.ok(grown < 8 * MiB, `the ring of 60 clipped frames holds ${(grown / MiB).toFixed(1)} MiB`);
});
