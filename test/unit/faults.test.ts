/**
 * Faults an agent can commit that must never hang the host: each case asserts what the user sees (the
 * error), that the turn ends, and that no agent process is left. The start of the fault matrix.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { AcpSession } from '../../src/acp/acpSession';
import * as path from 'node:path';
import { AgentExitedError, processAlive, type ExitInfo } from '../../src/core/agentProcess';
import { silentLogger, streamLogger } from '../../src/core/log';
import { policyDecider, type PermissionDecider } from '../../src/session/permissions';
import type { ContentPart } from '../../src/session/sessionModel';
import { plainHost } from '../support/plainHost';
import { cliPath, hostileAgent, repoRoot, scratchDir } from '../support/paths';

describe('an agent that closes its output and stays alive', () => {
  it('fails the running turn with that reason and stops the agent (ACP client)', async () => {
    const dir = scratchDir('close-stdout');
    const session = await AcpSession.start(
      { name: 'hostile', command: process.execPath, args: [hostileAgent, 'close-stdout'] },
      { logger: silentLogger, cwd: dir, ...plainHost(dir), decidePermission: policyDecider('deny-all') },
    );
    const pid = session.client.process.pid!;
    await assert.rejects(session.prompt([{ type: 'text', text: 'go' }]), (e: unknown) => e instanceof AgentExitedError && /closed its output/.test(e.message));
    assert.equal(processAlive(pid), false, 'the agent is still running');
    assert.equal(session.model.turn, 'idle');
    assert.ok(session.model.timeline().some((e) => e.kind === 'notice' && e.title === 'Agent exited'), 'no notice says the agent went away');
  });

  it('the CLI exits 4 (agent exited mid-turn) instead of waiting forever', () => {
    const dir = scratchDir('close-stdout-cli');
    const r = spawnSync(process.execPath, [cliPath, '--command', process.execPath, '--arg', hostileAgent, '--arg', 'close-stdout', '--cwd', dir, 'go'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 4, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /closed its output/);
  });
});

const faultAgent = path.join(repoRoot, 'out', 'test', 'fixtures', 'faultAgent.js');

function capture() {
  const lines: string[] = [];
  return { lines, logger: streamLogger((l) => lines.push(l), 'debug') };
}

/** Starts the fault agent with `fault`; the session and what was logged. */
async function start(fault: string, decide: PermissionDecider = policyDecider('deny-all')) {
  const dir = scratchDir(`fault-${fault}`);
  const { lines, logger } = capture();
  const session = await AcpSession.start(
    { name: 'fault', command: process.execPath, args: [faultAgent, fault] },
    { logger, cwd: dir, ...plainHost(dir), decidePermission: decide, requestTimeoutMs: 10_000, initializeTimeoutMs: 10_000 },
  );
  return { session, lines, pid: session.client.process.pid! };
}

const go: ContentPart[] = [{ type: 'text', text: 'go' }];
const text = (s: AcpSession) => s.model.messages('agent').map((m) => m.text).join('');

describe('fault matrix: the agent misbehaves, the host neither hangs nor leaks', () => {
  it('exits before initialize: the start fails at once with its exit code and stderr', async () => {
    await assert.rejects(start('exit-before-initialize'), (e: unknown) => e instanceof AgentExitedError && /code 2/.test(e.message) && /missing config file/.test(e.message));
  });

  it('exits during initialize: the start fails with its exit code and stderr', async () => {
    await assert.rejects(start('exit-during-initialize'), (e: unknown) => e instanceof AgentExitedError && /code 5/.test(e.message) && /model list/.test(e.message));
  });

  it('crashes with a permission dialog open: the dialog is withdrawn, the turn fails with the crash', async () => {
    let withdrawn = false;
    const { session, pid } = await start('crash-with-permission-open', (_r, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          withdrawn = true;
          resolve({ outcome: 'cancelled', by: 'cancel' });
        }),
      ),
    );
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof AgentExitedError && /code 9/.test(e.message) && /segfault/.test(e.message));
    assert.equal(withdrawn, true, 'the open dialog was not withdrawn');
    assert.equal(processAlive(pid), false);
    assert.equal(session.model.turn, 'idle');
  });

  it('crashes with a terminal command running: the command is ended with it', async () => {
    const { session } = await start('crash-with-terminal');
    await assert.rejects(session.prompt(go), AgentExitedError);
    // The command was `node -e setInterval…` in its own group; nothing of it may remain.
    const left = spawnSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l.includes('setInterval(() => {}, 1000)') && !/^Z/.test(l.trim()));
    assert.deepEqual(left, []);
  });

  it('closes its output while idle: the session ends (exit reported), no process left', async () => {
    const { session, pid } = await start('close-stdout-idle');
    const exit = await new Promise<ExitInfo>((resolve) => session.onExit(resolve));
    assert.equal(exit.closedOutput, true);
    assert.equal(processAlive(pid), false);
  });

  it('stops reading its stdin: the next request fails instead of waiting', async () => {
    const { session, pid } = await start('close-stdin-mid-turn');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    await assert.rejects(session.prompt(go));
    await session.shutdown();
    assert.equal(processAlive(pid), false);
  });

  it('notifications for a session it never opened are ignored; the turn goes on', async () => {
    const { session, lines } = await start('unknown-session');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(text(session), 'ok');
    assert.ok(lines.some((l) => /unknown session not-a-session/.test(l)), 'not logged');
    await session.shutdown();
  });

  it('a response with an id nobody asked for is logged and dropped; the turn goes on', async () => {
    const { session } = await start('unknown-response-id');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.equal(text(session), 'ok');
    await session.shutdown();
  });

  it('a second answer to the same request changes nothing', async () => {
    const { session } = await start('duplicate-response');
    assert.equal(session.client.initializeResult?.protocolVersion, 1);
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    await session.shutdown();
  });

  it('an error object of the wrong shape fails the request with a clear error, not a crash', async () => {
    const { session } = await start('wrong-error-shape');
    await assert.rejects(session.prompt(go), (e: unknown) => e instanceof Error && e.message.length > 0);
    assert.equal(session.model.turn, 'idle');
    await session.shutdown();
  });

  it('a flood of 20 MiB on stderr: the turn completes, the kept tail stays bounded', async () => {
    const { session } = await start('stderr-flood');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    assert.ok(session.client.process.stderrTail(100_000).length <= 64 * 1024, 'the stderr ring grew past 64 KiB');
    await session.shutdown();
  });

  it('an unterminated last line is still read, then the closed output stops the agent', async () => {
    const { session, pid } = await start('unterminated-last-line');
    assert.equal((await session.prompt(go)).stopReason, 'end_turn');
    await new Promise<ExitInfo>((resolve) => session.onExit(resolve));
    assert.equal(processAlive(pid), false);
  });
});
