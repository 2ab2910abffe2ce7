/**
 * `agent-host serve` (dist/cli.js) with codex-acp and the scripted model behind it, driven by the ACP SDK's
 * reference clients (ws-client, http-client) and by plain `ws` / fetch for what a broken client sends. A turn
 * over each transport writes the file the scripted model asks for; the token, the limits and the ends of a
 * connection are checked from outside: statuses, close codes, the processes `ps` shows, the log line.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { runCli } from '../support/cli';
import { cliPath, hostileAgent, repoRoot } from '../support/paths';
import { until, within } from '../support/wait';
import { agentById } from './catalog';

const TOKEN = 'gw-test-token-5f2c9a81d3e7';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const LIMIT = 1024 * 1024;
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } };
const codex = agentById('codex')!;
const only = (process.env.AGENTS ?? '').split(',').filter(Boolean);
const skip = only.length > 0 && !only.includes('codex') ? 'AGENTS leaves codex out' : codex.installed() ? false : 'codex is not installed: run scripts/setup-agents.sh';

interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  args: string;
}

/**
 * The processes running now. A zombie is left out: it runs nothing and its new parent reaps it (a sandboxed agent's
 * bubblewrap leaves a helper of its own to init for a moment when it is stopped).
 */
function procs(): Proc[] {
  return execFileSync('ps', ['-e', '-o', 'pid=,ppid=,pgid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m) => m !== null && !m[4]!.startsWith('Z'))
    .map((m) => ({ pid: Number(m![1]), ppid: Number(m![2]), pgid: Number(m![3]), args: m![5]! }));
}

/** Every process group an agent of ours led, to find what is left of them. */
const groups = new Set<number>();

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** This gateway's agent processes (its codex-acp children), remembered for the leftover checks. */
  agents: () => number[];
}

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [cliPath, 'serve', '--listen', '127.0.0.1:0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = await until(() => /^(http:\/\/\S+)\n/.exec(out)?.[1], { what: () => `the gateway's URL on stdout (stderr: ${err})`, timeoutMs: 15_000 });
  const agents = () => {
    const mine = procs().filter((p) => p.ppid === child.pid && p.args.includes('codex-acp'));
    for (const p of mine) groups.add(p.pgid);
    return mine.map((p) => p.pid).sort();
  };
  return { child, url: line, stderr: () => err, exited, agents };
}

const groupLeft = (pgid: number) => procs().some((p) => p.pgid === pgid);

function scenarioWrite(file: string, content: string): string {
  return `Please do what the scenario says.\nSCENARIO: write ${JSON.stringify({ path: file, content })}`;
}

/** initialize → session/new → session/prompt through the SDK's own client, granting the permission asked. */
async function turn(stream: unknown, workspace: string, file: string, content: string) {
  const acp = await import('@agentclientprotocol/sdk');
  const asked: string[] = [];
  const app = acp
    .client()
    .onNotification('session/update', () => undefined)
    .onRequest('session/request_permission', (cx) => {
      const allow = cx.params.options.find((o) => o.kind === 'allow_once') ?? cx.params.options.find((o) => o.kind.startsWith('allow'))!;
      asked.push(allow.optionId);
      return { outcome: { outcome: 'selected', optionId: allow.optionId } };
    });
  return app.connectWith(stream as Parameters<typeof app.connectWith>[0], async (cx) => {
    const t0 = performance.now();
    await cx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const setupMs = performance.now() - t0;
    const s = await cx.request('session/new', { cwd: workspace, mcpServers: [] });
    const r = await cx.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: scenarioWrite(file, content) }] });
    return { stopReason: r.stopReason, setupMs, asked };
  });
}

function socket(url: string, headers: Record<string, string> = AUTH): WebSocket {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
  ws.on('error', () => undefined);
  return ws;
}
const opened = (ws: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_q, r) => reject(new Error(`HTTP ${r.statusCode}`)));
  });
/** The status and text of a refused upgrade; an accepted one is 101 (and closed). */
const refusedWith = (ws: WebSocket) =>
  new Promise<{ status: number; body: string }>((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (_q, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
const closedWith = (ws: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
const nextMessage = (ws: WebSocket) => new Promise<Record<string, unknown>>((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()) as Record<string, unknown>)));

describe('agent-host serve: codex-acp behind the gateway, the SDK reference clients in front', { skip, concurrency: false }, () => {
  let model: ScriptedModel;
  let scratch: string;
  let workspace: string;
  let gw: Served;
  const timings: string[] = [];

  before(async () => {
    model = await startScriptedModel();
    fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
    scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'gateway-'));
    workspace = path.join(scratch, 'workspace');
    fs.mkdirSync(workspace);
    const spec = await codex.prepare({ scratch, modelUrl: model.url, workspace });
    const config = path.join(scratch, 'agents.json');
    fs.writeFileSync(config, JSON.stringify([{ name: 'codex', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }]));
    gw = await serve(['--config', config, '--agent', 'codex', '--cwd', workspace, '--max-connections', '4', '--max-message-bytes', String(LIMIT)], { ...process.env, ACP_REMOTE_TOKEN: TOKEN });
  });

  after(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await model?.close();
    if (timings.length) process.stdout.write(`\ngateway connection setup (connect + initialize): ${timings.join(', ')}\n`);
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  test('a turn over WebSocket writes the file the scripted model asks for; the connection ends with one log line and its agent', { timeout: 60_000 }, async () => {
    const { createWebSocketStream } = await import('@agentclientprotocol/sdk/experimental/ws-client');
    const file = path.join(workspace, 'over-ws.txt');
    const stream = createWebSocketStream(gw.url.replace(/^http/, 'ws'), { WebSocket: WebSocket as never, headers: AUTH });
    const r = await turn(stream, workspace, file, 'written over WebSocket\n');
    timings.push(`WebSocket ${r.setupMs.toFixed(0)} ms`);
    assert.equal(r.stopReason, 'end_turn');
    assert.deepEqual(r.asked, ['approved']);
    assert.equal(fs.readFileSync(file, 'utf8'), 'written over WebSocket\n');
    // connectWith closed the stream: the agent is stopped and its line written.
    const line = await until(() => gw.stderr().match(/connection ended: .*websocket.*/)?.[0], { what: 'the log line of the WebSocket connection' });
    assert.match(
      line,
      /^connection ended: peer 127\.0\.0\.1:\d+, agent codex \(pid \d+\), websocket, \d+\.\d s, messages [1-9]\d* in \/ [1-9]\d* out, bytes [1-9]\d* in \/ [1-9]\d* out; WebSocket closed \(\d+\)/,
    );
    await until(() => gw.agents().length === 0, { what: 'no agent left after the client closed' });
    assert.ok(!gw.stderr().includes(TOKEN), 'the token was logged');
  });

  test('a turn over Streamable HTTP writes the file; its close deletes the connection and stops the agent', { timeout: 60_000 }, async () => {
    const { createHttpStream } = await import('@agentclientprotocol/sdk/experimental/http-client');
    const file = path.join(workspace, 'over-http.txt');
    const r = await turn(createHttpStream(gw.url, { headers: AUTH }), workspace, file, 'written over HTTP\n');
    timings.push(`HTTP ${r.setupMs.toFixed(0)} ms`);
    assert.equal(r.stopReason, 'end_turn');
    assert.equal(fs.readFileSync(file, 'utf8'), 'written over HTTP\n');
    const line = await until(() => gw.stderr().match(/connection ended: .*, http, .*/)?.[0], { what: 'the log line of the HTTP connection' });
    assert.match(line, /messages [1-9]\d* in \/ [1-9]\d* out.*; the client deleted it \(DELETE\)/);
    await until(() => gw.agents().length === 0, { what: 'no agent left after DELETE' });
  });

  test('no token or a wrong one: 401 over HTTP and on the WebSocket upgrade, and no agent starts', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong-token' }, { Authorization: TOKEN }]) {
      const res = await fetch(gw.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(INITIALIZE) });
      assert.equal(res.status, 401);
      assert.match(await res.text(), /Unauthorized: send "Authorization: Bearer <token>"/);
      const refused = await refusedWith(socket(gw.url, headers));
      assert.equal(refused.status, 401);
    }
    assert.deepEqual(gw.agents(), []);
    assert.ok(!gw.stderr().includes('wrong-token'), 'a presented token was logged');
  });

  test('4 connections at once each get their own agent, a fifth is refused with 503, closing one leaves the others running', { timeout: 60_000 }, async () => {
    const acp = await import('@agentclientprotocol/sdk');
    const { createWebSocketStream } = await import('@agentclientprotocol/sdk/experimental/ws-client');
    const conns = [0, 1, 2, 3].map(() => acp.client().connect(createWebSocketStream(gw.url.replace(/^http/, 'ws'), { WebSocket: WebSocket as never, headers: AUTH })));
    await Promise.all(conns.map((c) => c.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} })));
    const pids = await until(() => (gw.agents().length === 4 ? gw.agents() : undefined), { what: () => `4 agent processes (have ${gw.agents().length})` });
    assert.equal(new Set(pids).size, 4);

    const fifth = await refusedWith(socket(gw.url));
    assert.equal(fifth.status, 503);
    assert.match(fifth.body, /Too many connections: the gateway serves 4 at once \(--max-connections\)/);
    const post = await fetch(gw.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...AUTH }, body: JSON.stringify(INITIALIZE) });
    assert.equal(post.status, 503);

    conns[0]!.close();
    await until(() => gw.agents().length === 3, { what: 'the closed connection’s agent to stop' });
    const left = gw.agents();
    assert.equal(left.filter((p) => pids.includes(p)).length, 3, 'another connection lost its agent');
    const s = await conns[1]!.agent.request('session/new', { cwd: workspace, mcpServers: [] });
    assert.ok(s.sessionId, 'a remaining connection no longer answers');
    for (const c of conns.slice(1)) c.close();
    await until(() => gw.agents().length === 0, { what: 'every agent to stop after its client left' });
  });

  test('DELETE ends the connection and stops its agent; later requests on it get 410', { timeout: 30_000 }, async () => {
    const init = await fetch(gw.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...AUTH }, body: JSON.stringify(INITIALIZE) });
    assert.equal(init.status, 200);
    const id = init.headers.get('Acp-Connection-Id')!;
    const [pid] = await until(() => (gw.agents().length === 1 ? gw.agents() : undefined), { what: 'the connection’s agent' });
    const del = await fetch(gw.url, { method: 'DELETE', headers: { 'Acp-Connection-Id': id, ...AUTH } });
    assert.equal(del.status, 202);
    await until(() => !procs().some((p) => p.pid === pid), { what: 'the agent to stop after DELETE' });
    const late = await fetch(gw.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Acp-Connection-Id': id, ...AUTH },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: workspace, mcpServers: [] } }),
    });
    assert.equal(late.status, 410);
    assert.equal(await late.text(), 'This connection has ended: the client deleted it (DELETE)');
  });

  test('a message over --max-message-bytes: the frame closes the socket with 1009 and a reason, the POST gets 413', { timeout: 30_000 }, async () => {
    const ws = socket(gw.url);
    await opened(ws);
    ws.send(JSON.stringify(INITIALIZE));
    await nextMessage(ws);
    const closed = closedWith(ws);
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'x'.repeat(LIMIT) } }));
    assert.deepEqual(await closed, { code: 1009, reason: `message over ${LIMIT} bytes (--max-message-bytes)` });
    const big = await fetch(gw.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...AUTH },
      body: JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(LIMIT) } }),
    });
    assert.equal(big.status, 413);
    assert.equal(await big.text(), `Request body exceeds ${LIMIT} bytes`);
    await until(() => gw.agents().length === 0, { what: 'the agent of the oversized frame’s connection to stop' });
    await until(() => /connection ended: .*websocket.*; a message over 1048576 bytes/.test(gw.stderr()), { what: () => `the oversized frame's log line in ${gw.stderr()}` });
  });

  test('a JSON array (a batch) gets the SDK’s -32600 answer over both transports, and the connection goes on', { timeout: 30_000 }, async () => {
    const ws = socket(gw.url);
    await opened(ws);
    ws.send(JSON.stringify([INITIALIZE]));
    const answer = await nextMessage(ws);
    assert.equal(answer.id, null);
    assert.equal((answer.error as { code: number }).code, -32600);
    ws.send(JSON.stringify(INITIALIZE));
    const init = await nextMessage(ws);
    assert.equal(init.id, 1);
    assert.ok(init.result, JSON.stringify(init));
    // A second initialize on the connection: the SDK refuses it, and says so in the gateway's log (not raw on the console).
    ws.send(JSON.stringify({ ...INITIALIZE, id: 2 }));
    assert.equal(((await nextMessage(ws)).error as { code: number }).code, -32600);
    await until(() => /\[warn\] Ignoring ACP WebSocket message: Initialize not allowed on existing connection/.test(gw.stderr()), { what: "the SDK's warning in the log" });
    const post = await fetch(gw.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...AUTH }, body: JSON.stringify([INITIALIZE]) });
    assert.equal(post.status, 400);
    assert.equal(((await post.json()) as { error: { code: number } }).error.code, -32600);
    ws.close();
    await until(() => gw.agents().length === 0, { what: 'the agent to stop' });
  });

  test('SIGTERM to the gateway closes its connections (1001), stops every agent and exits 0', { timeout: 30_000 }, async () => {
    const a = socket(gw.url);
    const b = socket(gw.url);
    await Promise.all([opened(a), opened(b)]);
    await until(() => gw.agents().length === 2, { what: 'two agents' });
    const closes = [closedWith(a), closedWith(b)];
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
    for (const c of await Promise.all(closes)) assert.equal(c.code, 1001);
    const left = [...groups].filter(groupLeft);
    const leftovers = procs().filter((p) => left.includes(p.pgid));
    assert.deepEqual(left, [], `agent process groups left: ${leftovers.map((p) => `${p.pid} (group ${p.pgid}): ${p.args.slice(0, 120)}`).join('; ')}`);
    assert.match(gw.stderr(), /SIGTERM: closing 2 connection\(s\)/);
  });
});

describe('agent-host serve: its own refusals and the idle time', { skip, concurrency: false }, () => {
  test('--listen 0.0.0.0:0 without --allow-remote, or no ACP_REMOTE_TOKEN: exit 2 with a plain message', async () => {
    const env = { ...process.env, ACP_REMOTE_TOKEN: TOKEN };
    const remote = await runCli(['serve', '--listen', '0.0.0.0:0', '--command', 'true'], repoRoot, env);
    assert.equal(remote.code, 2);
    assert.match(remote.stderr, /--listen 0\.0\.0\.0:0 is not a loopback address: .*give --allow-remote/);
    assert.equal(remote.stdout, '');
    const { ACP_REMOTE_TOKEN: _, ...noToken } = env;
    const tokenless = await runCli(['serve', '--listen', '127.0.0.1:0', '--command', 'true'], repoRoot, noToken);
    assert.equal(tokenless.code, 2);
    assert.match(tokenless.stderr, /set ACP_REMOTE_TOKEN to the token clients must send/);
  });

  test('--allow-remote serves on 0.0.0.0 and warns that the token crosses the network in clear', async () => {
    const gw = await serve(['--listen', '0.0.0.0:0', '--allow-remote', '--command', 'true'], { ...process.env, ACP_REMOTE_TOKEN: TOKEN });
    try {
      assert.match(gw.url, /^http:\/\/0\.0\.0\.0:[1-9]\d*\/acp$/);
      // The warning is on stderr, the address on stdout: one may come before the other.
      await until(() => /listening on 0\.0\.0\.0, beyond this machine, over plain HTTP: the token crosses the network in clear/.test(gw.stderr()) || undefined, {
        what: () => `the warning in ${gw.stderr()}`,
      });
      const res = await fetch(gw.url.replace('0.0.0.0', '127.0.0.1'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 401);
      gw.child.kill('SIGTERM');
      assert.equal(await gw.exited, 0);
    } finally {
      if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
    }
  });

  // A sandboxed codex starts in seconds on a loaded machine: the idle time is counted from its first answer.
  test('a connection idle for --idle-timeout is closed (4000 and why) and its agent stopped; agents never see the token', { timeout: 120_000 }, async () => {
    const model = await startScriptedModel();
    const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'gateway-idle-'));
    let gw: Served | undefined;
    try {
      const spec = await codex.prepare({ scratch, modelUrl: model.url, workspace: scratch });
      // The ad-hoc form after "--": the agent inherits the gateway's environment, which holds the token.
      gw = await serve(['--idle-timeout', '2', '--', spec.command, ...spec.args], { ...spec.env, ACP_REMOTE_TOKEN: TOKEN });
      const ws = socket(gw.url);
      // Listened for from the start: the idle close may come while the agent's process is still being looked at.
      const closed = closedWith(ws);
      await within(opened(ws), 30_000, 'the WebSocket to open');
      ws.send(JSON.stringify(INITIALIZE));
      const t0 = Date.now();
      // The connection's agent and what its environment holds, read while it runs (the answer itself is not needed).
      const { pid, environ } = await until(
        () => {
          const [p] = gw!.agents();
          if (!p) return undefined;
          try {
            return { pid: p, environ: fs.readFileSync(`/proc/${p}/environ`, 'latin1') };
          } catch {
            return undefined;
          }
        },
        { what: () => `the connection's agent (stderr: ${gw?.stderr()})`, timeoutMs: 30_000, intervalMs: 20 },
      );
      assert.ok(!environ.includes('ACP_REMOTE_TOKEN'), 'the agent was given the token');
      assert.deepEqual(await within(closed, 60_000, () => `the idle close (stderr: ${gw?.stderr()})`), { code: 4000, reason: 'closed after 2 s without traffic (--idle-timeout)' });
      assert.ok(Date.now() - t0 > 1000, 'closed before the idle time');
      await until(() => !procs().some((p) => p.pid === pid), { what: 'the idle connection’s agent to stop' });
      await until(() => /connection ended: .*; closed after 2 s without traffic/.test(gw!.stderr()), { what: () => `the idle connection's log line in ${gw!.stderr()}` });
      gw.child.kill('SIGTERM');
      assert.equal(await within(gw.exited, 30_000, 'the gateway to exit on SIGTERM'), 0);
    } finally {
      if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
      await model.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('agent-host serve: the WebSocket path straight to the agent (test/fixtures/hostileAgent.js behind it)', { concurrency: false }, () => {
  const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  const childOf = (gw: Served) => procs().find((p) => p.ppid === gw.child.pid && p.args.includes('hostileAgent'));

  test('the 101 names the connection; a frame not JSON gets -32700, a batch -32600, neither reaches the agent; a first message not initialize closes 1002', { timeout: 30_000 }, async () => {
    const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'gateway-frames-'));
    const log = path.join(scratch, 'frames.ndjson');
    const gw = await serve(['--', process.execPath, hostileAgent, 'answer'], { ...process.env, ACP_REMOTE_TOKEN: TOKEN, HOSTILE_LOG: log });
    try {
      const ws = socket(gw.url);
      const id = new Promise<unknown>((resolve) => ws.once('upgrade', (res) => resolve(res.headers['acp-connection-id'])));
      await opened(ws);
      assert.match(String(await id), /^[0-9a-f-]{36}$/);
      ws.send('not json {');
      assert.deepEqual(await nextMessage(ws), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      ws.send(JSON.stringify([INITIALIZE]));
      assert.deepEqual(await nextMessage(ws), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request: JSON-RPC batches are not supported' } });
      ws.send(JSON.stringify(INITIALIZE));
      assert.equal((await nextMessage(ws)).id, 1);
      const frames = fs.readFileSync(log, 'utf8').trim().split('\n');
      assert.deepEqual(
        frames.map((f) => (JSON.parse(f) as { method?: string }).method),
        ['initialize'],
      );
      ws.close();
      const early = socket(gw.url);
      await opened(early);
      early.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: scratch, mcpServers: [] } }));
      assert.deepEqual(await closedWith(early), { code: 1002, reason: 'First message must be initialize' });
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  test('each line of the agent is one frame as it is; a line that is not a JSON object is dropped and said in the log', { timeout: 30_000 }, async () => {
    const gw = await serve(['--', process.execPath, hostileAgent, 'normal'], { ...process.env, ACP_REMOTE_TOKEN: TOKEN });
    try {
      const ws = socket(gw.url);
      await opened(ws);
      const frames: string[] = [];
      const asked = new Promise<void>((resolve) =>
        ws.on('message', (d) => {
          frames.push(d.toString());
          if (d.toString().includes('craft/drainMidTurnQueue')) resolve();
        }),
      );
      ws.send(JSON.stringify(INITIALIZE));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: repoRoot, mcpServers: [] } }));
      await until(() => frames.length === 2, { what: 'the answers to initialize and session/new' });
      const sessionId = (JSON.parse(frames[1]!) as { result: { sessionId: string } }).result.sessionId;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } }));
      await asked;
      const turn = frames.slice(2).map((f) => JSON.parse(f) as { method?: string; params?: { update?: { sessionUpdate?: string; content?: { text?: string } } } });
      assert.deepEqual(
        turn.map((m) => m.params?.update?.content?.text ?? m.method),
        ['Thinking about it.', 'Line\u2028sep ', 'qwen/notification-without-underscore', 'craft/drainMidTurnQueue'],
      );
      const said = /not a JSON-RPC message; dropped: this is not json\n.*not a JSON-RPC message; dropped: \[1,2,3\]\n/;
      await until(() => said.test(gw.stderr()), { what: () => `the dropped lines said in the log: ${gw.stderr()}` });
      ws.close();
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  });

  test('an agent that exits on its own closes its socket with 1011 and how it ended, and the log line says so', { timeout: 30_000 }, async () => {
    const gw = await serve(['--', process.execPath, hostileAgent, 'crash-mid-turn'], { ...process.env, ACP_REMOTE_TOKEN: TOKEN });
    try {
      const ws = socket(gw.url);
      await opened(ws);
      ws.send(JSON.stringify(INITIALIZE));
      await nextMessage(ws);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: repoRoot, mcpServers: [] } }));
      const sessionId = ((await nextMessage(ws)).result as { sessionId: string }).sessionId;
      const closed = closedWith(ws);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } }));
      assert.deepEqual(await closed, { code: 1011, reason: 'the agent ended (exit code 3)' });
      await until(() => /connection ended: .*websocket.*; the agent ended \(exit code 3\)\n/.test(gw.stderr()), { what: () => `the log line in ${gw.stderr()}` });
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  });

  test('a client that stops reading: the agent waits (the gateway holds about a MiB, not the flood), and resumed the client gets all of it', { timeout: 60_000 }, async () => {
    const chunks = 300_000;
    const gw = await serve(['--', process.execPath, hostileAgent, 'flood', String(chunks)], { ...process.env, ACP_REMOTE_TOKEN: TOKEN });
    try {
      const ws = socket(gw.url);
      await opened(ws);
      ws.send(JSON.stringify(INITIALIZE));
      await nextMessage(ws);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: repoRoot, mcpServers: [] } }));
      const sessionId = ((await nextMessage(ws)).result as { sessionId: string }).sessionId;
      const before = rssMiB(gw.child.pid!);
      let updates = 0;
      const done = new Promise<void>((resolve) =>
        ws.on('message', (d) => {
          const text = d.toString();
          if (text.includes('agent_message_chunk')) updates++;
          else if (text.includes('end_turn')) resolve();
        }),
      );
      ws.pause();
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } }));
      // About 50 MB of updates: unread, they would pile up in the gateway.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const grown = rssMiB(gw.child.pid!) - before;
      assert.ok(grown < 30, `the gateway grew by ${grown.toFixed(0)} MiB while its client read nothing`);
      assert.ok(childOf(gw), 'the agent is running');
      ws.resume();
      await done;
      assert.equal(updates, chunks);
      ws.close();
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  });
});
