/**
 * Remote ACP agents against the SDK's reference server (AcpServer behind its Node handlers, a Bearer check in
 * front), a real codex-acp behind each connection, the scripted model behind codex: our client through
 * startAgentSession and through the CLI, over WebSocket and over Streamable HTTP. A turn writes the file the
 * model asks for; a wrong token is refused by name (CLI exit 3); a server gone mid-turn fails the turn at once
 * (CLI exit 4, one line); a server gone between turns and back is reconnected and the session reattached (the
 * model's next request carries the first turn); a slow server trips only timeouts; a message over the size
 * limit and a JSON array from the server are refused clearly.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RequestTimeoutError } from '../../src/acp/acpErrors';
import type { AcpSession } from '../../src/acp/acpSession';
import { startAgentSession } from '../../src/adapters/factory';
import { AgentExitedError } from '../../src/core/agentProcess';
import { streamLogger } from '../../src/core/log';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { parseAgentConfigs, type AgentConfig } from '../../src/session/agentConfig';
import { AgentLifecycle } from '../../src/session/lifecycle';
import { policyDecider } from '../../src/session/permissions';
import { TokenRefusedError, type AgentStartOptions } from '../../src/session/sessionHost';
import { ReferenceServer, type AgentCommand } from '../support/acpReferenceServer';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';
import { plainHost } from '../support/plainHost';
import { until } from '../support/wait';
import { agentById } from './catalog';

const TOKEN = 'remote-token-7f3a9c';
const SCHEMES = ['ws', 'http'] as const;
const codex = agentById('codex')!;
const skip = codex.installed() ? false : 'codex not installed: run scripts/setup-agents.sh';
const scenario = (name: string, args: object) => `Please do what the scenario says.\nSCENARIO: ${name} ${JSON.stringify(args)}`;

let model: ScriptedModel;
let scratch: string;
let workspace: string;
let agent: AgentCommand;

before(async () => {
  if (skip) return;
  model = await startScriptedModel();
  fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
  scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'remote-acp-'));
  workspace = path.join(scratch, 'workspace');
  fs.mkdirSync(workspace);
  const spec = await codex.prepare({ scratch, modelUrl: model.url, workspace });
  agent = { command: spec.command, args: spec.args, env: spec.env, cwd: workspace };
});
after(async () => {
  await model?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** The entry as settings give it: a URL and protocol acp (the default). */
const entry = (url: string): AgentConfig => parseAgentConfigs([{ name: 'remote-codex', url }])[0]!;

function options(extra: Partial<AgentStartOptions> = {}): AgentStartOptions & { frames: { dir: string; msg: Record<string, unknown> }[]; log: string[] } {
  const frames: { dir: string; msg: Record<string, unknown> }[] = [];
  const log: string[] = [];
  return {
    logger: streamLogger((l) => log.push(l), 'debug'),
    cwd: workspace,
    ...plainHost(workspace),
    decidePermission: policyDecider('approve-all'),
    apiKey: TOKEN,
    requestTimeoutMs: 60_000,
    frameTap: (dir, msg) => frames.push({ dir, msg: msg as Record<string, unknown> }),
    frames,
    log,
    ...extra,
  };
}

const cli = (url: string, prompt: string, token = TOKEN) =>
  runCli(['--url', url, '--cwd', workspace, '--state-dir', path.join(scratch, 'state'), '--approve-all', prompt], workspace, { ...process.env, ACP_REMOTE_TOKEN: token });

async function withServer<T>(run: (server: ReferenceServer) => Promise<T>, delayMs = 0): Promise<T> {
  const server = await ReferenceServer.start({ token: TOKEN, agent, delayMs });
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

describe('remote ACP agents through the SDK reference server', { concurrency: false, skip }, () => {
  for (const scheme of SCHEMES) {
    test(`${scheme}: a turn writes the file the model asks for; the server's cookie comes back; the agent ends with the session`, { timeout: 60_000 }, () =>
      withServer(async (server) => {
        const file = path.join(workspace, `${scheme}-hello.txt`);
        // As the editor starts it (shareProcess): a remote agent is never pooled, each session has its own connection.
        const o = options({ shareProcess: true });
        const session = (await startAgentSession(entry(server.url(scheme)), o)) as AcpSession;
        try {
          const { stopReason } = await session.prompt([{ type: 'text', text: scenario('write', { path: file, content: `over ${scheme}\n` }) }]);
          assert.equal(stopReason, 'end_turn');
          assert.equal(fs.readFileSync(file, 'utf8'), `over ${scheme}\n`);
          assert.ok(
            o.frames.some((f) => f.dir === 'in' && f.msg.method === 'session/request_permission'),
            'the permission request came through',
          );
          assert.equal(session.client.transport.constructor.name, scheme === 'ws' ? 'WebSocketTransport' : 'HttpStreamTransport');
          const stats = session.client.transport.stats;
          assert.ok(stats.bytesIn > 1000 && stats.messagesIn > 5 && stats.bytesOut > 100, `the traffic counters count: ${JSON.stringify(stats)}`);
          const second = (await startAgentSession(entry(server.url(scheme)), options({ shareProcess: true }))) as AcpSession;
          assert.notEqual(second.client, session.client, 'two sessions, two connections');
          assert.equal(server.agents.size, 2);
          await second.shutdown();
        } finally {
          await session.shutdown();
        }
        // Streamable HTTP: every request after initialize carries the cookie; a WebSocket's next upgrade does.
        if (scheme === 'http')
          assert.ok(
            server.cookies.slice(1).every((c) => c === 'lb=backend-7'),
            JSON.stringify(server.cookies),
          );
        else assert.deepEqual(server.cookies, [undefined, 'lb=backend-7']);
        await until(() => server.agents.size === 0, { what: 'the agent behind the connection to end', timeoutMs: 10_000 });
      }),
    );

    test(`${scheme}: a wrong token fails the start with the refused-token error and asks for another`, { timeout: 30_000 }, () =>
      withServer(async (server) => {
        let refusedCalls = 0;
        const start = startAgentSession(entry(server.url(scheme)), options({ apiKey: 'wrong', onKeyRefused: () => refusedCalls++ }));
        await assert.rejects(start, (e: Error) => e instanceof TokenRefusedError && /refused the token/.test(e.message) && /401/.test(e.message));
        assert.equal(refusedCalls, 1);
        assert.equal(server.agents.size, 0);
        const run = await cli(server.url(scheme), 'hello', 'wrong');
        assert.equal(run.code, 3, run.stderr);
        assert.match(run.stderr, /refused the token/);
        assert.ok(!run.stderr.includes('wrong'), 'the token is not printed');
      }),
    );

    test(`${scheme}: the server gone mid-turn fails the turn at once with the disconnect, nothing left pending`, { timeout: 60_000 }, () =>
      withServer(async (server) => {
        const o = options();
        const session = (await startAgentSession(entry(server.url(scheme)), o)) as AcpSession;
        const exited = new Promise((resolve) => session.onExit(resolve));
        const turn = session.prompt([{ type: 'text', text: scenario('shell', { command: 'sleep 60' }) }]);
        turn.catch(() => undefined);
        await until(() => session.model.timeline().some((e) => e.kind === 'tool_call'), { what: 'the shell tool call', timeoutMs: 40_000 });
        const t0 = Date.now();
        await server.kill();
        await assert.rejects(turn, (e: Error) => e instanceof AgentExitedError && e.exit.disconnected !== undefined);
        assert.ok(Date.now() - t0 < 3000, `the turn failed ${Date.now() - t0} ms after the server went`);
        assert.deepEqual(session.client.outstanding().requests, []);
        assert.equal(((await exited) as { code: unknown }).code === 0, false, 'a drop is not a clean exit');
        const notice = session.model.timeline().find((e) => e.kind === 'notice' && e.title === 'Connection lost');
        assert.ok(notice, 'the chat says the connection was lost');
        await session.shutdown();
      }),
    );
  }

  test('http: the session event stream ended under a turn counts as a drop: the turn fails at once', { timeout: 60_000 }, () =>
    withServer(async (server) => {
      const session = (await startAgentSession(entry(server.url('http')), options())) as AcpSession;
      const turn = session.prompt([{ type: 'text', text: scenario('shell', { command: 'sleep 60' }) }]);
      turn.catch(() => undefined);
      await until(() => session.model.timeline().some((e) => e.kind === 'tool_call'), { what: 'the shell tool call', timeoutMs: 40_000 });
      assert.equal(server.endSessionStreams(), 1);
      await assert.rejects(turn, (e: Error) => e instanceof AgentExitedError && /ended the session's event stream/.test(e.message));
      assert.deepEqual(session.client.outstanding().requests, []);
      await session.shutdown();
    }),
  );

  test('CLI: a turn over each transport writes the file; the server gone mid-turn exits 4 with one line', { timeout: 90_000 }, () =>
    withServer(async (server) => {
      for (const scheme of SCHEMES) {
        const file = path.join(workspace, `cli-${scheme}.txt`);
        const run = await cli(server.url(scheme), scenario('write', { path: file, content: `cli over ${scheme}\n` }));
        assert.equal(run.code, 0, run.stderr);
        assert.equal(fs.readFileSync(file, 'utf8'), `cli over ${scheme}\n`);
      }
      const before = model.toolCalls().length;
      const running = cli(server.url('ws'), scenario('shell', { command: 'sleep 60' }));
      await until(() => model.toolCalls().length > before && server.agents.size > 0, { what: 'the shell tool call', timeoutMs: 40_000 });
      await new Promise((r) => setTimeout(r, 500));
      await server.kill();
      const run = await running;
      assert.equal(run.code, 4, run.stderr);
      // One plain line of its own (the log's lines, at its default level warn, are the log's).
      const own = run.stderr
        .trim()
        .split('\n')
        .filter((l) => !/^\S+Z \[(warn|error)\] /.test(l));
      assert.equal(own.length, 1, run.stderr);
      assert.match(own[0]!, /^agent-host: The connection to agent "remote" dropped during the turn, which is lost \(.+\)$/);
    }),
  );

  for (const scheme of SCHEMES) {
    test(`${scheme}: the server gone between turns and back: the lifecycle reconnects with its backoff and reattaches the session`, { timeout: 90_000 }, () =>
      withServer(async (server) => {
        const o = options();
        const config = entry(server.url(scheme));
        const life = new AgentLifecycle({ log: o.logger, plan: () => ({ agent: config.name, launch: (attach) => startAgentSession(config, { ...o, ...(attach ? { attach } : {}) }) }) });
        const word = `HERON-${scheme}-5821`;
        try {
          const first = await life.ensureStarted();
          assert.equal(await life.prompt([{ type: 'text', text: `The code word is ${word}.\nSCENARIO: answer {"text": "noted"}` }]), 'end_turn');
          await server.kill();
          // Still gone at the first try (1 s): a server that cannot be reached counts as a drop, tried again after 2 s.
          await until(() => o.log.some((l) => /Restart after a crash failed: .*cannot reach/.test(l)), {
            what: () => `a first reconnect to fail (state ${life.state}: ${life.error})`,
            timeoutMs: 10_000,
          });
          assert.ok(life.pendingRestart, 'another reconnect is scheduled');
          await server.revive();
          const second = await life.pendingRestart!;
          assert.equal(second.sessionId, first.sessionId);
          assert.ok(second.attach.how === 'loaded' || second.attach.how === 'resumed', `reattached: ${JSON.stringify(second.attach)}`);
          const seen = model.requests.length;
          assert.equal(await life.prompt([{ type: 'text', text: 'What was the code word?\nSCENARIO: answer {"text": "it was given"}' }]), 'end_turn');
          const next = model.requests.slice(seen);
          assert.ok(
            next.some((r) => JSON.stringify(r.body).includes(word)),
            'the model saw the first turn again',
          );
        } finally {
          await life.stop();
        }
      }),
    );
  }

  test('http: a slow server trips nothing but a timeout shorter than it', { timeout: 60_000 }, () =>
    withServer(async (server) => {
      const file = path.join(workspace, 'slow.txt');
      const session = (await startAgentSession(entry(server.url('http')), options())) as AcpSession;
      try {
        const { stopReason } = await session.prompt([{ type: 'text', text: scenario('write', { path: file, content: 'slow\n' }) }]);
        assert.equal(stopReason, 'end_turn');
        assert.equal(fs.readFileSync(file, 'utf8'), 'slow\n');
        await assert.rejects(session.client.request('session/set_mode', { sessionId: session.sessionId, modeId: 'read-only' }, 50), RequestTimeoutError);
        assert.equal(session.client.exitInfo, undefined, 'the connection stays up');
        assert.equal(session.client.transport.writable, true);
      } finally {
        await session.shutdown();
      }
    }, 150),
  );

  for (const scheme of SCHEMES) {
    test(`${scheme}: a message over the size limit ends the connection and says so`, { timeout: 60_000 }, () =>
      withServer(async (server) => {
        let sent = false;
        server.rewrite = (m) => {
          if (sent || m.method !== 'session/update') return undefined;
          sent = true;
          const sessionId = (m.params as { sessionId: string }).sessionId;
          return [m, { jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x'.repeat(100_000) } } } }];
        };
        const session = (await startAgentSession(entry(server.url(scheme)), options({ maxLineBytes: 64 * 1024 }))) as AcpSession;
        const turn = session.prompt([{ type: 'text', text: scenario('answer', { text: 'hello' }) }]);
        await assert.rejects(turn, (e: Error) => e instanceof AgentExitedError && /over the 65536-byte limit/.test(e.message));
        await session.shutdown();
      }),
    );
  }

  for (const scheme of SCHEMES) {
    test(`${scheme}: a JSON array from the server is not read (answered with -32600 over a WebSocket); the turn goes on`, { timeout: 60_000 }, () =>
      withServer(async (server) => {
        let sent = false;
        server.rewrite = (m) => {
          if (sent || m.method !== 'session/update') return undefined;
          sent = true;
          return [[{ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 'batch', update: {} } }], m];
        };
        const o = options();
        const session = (await startAgentSession(entry(server.url(scheme)), o)) as AcpSession;
        try {
          const { stopReason } = await session.prompt([{ type: 'text', text: scenario('answer', { text: 'after the batch' }) }]);
          assert.equal(stopReason, 'end_turn');
          assert.ok(sent, 'the batch was sent');
          assert.ok(!o.frames.some((f) => Array.isArray(f.msg) || (f.msg.params as { sessionId?: string } | undefined)?.sessionId === 'batch'), 'the batch reached nobody');
          // Over Streamable HTTP the SDK's client skips it (an SSE payload that is not an object) and says so on the console.
          if (scheme === 'ws') {
            assert.match(o.log.join('\n'), /a JSON-RPC batch \(a JSON array; ACP has none\): answered with -32600/);
            assert.equal(session.client.transport.stats.linesDropped, 1);
          }
        } finally {
          await session.shutdown();
        }
      }),
    );
  }
});
