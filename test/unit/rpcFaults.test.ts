/**
 * The fault matrix, RPC side (pi's RPC mode): the faults of faults.test.ts that apply to an RPC agent,
 * plus its own — a command nobody answers, a host tool that never finishes. Each case asserts what the user
 * sees (the error the turn or the command fails with, the model's turn event), and that nothing is left:
 * no process, no command waiting, no host tool call running. The agent is test/fixtures/rpcFakeAgent.ts.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AgentExitedError, groupAlive, processAlive } from '../../src/core/agentProcess';
import { streamLogger } from '../../src/core/log';
import { RpcCommandError, RpcTimeoutError } from '../../src/rpc/rpcConnection';
import { RpcSession, type RpcSessionOptions } from '../../src/rpc/rpcSession';
import type { HostToolProvider } from '../../src/session/hostTools';
import type { ContentPart } from '../../src/session/sessionModel';
import { repoRoot, scratchDir } from '../support/paths';

const fake = path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js');
const say = (text: string): ContentPart[] => [{ type: 'text', text }];
const text = (s: RpcSession) =>
  s.model
    .messages('agent')
    .map((m) => m.text)
    .join('');

const live = new Set<RpcSession>();
after(async () => {
  await Promise.all([...live].map((s) => s.shutdown()));
});

/** The fake agent's pid, from the line it writes to stderr first (also when its start failed). */
const agentPid = (lines: string[]) => Number(lines.map((l) => /fake agent pid (\d+)/.exec(l)?.[1]).find(Boolean));

async function start(mode: string, options: Partial<RpcSessionOptions> = {}, lines: string[] = []) {
  const s = await RpcSession.start(
    { name: 'fake', command: process.execPath, args: [fake, mode], protocol: 'rpc' },
    { logger: streamLogger((l) => lines.push(l), 'debug'), cwd: scratchDir(`rpc-fault-${mode}`), requestTimeoutMs: 5000, ...options },
  );
  live.add(s);
  let turnError: string | undefined;
  s.model.on((e) => {
    if (e.type === 'turn' && e.state === 'idle') turnError = e.error;
  });
  return { s, lines, pid: s.connection.process.pid!, turnError: () => turnError };
}

/** No command waits, the turn is over; then the session ends and no process of its group is left. */
async function finish(s: RpcSession, pid: number): Promise<void> {
  // One round trip: what the session sent before (a state refresh at a run's end) has been answered by now.
  if (!s.connection.exitInfo) await s.raw({ type: 'echo' });
  assert.deepEqual(s.connection.pendingCommands(), [], 'a command is left waiting');
  assert.equal(s.model.turn, 'idle');
  await s.shutdown();
  live.delete(s);
  assert.equal(groupAlive(pid), false, 'the agent (or a child of it) is still running');
}

describe('fault matrix (RPC): the agent does not start properly', () => {
  it('binary missing: the start fails naming the command and the PATH it searched', async () => {
    await assert.rejects(
      RpcSession.start({ name: 'x', command: 'no-such-agent-binary-4711', protocol: 'rpc' }, { logger: streamLogger(() => undefined, 'off'), cwd: scratchDir('rpc-nx') }),
      (e: unknown) => e instanceof AgentExitedError && /could not be started: command not found: "no-such-agent-binary-4711" \(PATH=/.test(e.message),
    );
  });

  it('exits before answering get_state: the start fails at once with its exit code and stderr', async () => {
    const lines: string[] = [];
    await assert.rejects(start('exit-at-start', {}, lines), (e: unknown) => e instanceof AgentExitedError && e.exit.code === 2 && /no API key configured/.test(e.message));
    assert.equal(processAlive(agentPid(lines)), false);
  });

  it('never answers get_state: the start fails with a timeout and the agent (deaf to EOF) is stopped', async () => {
    const lines: string[] = [];
    await assert.rejects(start('mute', { initializeTimeoutMs: 300 }, lines), (e: unknown) => e instanceof RpcTimeoutError && /did not answer get_state within 0.3 s/.test(e.message));
    assert.ok(agentPid(lines) > 0);
    assert.equal(processAlive(agentPid(lines)), false, 'the agent was left running');
    assert.ok(lines.some((l) => /SIGTERM to its group/.test(l)));
  });
});

describe('fault matrix (RPC): the agent dies, goes deaf or says nothing', () => {
  it('answers nothing to a prompt: the turn fails with a timeout naming the command, nothing hangs', async () => {
    const { s, pid, turnError } = await start('upstream', { requestTimeoutMs: 300 });
    await assert.rejects(s.prompt(say('silent')), (e: unknown) => e instanceof RpcTimeoutError && /did not answer prompt within 0.3 s/.test(e.message));
    assert.match(turnError() ?? '', /did not answer prompt/);
    assert.equal(s.model.turn, 'idle');
    // The agent itself still answers: the session goes on.
    assert.equal((await s.raw({ type: 'echo' })).success, true);
    await finish(s, pid);
  });

  it('exits mid-turn: the turn fails with its exit code and stderr, the chat says the agent exited', async () => {
    const { s, pid, turnError } = await start('upstream');
    await assert.rejects(s.prompt(say('crash-mid-run')), (e: unknown) => e instanceof AgentExitedError && e.exit.code === 3 && /model connection broke/.test(e.message));
    assert.match(turnError() ?? '', /exited with code 3/);
    assert.ok(s.model.timeline().some((e) => e.kind === 'notice' && e.title === 'Agent exited'));
    // The tool it was running can never finish: failed, saying why, not left spinning.
    const tool = s.model.toolCall('tc-crash');
    assert.equal(tool?.status, 'failed');
    assert.equal(tool?.interrupted, 'Agent exited with code 3 before this finished.');
    await assert.rejects(s.raw({ type: 'echo' }), AgentExitedError);
    await finish(s, pid);
  });

  it('closes its output mid-turn and stays alive: stopped a second later, the turn fails with that reason', async () => {
    const { s, pid } = await start('upstream');
    await assert.rejects(s.prompt(say('close-stdout-run')), (e: unknown) => e instanceof AgentExitedError && /closed its output/.test(e.message));
    await finish(s, pid);
  });

  it('stops reading its input mid-turn: what waits is bounded, then the agent is stopped and everything fails', async () => {
    let runStarted!: () => void;
    const started = new Promise<void>((r) => (runStarted = r));
    const frameTap = (direction: 'in' | 'out', frame: unknown) => direction === 'in' && (frame as { type?: string }).type === 'agent_start' && runStarted();
    const { s, pid, lines } = await start('upstream', { writeStallMs: 500, frameTap });
    const turn = s.prompt(say('deaf'));
    // The agent stops reading as it starts the run (in the same tick as it sends agent_start).
    await started;
    const stuck = assert.rejects(s.raw({ type: 'echo', pad: 'p'.repeat(1024 * 1024) }, 0), (e: unknown) => e instanceof AgentExitedError && /stopped reading its input/.test(e.message));
    const queued = assert.rejects(s.raw({ type: 'echo', pad: 'q'.repeat(10 * 1024 * 1024) }, 0), AgentExitedError);
    await assert.rejects(s.raw({ type: 'echo', pad: 'q'.repeat(10 * 1024 * 1024) }, 0), /not reading its input: \d+ bytes already wait for it \(at most 16777216\)/);
    await Promise.all([stuck, queued]);
    await assert.rejects(turn, (e: unknown) => e instanceof AgentExitedError && /stopped reading its input/.test(e.message));
    assert.ok(lines.some((l) => /has not read its input for 500 ms/.test(l)));
    await finish(s, pid);
  });
});

describe('fault matrix (RPC): what the agent sends is broken', () => {
  it('garbage, non-JSON and non-frame lines mid-run are logged and dropped; the turn completes', async () => {
    const { s, pid, lines } = await start('upstream');
    assert.deepEqual(await s.prompt(say('garbage-run')), { stopReason: 'end_turn' });
    assert.equal(text(s), 'before after');
    assert.ok(lines.filter((l) => /\[error\] Malformed JSON from agent/.test(l)).length >= 2);
    assert.ok(lines.filter((l) => /not an RPC frame|not a JSON object/.test(l)).length >= 4);
    await finish(s, pid);
  });

  it('a 50 MB event line is dropped with its size logged; the run goes on', async () => {
    const { s, pid, lines } = await start('upstream');
    assert.deepEqual(await s.prompt(say('huge-event')), { stopReason: 'end_turn' });
    assert.equal(text(s), 'ok');
    assert.ok(lines.some((l) => /\[error\] Dropped a line of 5000\d{4} bytes: over the 16777216-byte limit/.test(l)));
    await finish(s, pid);
  });

  it('a 50 MB answer to a command is dropped and fails that command with the reason (no wait, no timeout)', async () => {
    const { s, pid } = await start('upstream');
    await assert.rejects(
      s.connection.call({ type: 'huge_answer' }, { timeoutMs: 0 }),
      (e: unknown) => e instanceof RpcCommandError && /huge_answer failed: the agent's answer was 5000\d{4} bytes, over the 16777216-byte line limit/.test(e.message),
    );
    assert.equal((await s.raw({ type: 'echo' })).success, true);
    await finish(s, pid);
  });

  it('100,000 events in one burst: the turn completes and every delta arrives, in order', async () => {
    const { s, pid } = await start('upstream');
    const t0 = Date.now();
    assert.deepEqual(await s.prompt(say('flood')), { stopReason: 'end_turn' });
    assert.equal(text(s), Array.from({ length: 100_000 }, (_, i) => `${i} `).join(''));
    assert.ok(Date.now() - t0 < 15_000, `${Date.now() - t0} ms`);
    await finish(s, pid);
  });
});

describe('fault matrix (RPC): a host tool that never finishes', () => {
  function hangingTool() {
    let called!: (signal: AbortSignal) => void;
    const calledWith = new Promise<AbortSignal>((r) => (called = r));
    const provider: HostToolProvider = {
      definitions: () => [{ name: 'hang', label: 'Hang', description: 'Never finishes', parameters: { type: 'object' } }],
      // Ignores its abort signal too: only the runner's own answer can free the agent.
      call: (_name, _args, signal) => {
        called(signal);
        return new Promise(() => undefined);
      },
    };
    return { provider, calledWith };
  }

  it('is stopped at the request timeout and the agent gets a failed result; the turn completes', async () => {
    const { provider, calledWith } = hangingTool();
    const { s, pid } = await start('fork', { hostTools: provider, requestTimeoutMs: 400 });
    assert.deepEqual(await s.prompt(say('host-hang')), { stopReason: 'end_turn' });
    assert.equal((await calledWith).aborted, true, 'the tool was not told to stop');
    const answer = JSON.parse(text(s)) as { type: string; isError?: boolean; result: { content: { text: string }[] } };
    assert.equal(answer.type, 'host_tool_result');
    assert.equal(answer.isError, true);
    assert.match(answer.result.content[0]!.text, /Host tool "hang" did not finish within 0.4 s and was stopped/);
    await finish(s, pid);
  });

  it('is answered "cancelled" at once when the user cancels the turn; the turn ends cancelled', async () => {
    const { provider, calledWith } = hangingTool();
    const { s, pid } = await start('fork', { hostTools: provider, requestTimeoutMs: 10_000 });
    const t0 = Date.now();
    const turn = s.prompt(say('host-hang'));
    const signal = await calledWith;
    await s.cancel();
    assert.deepEqual(await turn, { stopReason: 'cancelled' });
    assert.ok(Date.now() - t0 < 5000);
    assert.equal(signal.aborted, true);
    const { received } = (await s.raw({ type: 'received' })).data as { received: { hostAnswer?: { isError?: boolean; result: { content: { text: string }[] } } }[] };
    const answer = received.find((r) => r.hostAnswer)?.hostAnswer;
    assert.equal(answer?.isError, true);
    assert.equal(answer?.result.content[0]?.text, 'Cancelled: the user stopped the turn');
    await finish(s, pid);
  });
});
