/**
 * `agent-host check` against an agent service: the built CLI (dist/cli.js) run against the test server
 * (test/support/agentServiceServer.ts) in this process. A good key: every row verified from the frames the
 * server saw and sent; a wrong key (closed, or HTTP 401): "refused the API key", exit 1; no key: usage, and
 * no connection made; a stream with a gap: service.chat failed; a service that asks no IDE lookup: absent.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { SERVICE_CHECK_IDS, type CompatReport } from '../../src/check/checkTypes';
import { AgentServiceServer, type AgentServiceServerOptions, defaultIdeCalls } from '../support/agentServiceServer';
import { runCli } from '../support/cli';
import { scratchDir } from '../support/paths';

const root = scratchDir('check-service');
const servers: AgentServiceServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  fs.rmSync(root, { recursive: true, force: true });
});

async function serve(options: AgentServiceServerOptions): Promise<AgentServiceServer> {
  const server = await AgentServiceServer.start(options);
  servers.push(server);
  return server;
}

function check(args: string[], key: string | undefined) {
  const env = { ...process.env };
  delete env.AGENT_SERVICE_API_KEY;
  return runCli(['check', ...args], root, key === undefined ? env : { ...env, AGENT_SERVICE_API_KEY: key });
}

const row = (r: CompatReport, id: string) => r.checks.find((c) => c.id === id)!;

describe('agent-host check --protocol agent-service', () => {
  test('a good key: every row verified by what went over the wire, exit 0', { timeout: 30_000 }, async () => {
    // A task takes a while, as a model's does: the second task reaches the service while the first runs.
    const server = await serve({ ideCalls: defaultIdeCalls, taskMs: 300, chunks: 6, shuffle: true });
    const { code, stdout, stderr } = await check(['--protocol', 'agent-service', '--url', server.url, '--format', 'json'], 'simpletest2025_check');
    assert.equal(code, 0, stderr + stdout);
    const report = JSON.parse(stdout) as CompatReport;
    assert.equal(report.protocol, 'agent-service');
    assert.deepEqual(
      report.checks.map((c) => [c.id, c.status]),
      SERVICE_CHECK_IDS.map((id) => [id, 'verified']),
    );
    assert.match(row(report, 'service.listModel').evidence.text, /2 models: local deepseek-R1:32b, deepseek-R1:32b/);
    // Six frames sent with neighbours swapped: three came after a higher stream_seq_id.
    assert.match(row(report, 'service.chat').evidence.text, /in 6 frames \(stream_seq_id 0–5, stream_finish on 5\), 3 frames came out of order/);
    const explain = server.received.map((r) => r.frame as Record<string, unknown>).find((f) => f.cmd === 'exec_explain')!;
    assert.deepEqual(Object.keys(explain.selected_text as object).sort(), ['filepath', 'range', 'text']);
    assert.match((explain.visible_text as { text: string }).text, /def next_turn/);
    const chats = server.tasks.filter((t) => t.cmd === 'exec_chat');
    assert.deepEqual(
      chats.map((t) => t.state),
      ['done', 'cancelled', 'done'],
    );
    assert.match(row(report, 'service.oneTask').evidence.text, /answered the first \{error: "cancelled"\}.*the first turn ended cancelled/);
    // The IDE lookup the service asked during exec_explain was answered on the socket.
    assert.equal(server.ideReplies.length, 1);
    assert.ok(server.ideReplies[0]!.reply, 'the IDE call got a reply');
    assert.match(row(report, 'service.ide').evidence.text, /asked 1 IDE lookup \(find_def_locations\).*all were answered/);
    assert.ok(!fs.existsSync(path.join(root, 'check_service.py')), "the scratch workspace is not the caller's folder");
  });

  test('a wrong key: "refused the API key", exit 1, the other rows not run', { timeout: 30_000 }, async () => {
    const server = await serve({});
    const { code, stdout } = await check(['--protocol', 'agent-service', '--url', server.url], 'not-a-test-key');
    assert.equal(code, 1, stdout);
    assert.match(stdout, /^service\.connect\s+failed\s+The agent service refused the API key \(it closed the connection: 1008 invalid api key\)/m);
    assert.match(stdout, /^service\.chat\s+absent\s+Not run/m);
    assert.deepEqual(
      server.connectionLog.map((c) => c.state),
      ['rejected-key'],
    );
  });

  test('a key refused with HTTP 401 before the upgrade is named the same way', { timeout: 30_000 }, async () => {
    const server = await serve({ authFailure: 'http-401' });
    const { code, stdout } = await check(['--protocol', 'agent-service', '--url', server.url, '--format', 'json'], 'not-a-test-key');
    assert.equal(code, 1, stdout);
    const connect = row(JSON.parse(stdout) as CompatReport, 'service.connect');
    assert.equal(connect.status, 'failed');
    assert.match(connect.evidence.text, /^The agent service refused the API key \(.* refused the credentials \(HTTP 401\)\)/);
  });

  test('no key: a usage error that names AGENT_SERVICE_API_KEY, and no connection is made', async () => {
    const server = await serve({});
    const { code, stderr } = await check(['--protocol', 'agent-service', '--url', server.url], undefined);
    assert.equal(code, 2);
    assert.match(stderr, /set AGENT_SERVICE_API_KEY \(it is never a flag\)/);
    assert.equal(server.connectionLog.length, 0);
  });

  test('a config entry with protocol agent-service; a stream with a gap fails service.chat; no IDE lookup asked is absent', { timeout: 30_000 }, async () => {
    const server = await serve({ dropSeq: 1, chunks: 4 });
    const config = path.join(root, 'agents.json');
    fs.writeFileSync(config, JSON.stringify([{ name: 'Team agent', protocol: 'agent-service', url: server.url }]));
    const { code, stdout } = await check(['--config', config, '--agent', 'Team agent', '--format', 'json'], 'simpletest2025_check');
    assert.equal(code, 1, stdout);
    const report = JSON.parse(stdout) as CompatReport;
    assert.deepEqual(report.agent, { name: 'Team agent', title: `Team agent (${server.url})` });
    assert.equal(row(report, 'service.connect').status, 'verified');
    assert.deepEqual(row(report, 'service.chat'), {
      id: 'service.chat',
      status: 'failed',
      evidence: { text: 'exec_chat streamed 3 frames, but stream_seq_id 1 never came.', frames: row(report, 'service.chat').evidence.frames },
    });
    assert.equal(row(report, 'service.ide').status, 'absent');
  });

  test("usage: --url with --command, --scripted, a URL that is not ws://, a --cwd holding the check's file (kept as it was)", async () => {
    const mine = path.join(root, 'mine');
    fs.mkdirSync(mine, { recursive: true });
    fs.writeFileSync(path.join(mine, 'check_service.py'), 'keep = "me"\n');
    for (const [args, said] of [
      [['--protocol', 'agent-service', '--url', 'ws://127.0.0.1:9/ws', '--cwd', mine], /check_service\.py exists: the check writes a file of that name/],
      [['--protocol', 'agent-service', '--url', 'ws://127.0.0.1:9/ws', '--command', 'x'], /--url names the agent: give it without --command/],
      [['--protocol', 'agent-service', '--url', 'ws://127.0.0.1:9/ws', '--scripted'], /--scripted is for agents Atrium starts/],
      [['--protocol', 'agent-service', '--url', 'http://127.0.0.1:9/'], /needs --url ws:\/\/HOST:PORT/],
      [['--url', 'ws://127.0.0.1:9/acp'], /does not reach remote ACP agents yet/],
    ] as const) {
      const { code, stderr } = await check([...args], 'simpletest2025_check');
      assert.equal(code, 2, stderr);
      assert.match(stderr, said);
    }
    assert.equal(fs.readFileSync(path.join(mine, 'check_service.py'), 'utf8'), 'keep = "me"\n');
  });
});
