/**
 * The silent-agent report: SilenceWatch's count on a fake clock (threshold, counting up, traffic clearing
 * it, the host's own waits not counting, off at 0), and the session layer's activity under it with real
 * agents of our own: the hostile ACP agent accepting a prompt and staying silent, and the RPC fake agent's
 * dialog keeping it waiting on the host.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { AcpSession } from '../../src/acp/acpSession';
import { silentLogger } from '../../src/core/log';
import { headlessRpcUi, type RpcUiHandlers } from '../../src/rpc/extensionUi';
import { RpcSession } from '../../src/rpc/rpcSession';
import type { AgentSession } from '../../src/session/agentSession';
import { policyDecider } from '../../src/session/permissions';
import { SilenceWatch } from '../../src/session/silenceWatch';
import { plainHost } from '../support/plainHost';
import { hostileAgent, repoRoot, scratchDir } from '../support/paths';

/** A watch on a clock the test moves; `seen` holds every report. */
function watched(threshold: () => number = () => 30) {
  let t = 1_000_000;
  const seen: (number | undefined)[] = [];
  const watch = new SilenceWatch({ thresholdSeconds: threshold, onChange: (s) => seen.push(s), now: () => t, tickMs: 60_000 });
  const at = (seconds: number) => {
    t = 1_000_000 + seconds * 1000;
    watch.check();
  };
  return { watch, seen, at };
}

describe('SilenceWatch', () => {
  it('reports the silence once it reaches the threshold, counting up, until the agent speaks', () => {
    const { watch, seen, at } = watched();
    watch.turn(true);
    at(29.9);
    assert.equal(watch.seconds, undefined);
    at(30);
    at(30.5); // same whole second: no new report
    at(31);
    at(45);
    assert.deepEqual(seen, [30, 31, 45]);
    watch.activity(false);
    assert.equal(watch.seconds, undefined);
    at(74);
    assert.equal(watch.seconds, undefined, 'the count starts again at the agent’s last output');
    at(75);
    assert.equal(watch.seconds, 30);
    watch.dispose();
  });

  it('counts only while a turn runs; the end of the turn clears the report', () => {
    const { watch, seen, at } = watched();
    at(100);
    assert.deepEqual(seen, [], 'no turn, no report');
    watch.turn(true); // at 100 s: the prompt was just sent
    at(131);
    assert.equal(watch.seconds, 31);
    watch.turn(false);
    assert.deepEqual(seen, [31, undefined]);
    at(500);
    assert.deepEqual(seen, [31, undefined]);
    watch.dispose();
  });

  it('does not count while the host keeps the agent waiting; counts again from the answer', () => {
    const { watch, seen, at } = watched(() => 10);
    watch.turn(true);
    at(5);
    watch.activity(true); // e.g. a permission request arrived and is being asked
    at(300);
    assert.equal(watch.seconds, undefined);
    watch.activity(false); // answered at 300 s
    at(309);
    assert.equal(watch.seconds, undefined);
    at(310);
    assert.deepEqual(seen, [10]);
    watch.dispose();
  });

  it('is off at 0 and reads the threshold at every check', () => {
    let threshold = 0;
    const { watch, seen, at } = watched(() => threshold);
    watch.turn(true);
    at(1000);
    assert.deepEqual(seen, []);
    threshold = 2;
    at(1000);
    assert.deepEqual(seen, [1000]);
    threshold = 0;
    at(1001);
    assert.deepEqual(seen, [1000, undefined]);
    watch.dispose();
  });

  it('checks on its own timer while a turn runs, and stops the timer after', () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      let t = 0;
      const seen: (number | undefined)[] = [];
      const watch = new SilenceWatch({ thresholdSeconds: () => 2, onChange: (s) => seen.push(s), now: () => t });
      watch.turn(true);
      for (let i = 1; i <= 4; i++) {
        t = i * 1000;
        mock.timers.tick(1000);
      }
      assert.deepEqual(seen, [2, 3, 4]);
      watch.turn(false);
      t = 10_000;
      mock.timers.tick(5000);
      assert.deepEqual(seen, [2, 3, 4, undefined]);
      watch.dispose();
    } finally {
      mock.timers.reset();
    }
  });
});

/** The watch fed by a real session, as the editor wires it: activity from the session, the turn from its model. */
function watchSession(session: AgentSession, threshold: number) {
  const seen: (number | undefined)[] = [];
  const watch = new SilenceWatch({ thresholdSeconds: () => threshold, onChange: (s) => seen.push(s), tickMs: 100 });
  const waits: boolean[] = [];
  const off = [
    session.onActivity((waiting) => {
      waits.push(waiting);
      watch.activity(waiting);
    }),
    session.model.on((e) => {
      if (e.type === 'turn') watch.turn(e.state !== 'idle');
    }),
  ];
  const dispose = () => {
    for (const f of off) f();
    watch.dispose();
  };
  return { watch, seen, waits, dispose };
}

async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the session layer feeds the watch', () => {
  const live: AgentSession[] = [];
  after(async () => {
    await Promise.all(live.map((s) => s.shutdown()));
  });

  it('ACP: a silent agent is reported, its one chunk clears the report, Cancel ends the turn', async () => {
    const dir = scratchDir('silence-acp');
    const session = await AcpSession.start(
      { name: 'hostile', command: process.execPath, args: [hostileAgent, 'answer'] },
      { logger: silentLogger, cwd: dir, ...plainHost(dir), decidePermission: policyDecider('deny-all') },
    );
    live.push(session);
    const w = watchSession(session, 1);
    // Silent, one thought chunk after 1.5 s, then silent again until cancelled.
    const turn = session.prompt([{ type: 'text', text: 'SILENT 1500' }]);
    await until('the first report', () => w.seen.includes(1));
    await until('the chunk to clear it', () => w.seen.at(-1) === undefined && w.seen.length > 1);
    assert.ok(
      session.model.timeline().some((e) => e.kind === 'message' && e.role === 'thought'),
      'the chunk did not arrive',
    );
    await until('the second report', () => w.seen.at(-1) === 1);
    await session.cancel();
    assert.equal((await turn).stopReason, 'cancelled');
    assert.equal(w.watch.seconds, undefined);
    w.dispose();
  });

  it('ACP: while a permission is being asked the agent waits on the host, and is not reported', async () => {
    const dir = scratchDir('silence-permission');
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    const session = await AcpSession.start(
      { name: 'hostile', command: process.execPath, args: [hostileAgent, 'normal'] },
      {
        logger: silentLogger,
        cwd: dir,
        ...plainHost(dir),
        decidePermission: (_req, signal) =>
          new Promise((resolve) => {
            asked();
            signal.addEventListener('abort', () => resolve({ outcome: 'cancelled', by: 'cancel' }));
          }),
      },
    );
    live.push(session);
    const w = watchSession(session, 1);
    const turn = session.prompt([{ type: 'text', text: 'write x.txt' }]);
    await askedP;
    assert.equal(w.waits.at(-1), true, 'the permission request does not count as the host’s wait');
    await new Promise((r) => setTimeout(r, 1600));
    assert.deepEqual(w.seen, [], 'reported while the host kept the agent waiting');
    await session.cancel();
    assert.equal((await turn).stopReason, 'cancelled');
    assert.equal(w.waits.at(-1), false);
    w.dispose();
  });

  it('RPC: an open extension dialog is the host’s wait; answering it ends the wait', async () => {
    let answer!: (v: boolean) => void;
    const base = headlessRpcUi();
    const ui: RpcUiHandlers = { ...base, confirm: () => new Promise((resolve) => (answer = resolve)) };
    const s = await RpcSession.start(
      { name: 'fake', command: process.execPath, args: [path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js'), 'upstream'], protocol: 'rpc' },
      { logger: silentLogger, cwd: repoRoot, requestTimeoutMs: 5000, rpcUi: ui },
    );
    const waits: boolean[] = [];
    const off = s.onActivity((w) => waits.push(w));
    const asking = s.raw({ type: 'ui', request: { method: 'confirm', title: 'Sure?', message: 'm' } });
    await until('the dialog', () => answer !== undefined);
    assert.equal(waits.at(-1), true);
    const before = waits.length;
    answer(true);
    await asking;
    assert.ok(waits.slice(before).length > 0 && waits.at(-1) === false, `waits after the answer: ${waits.slice(before).join(',')}`);
    off();
    await s.shutdown();
  });
});
