import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AcpClient } from '../../src/acp/acpClient';
import { ProtocolVersionError, RequestTimeoutError } from '../../src/acp/acpErrors';
import { AcpSession } from '../../src/acp/acpSession';
import { AuthRequiredError } from '../../src/session/sessionHost';
import { AgentExitedError } from '../../src/core/agentProcess';
import { PermissionBroker } from '../../src/host/permissionBroker';
import { memoryStore, PermissionRuleStore } from '../../src/host/permissionRules';
import { classifyAuthMethod } from '../../src/host/signIn';
import { silentLogger, streamLogger } from '../../src/core/log';
import { policyDecider, type PermissionDecider } from '../../src/session/permissions';
import { plainHost } from '../support/plainHost';
import { hostile } from '../support/hostile';
import { alive, scratchDir } from '../support/paths';

function capture() {
  const lines: string[] = [];
  return { lines, logger: streamLogger((l) => lines.push(l), 'trace') };
}

const started = new Set<AcpSession>();
/** AcpSession.start, remembered so a failing test never leaves its agent running (the file would hang). */
async function startSession(...args: Parameters<typeof AcpSession.start>): Promise<AcpSession> {
  const s = await AcpSession.start(...args);
  started.add(s);
  return s;
}

describe('ACP client against a hostile agent', () => {
  after(async () => {
    await Promise.all([...started].map((s) => s.shutdown()));
  });

  it('runs a whole turn through garbage, odd ids and unknown methods', async () => {
    const h = hostile('normal');
    const { lines, logger } = capture();
    const session = await startSession(h.config, { logger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('approve-all') });
    const { stopReason } = await session.prompt([{ type: 'text', text: 'please write out.txt' }]);
    assert.equal(stopReason, 'end_turn');
    // The file came through fs/write_text_file after the permission (request id 0) was allowed.
    assert.equal(readFileSync(path.join(h.dir, 'out.txt'), 'utf8'), 'hello from hostile agent\n');
    const frames = h.frames();
    const perm = frames.find((f) => f.permissionAnswer) as { permissionAnswer: { id: number; result: unknown } };
    assert.equal(perm.permissionAnswer.id, 0);
    assert.deepEqual(perm.permissionAnswer.result, { outcome: { outcome: 'selected', optionId: 'proceed_once' } });
    const unknown = frames.find((f) => f.unknownAnswer) as { unknownAnswer: { id: string; error: { code: number } } };
    assert.equal(unknown.unknownAnswer.id, 'u-1');
    assert.equal(unknown.unknownAnswer.error.code, -32601);
    // Garbage was logged loudly and dropped; the CRLF line with U+2028 made it through.
    assert.ok(lines.some((l) => l.includes('[error]') && l.includes('Malformed JSON') && l.includes('this is not json')));
    const m = session.model;
    assert.deepEqual(
      m.messages('agent').map((x) => x.text),
      ['Line\u2028sep ', 'All done.'],
    );
    assert.equal(m.messages('thought')[0]?.text, 'Thinking about it.');
    assert.equal(m.toolCall('c1')?.status, 'completed');
    assert.equal(m.toolCall('c1')?.permission?.optionId, 'proceed_once');
    assert.equal(m.plan[0]?.content, 'Write the file');
    assert.equal(m.usage?.used, 1200);
    // Every RPC is traceable: id, method and duration.
    assert.ok(lines.some((l) => /Received response 'session\/prompt - \(\d+\)' in \d+ms/.test(l)));
    assert.ok(lines.some((l) => /Sending response 'session\/request_permission - \(0\)'. Processing request took \d+ms/.test(l)));
    await session.shutdown();
  });

  it('shows a prompt of several parts as one user message, however long showing its first part takes', async () => {
    const h = hostile('normal');
    const session = await startSession(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('approve-all') });
    // A listener slow on the message's first part (a busy webview, a loaded machine): the next part comes milliseconds later.
    const off = session.model.on((e) => {
      if (e.type !== 'entity' || !e.created || e.entity.kind !== 'message' || e.entity.role !== 'user') return;
      const until = Date.now() + 3;
      while (Date.now() < until);
    });
    const text = { type: 'text', text: 'Explain: sumPrices in cart.ts' } as const;
    const link = { type: 'resource_link', uri: `file://${h.dir}/cart.ts`, name: 'cart.ts:3-9' } as const;
    await session.prompt([{ type: 'text', text: 'please write out.txt' }], [text, link]);
    off();
    assert.deepEqual(
      session.model.messages('user').map((m) => m.parts.map((p) => p.type)),
      [['text', 'resource_link']],
    );
    await session.shutdown();
  });

  it('leaves the file untouched when the permission is rejected', async () => {
    const h = hostile('normal');
    const session = await startSession(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all') });
    const { stopReason } = await session.prompt([{ type: 'text', text: 'please write out.txt' }]);
    assert.equal(stopReason, 'end_turn');
    assert.equal(existsSync(path.join(h.dir, 'out.txt')), false);
    assert.equal(session.model.toolCall('c1')?.status, 'failed');
    const perm = h.frames().find((f) => f.permissionAnswer) as { permissionAnswer: { result: unknown } };
    assert.deepEqual(perm.permissionAnswer.result, { outcome: { outcome: 'selected', optionId: 'cancel' } });
    await session.shutdown();
  });

  it('answers a pending permission with cancelled before sending session/cancel', async () => {
    const h = hostile('normal');
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    const never: PermissionDecider = (_req, signal) =>
      new Promise((resolve) => {
        asked();
        signal.addEventListener('abort', () => resolve({ outcome: 'cancelled', by: 'cancel' }));
      });
    const session = await startSession(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: never });
    const turn = session.prompt([{ type: 'text', text: 'write x.txt' }]);
    await askedP;
    assert.equal(session.model.turn, 'awaiting_permission');
    await session.cancel();
    assert.equal((await turn).stopReason, 'cancelled');
    // The agent may end the turn on the cancelled answer before it has read the notification behind it.
    let frames = h.frames();
    for (let i = 0; i < 100 && !frames.some((f) => f.method === 'session/cancel'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      frames = h.frames();
    }
    const answerIdx = frames.findIndex((f) => f.id === 0 && f.result !== undefined);
    const cancelIdx = frames.findIndex((f) => f.method === 'session/cancel');
    assert.deepEqual(frames[answerIdx]?.result, { outcome: { outcome: 'cancelled' } });
    assert.ok(answerIdx >= 0 && cancelIdx > answerIdx, 'permission answered before session/cancel');
    assert.equal(existsSync(path.join(h.dir, 'x.txt')), false);
    await session.shutdown();
  });

  it('answers pending ask_user and elicitation requests as cancelled when the turn is cancelled', async () => {
    const h = hostile('ask');
    const asked: string[] = [];
    const wait = (method: string) => (_p: unknown, signal: AbortSignal) =>
      new Promise<never>((resolve) => {
        asked.push(method);
        signal.addEventListener('abort', () => resolve({ late: true } as never));
      });
    const session = await startSession(h.config, {
      logger: silentLogger,
      cwd: h.dir,
      ...plainHost(h.dir),
      decidePermission: policyDecider('deny-all'),
      askUser: wait('ask'),
      elicit: wait('elicitation'),
    });
    const turn = session.prompt([{ type: 'text', text: 'ask me' }]);
    for (let i = 0; i < 100 && asked.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(asked.sort(), ['ask', 'elicitation']);
    await session.cancel();
    assert.equal((await turn).stopReason, 'cancelled');
    const answers = h.frames().find((f) => f.askAnswer) as { askAnswer: { result: unknown }; elicitationAnswer: { result: unknown } };
    assert.deepEqual(answers.askAnswer.result, { outcome: 'cancelled' });
    assert.deepEqual(answers.elicitationAnswer.result, { action: 'cancel' });
    await session.shutdown();
  });

  it('fails the pending prompt at once with exit code and stderr tail when the agent crashes', async () => {
    const h = hostile('crash-mid-turn');
    const session = await startSession(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all') });
    await assert.rejects(session.prompt([{ type: 'text', text: 'go' }]), (error: unknown) => {
      assert.ok(error instanceof AgentExitedError);
      assert.equal(error.exit.code, 3);
      assert.match(error.message, /exited with code 3/);
      assert.match(error.message, /the model connection broke/);
      return true;
    });
    assert.equal(session.model.turn, 'idle');
    assert.ok(session.model.timeline().some((e) => e.kind === 'notice' && e.title === 'Agent exited'));
  });

  it('times out an unanswered initialize and reports the agent unresponsive', async () => {
    const h = hostile('no-initialize');
    const client = AcpClient.spawn(
      { command: process.execPath, args: h.config.args, cwd: h.dir },
      {
        logger: silentLogger,
        handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) },
        initializeTimeoutMs: 300,
      },
    );
    const health: string[] = [];
    client.onHealth((s) => health.push(s));
    await assert.rejects(client.initialize({}), RequestTimeoutError);
    assert.deepEqual(health, ['unresponsive']);
    await client.shutdown();
  });

  it('refuses a protocol version it cannot speak, with a clear error', async () => {
    for (const v of ['2', '0']) {
      const h = hostile('version', [v]);
      await assert.rejects(
        AcpSession.start(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all') }),
        (e: unknown) => e instanceof ProtocolVersionError && e.message.includes(`version ${v}`),
      );
    }
  });

  it('turns -32000 on session/new into a sign-in error carrying the auth methods', async () => {
    const h = hostile('auth-required');
    await assert.rejects(AcpSession.start(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all') }), AuthRequiredError);
  });

  it('signs in: authenticate with the chosen agent method, then session/new again in the same process', async () => {
    const h = hostile('auth');
    const offered: string[][] = [];
    const session = await startSession(h.config, {
      logger: silentLogger,
      cwd: h.dir,
      ...plainHost(h.dir),
      decidePermission: policyDecider('deny-all'),
      signIn: async (methods) => {
        offered.push(methods.map((m) => m.id));
        return 'hostile-login';
      },
    });
    assert.deepEqual(offered, [['hostile-login', 'hostile-terminal', 'hostile-key']]);
    const methods = h
      .frames()
      .filter((f) => typeof f.method === 'string')
      .map((f) => f.method);
    assert.deepEqual(methods, ['initialize', 'session/new', 'authenticate', 'session/new']);
    assert.equal(session.model.sessionId, 'sess-1');
    const pid = session.client.process.pid;
    assert.ok(pid && alive(pid), 'the same process survived the auth error');
    await session.shutdown();
    // Declining to choose fails with the methods, as before.
    await assert.rejects(
      AcpSession.start(hostile('auth').config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all'), signIn: async () => undefined }),
      (e: unknown) => e instanceof AuthRequiredError && e.methods.length === 3,
    );
  });

  it('sorts auth methods: agent, terminal (type or _meta) with the agent command, env_var', () => {
    const agent = { command: 'node', args: ['agent.js'], env: { A: '1' } };
    const [a, t, e] = [
      { id: 'x', name: 'X' },
      { id: 't', name: 'T', type: 'terminal', args: ['login'], env: { B: '2' } },
      { id: 'k', name: 'K', type: 'env_var', varName: 'KEY' },
    ].map((m) => classifyAuthMethod(m as never, agent));
    assert.deepEqual(a, { kind: 'agent', id: 'x', name: 'X' });
    assert.deepEqual(t, { kind: 'terminal', id: 't', name: 'T', command: 'node', args: ['agent.js', 'login'], env: { A: '1', B: '2' }, droppedEnv: [] });
    assert.deepEqual(e, { kind: 'env_var', id: 'k', name: 'K', vars: ['KEY'] });
    const meta = classifyAuthMethod({ id: 'm', name: 'M', _meta: { 'terminal-auth': { command: 'gemini', args: ['--login'], env: {} } } } as never, agent);
    assert.deepEqual(meta, { kind: 'terminal', id: 'm', name: 'M', command: 'gemini', args: ['--login'], env: { A: '1' }, droppedEnv: [] });
  });

  it('an API key in the env signs in; the terminal login (agent command + method args/env, minus code-loading variables) exits 0', async () => {
    const h = hostile('auth');
    const withKey = await startSession(
      { ...h.config, env: { ...h.config.env, HOSTILE_API_KEY: 'k' } },
      { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all') },
    );
    await withKey.shutdown();
    const authFile = path.join(h.dir, 'auth-token');
    const config = { ...h.config, env: { ...h.config.env, HOSTILE_AUTH_FILE: authFile } };
    // The agent's NODE_OPTIONS would stop the login from starting: it is not passed.
    const env = { HOSTILE_LOGIN: '1', NODE_OPTIONS: '--require ./no-such-agent-host-hook.js' };
    const login = classifyAuthMethod({ id: 'hostile-terminal', name: 'T', type: 'terminal', args: ['login'], env } as never, config);
    assert.equal(login.kind, 'terminal');
    if (login.kind !== 'terminal') return;
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(login.command, login.args, { env: { ...process.env, ...login.env }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const after = await startSession(config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all') });
    await after.shutdown();
  });

  it('the rule that answered a permission is on the tool card', async () => {
    const h = hostile('normal');
    const rules = new PermissionRuleStore(memoryStore());
    // A rule for an edit names the file (a title rule never answers for kinds that change things).
    await rules.add({ action: 'reject', toolKind: 'edit', path: 'out.txt' });
    const broker = new PermissionBroker({ rules });
    const session = await startSession(h.config, { logger: silentLogger, cwd: h.dir, ...plainHost(h.dir), decidePermission: broker.decide });
    await session.prompt([{ type: 'text', text: 'please write out.txt' }]);
    const ruleId = rules.list()[0]!.id;
    assert.deepEqual(session.model.toolCall('c1')?.permission, {
      optionId: 'cancel',
      outcome: 'selected',
      by: 'rule',
      rule: 'always reject edit file out.txt (this workspace)',
      ruleId,
      rejected: true,
    });
    assert.equal(existsSync(path.join(h.dir, 'out.txt')), false);
    await session.shutdown();
  });

  it('drops a line over the size limit and keeps the connection', async () => {
    const h = hostile('huge-line', ['5000']);
    const { lines, logger } = capture();
    const session = await startSession(h.config, { logger, cwd: h.dir, ...plainHost(h.dir), decidePermission: policyDecider('deny-all'), maxLineBytes: 2048 });
    assert.ok(lines.some((l) => /over the 2048-byte limit/.test(l)));
    assert.equal(session.model.modes?.currentModeId, 'ask');
    await session.setMode('code');
    assert.equal(session.model.modes?.currentModeId, 'code');
    await session.shutdown();
  });

  it('reports a missing command with the PATH it searched', async () => {
    await assert.rejects(
      AcpSession.start({ name: 'x', command: 'no-such-agent-binary' }, { logger: silentLogger, cwd: scratchDir('nx'), decidePermission: policyDecider('deny-all') }),
      (e: unknown) => e instanceof AgentExitedError && /command not found: "no-such-agent-binary" \(PATH=/.test(e.message),
    );
  });

  it('kills an agent that ignores stdin EOF and SIGTERM, and its grandchild, with SIGKILL to the group', async () => {
    const h = hostile('stubborn');
    const client = AcpClient.spawn(
      { command: process.execPath, args: h.config.args, cwd: h.dir },
      {
        logger: silentLogger,
        handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) },
      },
    );
    let grandchild = 0;
    for (let i = 0; i < 100 && !grandchild; i++) {
      await new Promise((r) => setTimeout(r, 20));
      grandchild = Number(/grandchild (\d+)/.exec(client.process.stderrTail())?.[1] ?? 0);
    }
    assert.ok(grandchild > 0);
    const pid = client.process.pid!;
    const started = Date.now();
    const exit = await client.process.shutdown({ termAfterMs: 100, killAfterMs: 300 });
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(Date.now() - started < 3000);
    assert.equal(alive(pid), false);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(grandchild), false, 'grandchild must not survive');
  });
});
