/**
 * The fault matrix, ACP side: faults an agent can commit that must never hang the host nor grow its memory
 * without bound. Each case asserts what the user sees (the error, the event, the CLI's exit code), what is
 * on disk where it matters, and that nothing is left: no agent process, no request of ours waiting, no
 * request of the agent's being served. The agent is our own (test/fixtures/faultAgent.ts). The RPC side is
 * rpcFaults.test.ts; docs/testing.md lists every case.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AcpSession } from '../../src/acp/acpSession';
import { RequestTimeoutError } from '../../src/acp/acpErrors';
import { AgentExitedError, processAlive, type ExitInfo } from '../../src/core/agentProcess';
import { streamLogger } from '../../src/core/log';
import { DEFAULT_MAX_LINE_BYTES } from '../../src/core/ndjson';
import { TerminalService } from '../../src/host/terminalService';
import { policyDecider, type PermissionDecider } from '../../src/session/permissions';
import type { AgentStartOptions } from '../../src/session/sessionHost';
import type { ContentPart } from '../../src/session/sessionModel';
import { plainHost } from '../support/plainHost';
import { cliPath, hostileAgent, repoRoot, scratchDir } from '../support/paths';
import { until } from '../support/wait';

const faultAgent = path.join(repoRoot, 'out', 'test', 'fixtures', 'faultAgent.js');
const go: ContentPart[] = [{ type: 'text', text: 'go' }];
const text = (s: AcpSession) =>
  s.model
    .messages('agent')
    .map((m) => m.text)
    .join('');

/** Sessions of this file, shut down at the end even when a case failed half-way. */
const live = new Set<AcpSession>();
after(async () => {
  await Promise.all([...live].map((s) => s.shutdown()));
});

function capture() {
  const lines: string[] = [];
  return { lines, logger: streamLogger((l) => lines.push(l), 'debug') };
}

/** The fault agent's pid, from the line it writes to stderr first (also when its start failed). */
const agentPid = (lines: string[]) => Number(lines.map((l) => /fault agent pid (\d+)/.exec(l)?.[1]).find(Boolean));

/** Starts the fault agent with `fault` (and its size argument); the session, its log and its pid. */
async function start(fault: string, extra: { arg?: string; decide?: PermissionDecider; options?: Partial<AgentStartOptions>; lines?: string[] } = {}) {
  const dir = scratchDir(`fault-${fault}`);
  const { lines, logger } = extra.lines ? { lines: extra.lines, logger: streamLogger((l) => extra.lines!.push(l), 'debug') } : capture();
  const session = await AcpSession.start(
    { name: 'fault', command: process.execPath, args: [faultAgent, fault, ...(extra.arg ? [extra.arg] : [])] },
    {
      logger,
      cwd: dir,
      ...plainHost(dir),
      decidePermission: extra.decide ?? policyDecider('deny-all'),
      requestTimeoutMs: 10_000,
      initializeTimeoutMs: 10_000,
      ...extra.options,
    },
  );
  live.add(session);
  return { session, lines, dir, pid: session.client.process.pid!, turnError: turnErrors(session) };
}

/** The error the chat shows for the last turn that ended with one (the model's `turn` event). */
function turnErrors(session: AcpSession): () => string | undefined {
  let last: string | undefined;
  session.model.on((e) => {
    if (e.type === 'turn' && e.state === 'idle') last = e.error;
  });
  return () => last;
}

/** Nothing of ours waits on the agent and nothing of its is being served. */
function assertSettled(session: AcpSession): void {
  assert.deepEqual(session.client.outstanding(), { requests: [], serving: 0 }, 'a request is left pending');
  assert.equal(session.model.turn, 'idle');
}

/** Shuts the session down and asserts no process and no request is left. */
async function finish(session: AcpSession, pid: number): Promise<void> {
  assertSettled(session);
  await session.shutdown();
  live.delete(session);
  assert.equal(processAlive(pid), false, 'the agent is still running');
}

/** Live processes whose argv carries `marker` (zombies count as gone). */
function running(marker: string): string[] {
  return spawnSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.includes(marker) && !/^Z/.test(l.trim()) && !l.includes('ps -eo'));
}

/** The CLI against an ad-hoc agent, with its own state dir. */
function cli(args: string[], prompt = 'go') {
  const dir = scratchDir('fault-cli');
  return spawnSync(process.execPath, [cliPath, ...args, '--cwd', dir, '--state-dir', path.join(dir, '.state'), prompt], { encoding: 'utf8', timeout: 30_000 });
}

describe('fault matrix (ACP): the agent does not start properly', () => {
  it('binary missing: the CLI exits 3 (start failed) naming the command and the PATH it searched', () => {
    // The session-level case (AgentExitedError "command not found … (PATH=") is in acpClient.test.ts.
    const r = cli(['--command', 'no-such-agent-binary-4711']);
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /could not be started: command not found: "no-such-agent-binary-4711" \(PATH=/);
  });

  it('exits before initialize: the start fails at once with its exit code and stderr', async () => {
    const lines: string[] = [];
    await assert.rejects(start('exit-before-initialize', { lines }), (e: unknown) => e instanceof AgentExitedError && /code 2/.test(e.message) && /missing config file/.test(e.message));
    assert.equal(processAlive(agentPid(lines)), false);
  });

  it('exits during initialize: the start fails with its exit code and stderr', async () => {
    const lines: string[] = [];
    await assert.rejects(start('exit-during-initialize', { lines }), (e: unknown) => e instanceof AgentExitedError && /code 5/.test(e.message) && /model list/.test(e.message));
    assert.equal(processAlive(agentPid(lines)), false);
  });

  it('never answers initialize: the start fails with a timeout and the agent (deaf to EOF) is stopped', async () => {
    const lines: string[] = [];
    const t0 = Date.now();
    await assert.rejects(start('never-initialize', { lines, options: { initializeTimeoutMs: 300 } }), (e: unknown) => e instanceof RequestTimeoutError && /did not answer initialize/.test(e.message));
    assert.ok(Date.now() - t0 < 5000);
    assert.ok(agentPid(lines) > 0);
    assert.equal(processAlive(agentPid(lines)), false, 'the agent was left running');
    assert.ok(
      lines.some((l) => /SIGTERM to its group/.test(l)),
      'it ignored EOF, so it needed SIGTERM',
    );
  });
});

describe('fault matrix (ACP): the agent dies or goes deaf', () => {
  it('crashes with a permission dialog open: the dialog is withdrawn, the turn fails with the crash', async () => {
    let withdrawn = false;
    const { session, pid, turnError } = await start('crash-with-permission-open', {
      decide: (_r, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            withdrawn = true;
            resolve({ outcome: 'cancelled', by: 'cancel' });
          }),
        ),
    });
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof AgentExitedError && /code 9/.test(e.message) && /segfault/.test(e.message));
    assert.equal(withdrawn, true, 'the open dialog was not withdrawn');
    assert.equal(session.model.timeline().find((e) => e.kind === 'permission')?.state, 'cancelled');
    assert.equal(session.model.toolCall('t1')?.status, 'failed', 'the tool call waiting on the dialog was left pending');
    assert.match(turnError() ?? '', /exited with code 9/);
    assert.ok(session.model.timeline().some((e) => e.kind === 'notice' && e.title === 'Agent exited'));
    await finish(session, pid);
  });

  it('crashes with tool calls running and pending: both end failed, saying the agent exited', async () => {
    const { session, pid } = await start('crash-mid-tool');
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof AgentExitedError && /code 3/.test(e.message));
    for (const id of ['run-1', 'read-1']) {
      const tool = session.model.toolCall(id);
      assert.equal(tool?.status, 'failed', `${id} was left ${tool?.status}`);
      assert.equal(tool?.interrupted, 'Agent exited with code 3 before this finished.');
    }
    await finish(session, pid);
  });

  it('is stopped with a tool call running: the call ends failed, saying the agent was stopped', async () => {
    const { session, pid } = await start('tool-forever');
    const turn = session.prompt(go);
    await until(() => session.model.toolCall('run-1'), { what: 'the tool call' });
    await session.shutdown();
    live.delete(session);
    await assert.rejects(turn);
    assert.equal(session.model.toolCall('run-1')?.status, 'failed');
    assert.equal(session.model.toolCall('run-1')?.interrupted, 'The agent was stopped before this finished.');
    assert.equal(processAlive(pid), false);
  });

  it('crashes with a terminal command running: the command is ended with it', async () => {
    const { session, pid } = await start('crash-with-terminal');
    await assert.rejects(session.prompt(go), AgentExitedError);
    assert.deepEqual(running('fault-term-crash-with-terminal'), []);
    await finish(session, pid);
  });

  it('closes its output mid-turn and stays alive: the turn fails with that reason, the agent is stopped', async () => {
    const dir = scratchDir('close-stdout');
    const session = await AcpSession.start(
      { name: 'hostile', command: process.execPath, args: [hostileAgent, 'close-stdout'] },
      { logger: capture().logger, cwd: dir, ...plainHost(dir), decidePermission: policyDecider('deny-all') },
    );
    live.add(session);
    const pid = session.client.process.pid!;
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof AgentExitedError && /closed its output/.test(e.message));
    assert.equal(processAlive(pid), false, 'the agent is still running');
    assert.ok(
      session.model.timeline().some((e) => e.kind === 'notice' && e.title === 'Agent exited'),
      'no notice says the agent went away',
    );
    await finish(session, pid);
  });

  it('closes its output mid-turn: the CLI exits 4 (agent exited mid-turn) instead of waiting forever', () => {
    const r = cli(['--command', process.execPath, '--arg', hostileAgent, '--arg', 'close-stdout']);
    assert.equal(r.status, 4, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /closed its output/);
  });

  it('closes its output while idle: the session ends (exit reported), no process left', async () => {
    const { session, pid } = await start('close-stdout-idle');
    const exit = await new Promise<ExitInfo>((resolve) => session.onExit(resolve));
    assert.equal(exit.closedOutput, true);
    assert.equal(processAlive(pid), false);
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof AgentExitedError && /closed its output/.test(e.message));
    await finish(session, pid);
  });

  it('closes its input and stays alive: stopped at the failed write; the next request fails instead of waiting', async () => {
    const { session, pid } = await start('close-stdin-mid-turn');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof AgentExitedError && /stopped reading its input/.test(e.message));
    await finish(session, pid);
  });

  it('stops reading its input (pipe full): what waits is bounded, then the agent is stopped and the turn fails', async () => {
    const { session, pid, lines, turnError } = await start('stop-reading', { options: { writeStallMs: 500 } });
    // 1 MiB that the full pipe cannot take: the turn waits on the write, not on a timeout (a prompt has none).
    const turn = session.prompt([{ type: 'text', text: 'p'.repeat(1024 * 1024) }]);
    // Past the backlog limit a write is refused at once instead of queued.
    const pad = 'q'.repeat(10 * 1024 * 1024);
    const queued = assert.rejects(session.client.notify('_fault/pad', { pad }), AgentExitedError);
    await assert.rejects(session.client.notify('_fault/pad', { pad }), /not reading its input: \d+ bytes already wait for it \(at most 16777216\)/);
    await assert.rejects(turn, (e: unknown) => e instanceof AgentExitedError && /stopped reading its input/.test(e.message));
    await queued;
    assert.match(turnError() ?? '', /stopped reading its input/);
    assert.ok(lines.some((l) => /has not read its input for 500 ms/.test(l)));
    await finish(session, pid);
  });
});

describe('fault matrix (ACP): what the agent sends is broken', () => {
  it('garbage and non-JSON lines are logged and dropped; the turn goes on', async () => {
    const { session, pid, lines } = await start('garbage');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(text(session), 'before after');
    const errors = lines.filter((l) => l.includes('[error]'));
    assert.ok(errors.filter((l) => /Malformed JSON/.test(l)).length >= 3, errors.join('\n'));
    assert.ok(errors.some((l) => /not a JSON object/.test(l)));
    assert.ok(errors.some((l) => /neither a response nor a notification/.test(l)));
    await finish(session, pid);
  });

  it(`a 50 MB line (over the ${DEFAULT_MAX_LINE_BYTES}-byte default limit) is dropped with its size logged; the turn goes on, memory stays bounded`, async () => {
    const { session, pid, lines } = await start('huge-chunk');
    let peak = 0;
    const base = process.memoryUsage.rss();
    session.client.process.child.stdout.on('data', () => (peak = Math.max(peak, process.memoryUsage.rss() - base)));
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(text(session), 'ok');
    assert.ok(
      lines.some((l) => /\[error\] Dropped a line of 5000\d{4} bytes: over the 16777216-byte limit/.test(l)),
      'the drop was not logged',
    );
    // Held: at most the limit; pre-fix the line was joined, decoded and parsed (several times its size).
    assert.ok(peak < 96 * 1024 * 1024, `the host grew by ${Math.round(peak / 1048576)} MiB`);
    await finish(session, pid);
  });

  it('a 50 MB answer to the prompt is dropped and fails the turn with the reason (it cannot wait forever)', async () => {
    const { session, pid, turnError } = await start('huge-answer');
    await assert.rejects(session.prompt(go), /The agent sent a message of 5000\d{4} bytes, over the 16777216-byte line limit/);
    assert.match(turnError() ?? '', /over the 16777216-byte line limit/);
    await finish(session, pid);
  });

  it('a request of the agent over the limit is answered with an error (-32600) instead of never', async () => {
    const { session, pid, dir } = await start('huge-request', { options: { maxLineBytes: 1024 * 1024 } });
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.match(text(session), /write answered: \{"code":-32600,"message":"The agent sent a message of 20001\d\d bytes, over the 1048576-byte line limit/);
    assert.equal(existsSync(path.join(dir, 'big.txt')), false);
    await finish(session, pid);
  });

  it('an unterminated last line is still read, then the closed output stops the agent', async () => {
    const { session, pid } = await start('unterminated-last-line');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    await new Promise<ExitInfo>((resolve) => session.onExit(resolve));
    await finish(session, pid);
  });

  it('100,000 notifications in one burst: the turn completes and every chunk of text arrives, in order', async () => {
    const { session, pid } = await start('flood');
    const t0 = Date.now();
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    const expected = Array.from({ length: 100_000 }, (_, i) => `${i} `).join('');
    assert.equal(text(session), expected);
    assert.ok(Date.now() - t0 < 15_000, `${Date.now() - t0} ms`);
    await finish(session, pid);
  });

  it('notifications for a session it never opened are ignored (logged at debug); the turn goes on', async () => {
    const { session, pid, lines } = await start('unknown-session');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(text(session), 'ok');
    assert.ok(
      lines.some((l) => /unknown session not-a-session/.test(l)),
      'not logged',
    );
    await finish(session, pid);
  });

  it('answers with ids nobody asked for (a number, a string, null) are logged and dropped; the turn goes on', async () => {
    const { session, pid, lines } = await start('unknown-response-id');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(text(session), 'ok');
    assert.ok(
      lines.some((l) => /response message without id/.test(l)),
      'the id-less error answer was not logged',
    );
    await finish(session, pid);
  });

  it('a second answer to the same request is logged and dropped (the first wins)', async () => {
    const { session, pid, lines } = await start('duplicate-response');
    assert.equal(session.client.initializeResult?.protocolVersion, 1);
    assert.ok(lines.some((l) => /answered the same request twice/.test(l)));
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    await finish(session, pid);
  });

  it('error objects of the wrong shape fail their request with a readable error, never a hang', async () => {
    const { session, pid, turnError } = await start('wrong-error-shape');
    for (const mode of ['string', 'empty', 'types', 'array']) {
      await assert.rejects(session.setMode(mode), /The agent answered session\/set_mode with a malformed error/, mode);
    }
    await assert.rejects(session.setMode('null'), /The agent answered session\/set_mode with neither a result nor an error/);
    await assert.rejects(session.prompt(go), /The agent answered session\/prompt with a malformed error \(.*-32001/);
    assert.match(turnError() ?? '', /malformed error/);
    await finish(session, pid);
  });

  it('requests under ids 0, "", strings, -1 and 2^53-1 each get exactly one answer; an unknown method -32601', async () => {
    const dir = scratchDir('fault-odd-ids');
    writeFileSync(path.join(dir, 'hello.txt'), 'hello\n');
    const frames: { id?: unknown; error?: { code: number }; result?: unknown }[] = [];
    // What was read, as the tap saw it: the frame, and the line it came from (the traffic view keeps the line).
    const reads: [frame: string, line: string | undefined][] = [];
    const tap = (d: 'in' | 'out', f: unknown, line?: string) => (d === 'out' ? frames.push(f as never) : reads.push([JSON.stringify(f), line]));
    const session = await AcpSession.start(
      { name: 'fault', command: process.execPath, args: [faultAgent, 'odd-ids'] },
      { logger: capture().logger, cwd: dir, ...plainHost(dir), decidePermission: policyDecider('deny-all'), frameTap: tap },
    );
    live.add(session);
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    const seen = JSON.parse(text(session)) as { unknown: { id: unknown; error: { code: number } }[]; read: { id: unknown; result: { content: string } } };
    assert.deepEqual(
      seen.unknown.map((a) => [a.id, a.error.code]),
      [
        [0, -32601],
        ['', -32601],
        ['s-1', -32601],
        [-1, -32601],
        [2 ** 53 - 1, -32601],
      ],
    );
    assert.deepEqual([seen.read.id, seen.read.result.content], ['read-1', 'hello\n']);
    // Exactly one answer each (the tap sees what we write; the initialize and session/new requests are ours).
    const answers = frames.filter((f) => f.result !== undefined || f.error !== undefined);
    assert.deepEqual(answers.map((a) => a.id).sort(), [0, '', 's-1', -1, 2 ** 53 - 1, 'read-1'].sort());
    assert.ok(reads.length >= 8, `${reads.length} frames read`);
    for (const [frame, line] of reads) assert.equal(JSON.stringify(JSON.parse(line ?? 'null')), frame, 'each frame read comes with its own line');
    await finish(session, session.client.process.pid!);
  });

  it('a flood of 20 MiB on stderr: the turn completes, the kept tail stays bounded', async () => {
    const { session, pid } = await start('stderr-flood');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.ok(session.client.process.stderrTail(100_000).length <= 64 * 1024, 'the stderr ring grew past 64 KiB');
    await finish(session, pid);
  });
});

describe('fault matrix (ACP): the user stops what the agent started', () => {
  it('a terminal command that never ends is killed when the user cancels the turn; the agent sees the kill', async () => {
    const dir = scratchDir('fault-term-cancel');
    let created!: () => void;
    const started = new Promise<void>((r) => (created = r));
    const terminals = new TerminalService(() => [dir], { onCreate: () => created() });
    const { session, pid } = await start('terminal-forever', { options: { terminals } });
    const turn = session.prompt(go);
    await started;
    assert.equal(running('fault-term-terminal-forever').length, 1);
    await session.cancel();
    assert.equal((await turn).stopReason, 'cancelled');
    assert.match(text(session), /command ended: \{"exitCode":null,"signal":"SIGKILL"\}/);
    assert.deepEqual(running('fault-term-terminal-forever'), []);
    assert.deepEqual(terminals.running(), []);
    await finish(session, pid);
  });

  it('a terminal command left running past the turn is ended when the session ends', async () => {
    const { session, pid } = await start('terminal-left-running');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(running('fault-term-terminal-left-running').length, 1, 'a command of an ended turn may keep running (a watcher)');
    await finish(session, pid);
    assert.deepEqual(running('fault-term-terminal-left-running'), []);
  });
});
