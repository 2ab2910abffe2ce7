/**
 * The agent lifecycle (src/session/lifecycle.ts) with real agent processes (test/fixtures/faultAgent.ts) and a
 * clock the test moves: crash restarts after the backoff reattach the session, three crashes in a minute open the
 * breaker, a start overtaken by a newer one is dropped without a word, a stop ends the running turn as stopped (no
 * restart). And the stop that knows its agent: one that ignores its stdin closing gets SIGTERM at once.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AcpSession } from '../../src/acp/acpSession';
import { AgentProcess, processAlive } from '../../src/core/agentProcess';
import { silentLogger } from '../../src/core/log';
import type { AgentSession, AgentState } from '../../src/session/agentSession';
import { AgentLifecycle, type AttachRequest, type Clock, type CrashEvent, SupersededStartError, TurnInterruptedError, TurnStoppedError } from '../../src/session/lifecycle';
import { policyDecider } from '../../src/session/permissions';
import { plainHost } from '../support/plainHost';
import { runCli } from '../support/cli';
import { repoRoot, scratchDir } from '../support/paths';
import { until } from '../support/wait';

const faultAgent = path.join(repoRoot, 'out', 'test', 'fixtures', 'faultAgent.js');
const go = [{ type: 'text', text: 'go' }];

/** Time that moves only when the test says: timers fire in order as `advance` passes them. */
class TestClock implements Clock {
  private t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.t = next.at;
      next.fn();
    }
    this.t = until;
  }
}

const live = new Set<AgentSession>();
after(async () => {
  await Promise.all([...live].map((s) => s.shutdown()));
});

/** A lifecycle over the fault agent running `fault`; every launch and the attach it was asked for, every crash and state. */
function lifecycle(fault: string, gate?: () => Promise<void>) {
  const clock = new TestClock();
  const dir = scratchDir(`lifecycle-${fault}`);
  const launches: (AttachRequest | undefined)[] = [];
  const sessions: (AgentSession | undefined)[] = [];
  const crashes: CrashEvent[] = [];
  const states: AgentState[] = [];
  const made: AgentSession[] = [];
  const life = new AgentLifecycle({
    log: silentLogger,
    clock,
    plan: () => ({
      agent: 'fault',
      launch: async (attach) => {
        launches.push(attach);
        await gate?.();
        const session = await AcpSession.start(
          { name: 'fault', command: process.execPath, args: [faultAgent, fault] },
          { logger: silentLogger, cwd: dir, ...plainHost(dir), decidePermission: policyDecider('deny-all'), requestTimeoutMs: 10_000, initializeTimeoutMs: 10_000 },
        );
        live.add(session);
        made.push(session);
        return session;
      },
    }),
  });
  life.onSession((s) => sessions.push(s));
  life.onCrash((c) => crashes.push(c));
  life.onState((s) => states.push(s));
  return { life, clock, launches, sessions, crashes, states, made };
}

const pidOf = (s: AgentSession) => (s as AcpSession).client.process.pid!;

describe('agent lifecycle', () => {
  it('a session that goes on under a new id (a fork at a message) is the one remembered for the next start', async () => {
    const { life } = lifecycle('crash-mid-turn');
    const session = await life.ensureStarted();
    assert.equal(life.remembered?.sessionId, session.sessionId);
    // What AcpSession's fork does (the fault agent offers none): a new id, then the transcript cut.
    (session as unknown as { id: string }).id = 'forked-session';
    session.model.rekey('forked-session');
    session.model.appendChunk('user', { type: 'text', text: 'first' }, 'user-1');
    session.model.truncateFrom(session.model.messages('user')[0]!);
    assert.deepEqual(life.remembered, { agent: 'fault', sessionId: 'forked-session' });
  });

  it('a crash mid-turn fails the turn with a clear error, then after 1 s the agent starts again and reattaches the session', async () => {
    const { life, clock, launches, crashes } = lifecycle('crash-mid-turn');
    const first = await life.ensureStarted();
    assert.deepEqual(launches, [undefined]);
    await assert.rejects(
      life.prompt(go),
      (e: unknown) =>
        e instanceof TurnInterruptedError &&
        e.name === 'AgentExitedError' &&
        /^Agent "fault" exited during the turn, which is lost: Agent exited with code 3\n--- last stderr ---\nfault agent pid \d+\npanic: the agent crashed mid-turn$/.test(e.message),
    );
    await until(() => crashes.length === 1, { what: 'the crash' });
    assert.equal(crashes[0]!.midTurn, true);
    assert.equal(crashes[0]!.restartInMs, 1000);
    assert.equal(life.state, 'error');
    assert.match(life.error ?? '', /^Agent "fault" exited \(Agent exited with code 3\); starting it again in 1 s\n--- last stderr ---\nfault agent pid \d+\npanic: the agent crashed mid-turn$/);
    clock.advance(999);
    assert.equal(launches.length, 1, 'started again before the backoff');
    const restart = life.pendingRestart!;
    clock.advance(1);
    const second = await restart;
    assert.deepEqual(launches[1], { sessionId: first.sessionId }, 'the restart did not ask for the same session');
    assert.equal(life.current, second);
    assert.equal(life.state, 'ready');
    assert.deepEqual(life.remembered, { agent: 'fault', sessionId: second.sessionId });
  });

  it('three crashes within 60 s open the breaker: no fourth start, and the state says the last exit and its stderr', async () => {
    const { life, clock, launches, crashes } = lifecycle('crash-mid-turn');
    await life.ensureStarted();
    for (const [i, delay] of [1000, 2000].entries()) {
      await assert.rejects(life.prompt(go), TurnInterruptedError);
      await until(() => crashes.length === i + 1, { what: `crash ${i + 1}` });
      assert.equal(crashes[i]!.restartInMs, delay);
      const restart = life.pendingRestart!;
      clock.advance(delay);
      await restart;
    }
    await assert.rejects(life.prompt(go), TurnInterruptedError);
    await until(() => crashes.length === 3, { what: 'the third crash' });
    assert.equal(crashes[2]!.restartInMs, undefined);
    assert.equal(life.state, 'error');
    assert.match(
      life.error ?? '',
      /^Agent "fault" crashed 3 times within 60 s, so it is not started again\. Last exit: Agent exited with code 3\n--- last stderr ---\nfault agent pid \d+\npanic: the agent crashed mid-turn$/,
    );
    assert.equal(life.pendingRestart, undefined);
    clock.advance(120_000);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(launches.length, 3, 'a fourth start ran after the breaker opened');
    // The person's restart closes the breaker.
    const again = await life.restart();
    assert.equal(life.current, again);
    assert.equal(launches.length, 4);
    await life.stop();
  });

  it('crashes more than a minute apart never open the breaker', async () => {
    const { life, clock, crashes } = lifecycle('crash-mid-turn');
    await life.ensureStarted();
    for (let i = 0; i < 3; i++) {
      await assert.rejects(life.prompt(go), TurnInterruptedError);
      await until(() => crashes.length === i + 1, { what: `crash ${i + 1}` });
      const restart = life.pendingRestart;
      assert.ok(restart, `crash ${i + 1} opened the breaker`);
      clock.advance(61_000);
      await restart;
    }
    assert.deepEqual(
      crashes.map((c) => c.restartInMs),
      [1000, 1000, 1000],
    );
    await life.stop();
  });

  it('a start overtaken by a newer one is dropped silently: its agent is stopped, it never becomes current, no error shows', async () => {
    let open: () => void = () => undefined;
    const gated = new Promise<void>((r) => (open = r));
    let calls = 0;
    const { life, sessions, states, made } = lifecycle('none', () => (++calls === 1 ? gated : Promise.resolve()));
    const early = life.ensureStarted();
    await until(() => calls === 1, { what: 'the first launch' });
    const newer = life.restart();
    open();
    await assert.rejects(early, SupersededStartError);
    const current = await newer;
    assert.equal(life.current, current);
    assert.deepEqual(sessions, [current], 'the overtaken session was shown');
    assert.ok(!states.includes('error'), `states: ${states.join(' → ')}`);
    assert.equal(life.error, undefined);
    assert.equal(made.length, 2);
    assert.equal(processAlive(pidOf(made[0]!)), false, 'the overtaken agent is still running');
    await life.stop();
    await until(() => !processAlive(pidOf(current)), { what: 'the agent to stop' });
  });

  it('a stop mid-turn ends the turn as stopped: no crash counted, no restart scheduled', async () => {
    const { life, clock, launches, crashes } = lifecycle('tool-forever');
    const session = await life.ensureStarted();
    const turn = life.prompt(go);
    await until(() => session.model.turn !== 'idle', { what: 'the turn to run' });
    await life.stop();
    await assert.rejects(turn, (e: unknown) => e instanceof TurnStoppedError && /^Agent "fault" was stopped during the turn$/.test((e as Error).message));
    assert.equal(life.state, 'stopped');
    assert.deepEqual(crashes, []);
    assert.equal(life.pendingRestart, undefined);
    clock.advance(10_000);
    assert.equal(launches.length, 1);
    assert.equal(processAlive(pidOf(session)), false);
  });
});

describe('the CLI on the lifecycle', () => {
  it('an agent that crashes mid-turn again after its restart: one restart, said on stderr and as a JSON event, then the CLI gives up (exit 4)', async () => {
    const dir = scratchDir('lifecycle-cli');
    const run = await runCli(['--command', process.execPath, '--arg', faultAgent, '--arg', 'crash-mid-turn', '--cwd', dir, '--state-dir', dir, '--format', 'json', 'go'], dir);
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(run.code, 4, run.stderr);
    assert.deepEqual(
      events.filter((e) => e.type === 'restart').map((e) => e.exit),
      [{ code: 3, signal: null }],
    );
    assert.equal((run.stderr.match(/starting it again once and reattaching session fault-1/g) ?? []).length, 1, run.stderr);
    // The fault agent can neither resume nor load: the new session is said, and gets the prompt again.
    const sessions = events.filter((e) => e.type === 'session');
    assert.deepEqual(
      sessions.map((e) => [e.attach, e.requested]),
      [
        ['new', undefined],
        ['new', 'fault-1'],
      ],
    );
    const asked = events.filter((e) => e.type === 'entity' && (e.entity as { kind?: string; role?: string }).kind === 'message' && (e.entity as { role?: string }).role === 'user');
    assert.deepEqual(
      asked.map((e) => (e.entity as { text?: string }).text),
      ['go', 'go'],
    );
    const result = events.at(-1)!;
    assert.deepEqual([result.type, result.outcome, result.exitCode], ['result', 'agent_exited', 4]);
    assert.match(String(result.error), /^Agent "cli" exited during the turn, which is lost: Agent exited with code 3/);
  });
});

describe('a stop knows its agent', () => {
  const deaf = "process.on('SIGTERM', () => process.exit(143)); setInterval(() => {}, 1000); process.stderr.write('up\\n');";
  const spawn = (script: string, ignoresInputClose?: boolean) =>
    AgentProcess.spawn({ command: process.execPath, args: ['-e', script], cwd: repoRoot, ...(ignoresInputClose ? { ignoresInputClose } : {}) }, silentLogger);
  const timed = async (agent: AgentProcess) => {
    await until(() => agent.stderrTail().includes('up'), { what: 'the agent to be up' });
    const t0 = Date.now();
    const exit = await agent.shutdown();
    return { exit, ms: Date.now() - t0 };
  };

  it('an agent known to ignore its stdin closing gets SIGTERM at once, not after the 500 ms grace', async () => {
    const { exit, ms } = await timed(spawn(deaf, true));
    assert.equal(exit.code, 143);
    assert.ok(ms < 350, `took ${ms} ms`);
  });

  it('without that knowledge it waits the grace period first; one that exits on EOF gets no signal', async () => {
    const slow = await timed(spawn(deaf));
    assert.equal(slow.exit.code, 143);
    assert.ok(slow.ms >= 500, `SIGTERM after ${slow.ms} ms`);
    const polite = await timed(spawn("process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); process.on('SIGTERM', () => process.exit(143)); process.stderr.write('up\\n');"));
    assert.deepEqual([polite.exit.code, polite.exit.signal], [0, null]);
  });
});
