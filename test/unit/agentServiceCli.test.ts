/**
 * The headless CLI (dist/cli.js) against the agent service's test server: a prompt is an exec_chat that streams
 * whole and in order, `agent-host task explain|docstring|optimize|fix|tests` sends the exec_* requests and prints
 * the answer or a unified diff, a refused key exits 3, a connection dropped mid-task exits 4 (not sent again),
 * and the key is never taken from a flag.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { AgentServiceServer, type AgentServiceServerOptions } from '../support/agentServiceServer';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';

const fixturesDir = path.join(repoRoot, 'test', 'fixtures');

const KEY = 'simpletest2025_cli';
let work: string;

before(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'agent-service-cli-'));
  cpSync(path.join(fixturesDir, 'selection'), work, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: work });
});
after(() => rmSync(work, { recursive: true, force: true }));

/** Our environment with AGENT_SERVICE_API_KEY set to `key`, or without it (null). */
const env = (key: string | null = KEY) => {
  const e = { ...process.env };
  delete e.AGENT_SERVICE_API_KEY;
  return key === null ? e : { ...e, AGENT_SERVICE_API_KEY: key };
};

async function withServer(opts: AgentServiceServerOptions, body: (server: AgentServiceServer) => Promise<void>): Promise<void> {
  const server = await AgentServiceServer.start(opts);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

const frames = (server: AgentServiceServer, cmd: string) => server.received.map((r) => r.frame as Record<string, unknown>).filter((f) => f?.cmd === cmd);

test('a prompt is an exec_chat task: the answer streams whole and in order, though its frames came shuffled', async () => {
  await withServer({ chunks: 40, shuffle: true }, async (server) => {
    const run = await runCli(['--protocol', 'agent-service', '--url', server.url, '--format', 'json', 'Tell me about next_turn'], work, env());
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const chat = frames(server, 'exec_chat')[0]!;
    assert.equal(chat.msg, 'Tell me about next_turn');
    assert.equal(chat.stream, true);
    const sent = server.sent.filter((s) => s.frame.request_id === chat.request_id).map((s) => s.frame);
    const whole = [...sent]
      .sort((a, b) => Number(a.stream_seq_id) - Number(b.stream_seq_id))
      .map((f) => f.msg)
      .join('');
    const printed = events.filter((e) => e.type === 'append' || (e.type === 'entity' && (e.entity as { role?: string }).role === 'agent'));
    const text = printed.map((e) => (e.type === 'append' ? e.text : (e.entity as { text: string }).text)).join('');
    assert.equal(text, whole);
    assert.deepEqual(events.at(-1), { type: 'result', outcome: 'end_turn', exitCode: 0 });
  });
});

test('agent-host task explain, docstring, optimize, fix and tests run as exec_* tasks and print the answer or a diff that applies', async () => {
  await withServer({ chunks: 3 }, async (server) => {
    const file = 'shop/pricing.py';
    const explain = await runCli(['task', 'explain', '--protocol', 'agent-service', '--url', server.url, '--file', file, '--range', '6:1-10:17'], work, env());
    assert.equal(explain.code, 0, explain.stderr);
    const sent = frames(server, 'exec_explain')[0]!;
    const selected = sent.selected_text as { filepath: string; range: unknown; text: string };
    assert.equal(selected.filepath, path.join(work, file));
    assert.deepEqual(selected.range, { start: { line: 5, character: 0 }, end: { line: 9, character: 16 } });
    assert.match(selected.text, /^def cart_total\(items\):/);
    assert.ok((sent.visible_text as { text: string }).text.includes(selected.text), 'the visible code holds the selection');
    assert.match(explain.stdout, /def cart_total\(items\):/, 'the answer printed');

    for (const task of ['docstring', 'optimize', 'fix'] as const) {
      const run = await runCli(['task', task, '--protocol', 'agent-service', '--url', server.url, '--file', file, '--range', '6-10', '--language', 'zh'], work, env());
      assert.equal(run.code, 0, `${task}: ${run.stderr}`);
      const frame = frames(server, `exec_${task}`)[0]!;
      assert.equal(frame.language, 'zh');
      assert.ok(frame.selected_text, `${task} sends selected_text`);
      assert.match(run.stdout, /^--- a\/shop\/pricing\.py\n\+\+\+ b\/shop\/pricing\.py\n/);
      execFileSync('git', ['apply', '--check', '-'], { cwd: work, input: run.stdout });
    }
    assert.equal(readFileSync(path.join(work, file), 'utf8'), readFileSync(path.join(fixturesDir, 'selection', file), 'utf8'), 'nothing written');

    const tests = await runCli(['task', 'tests', '--protocol', 'agent-service', '--url', server.url, '--file', file, '--range', '6:5-6:5'], work, env());
    assert.equal(tests.code, 0, tests.stderr);
    const recommend = frames(server, 'exec_unittest_recommend')[0]!;
    assert.equal(recommend.func_name, 'cart_total');
    const code = frames(server, 'exec_unittest_code')[0]!;
    assert.match(String(code.test_cases_str), /cart_total/);
    assert.match(tests.stdout, /^--- \/dev\/null\n\+\+\+ b\/tests\/test_pricing\.py\n/);
    execFileSync('git', ['apply', '--check', '-'], { cwd: work, input: tests.stdout });
  });
});

test('a refused key exits 3 and says so; no key names the variable; the key is never a flag', async () => {
  await withServer({ authFailure: 'close' }, async (server) => {
    const wrong = await runCli(['--protocol', 'agent-service', '--url', server.url, 'hi'], work, env('not-a-key'));
    assert.equal(wrong.code, 3);
    assert.match(wrong.stderr, /the agent service refused the API key/);
    const none = await runCli(['--protocol', 'agent-service', '--url', server.url, 'hi'], work, env(null));
    assert.equal(none.code, 3);
    assert.match(none.stderr, /AGENT_SERVICE_API_KEY/);
    const flag = await runCli(['--protocol', 'agent-service', '--url', server.url, '--api-key', KEY, 'hi'], work, env(null));
    assert.equal(flag.code, 2);
    assert.equal(frames(server, 'exec_chat').length, 0);
  });
});

test('a connection dropped mid-task exits 4, and the task is not sent again', async () => {
  await withServer({ chunks: 10, dropAfterFrames: 4, frameDelayMs: 5 }, async (server) => {
    const run = await runCli(['--protocol', 'agent-service', '--url', server.url, 'hello'], work, env());
    assert.equal(run.code, 4, run.stderr);
    assert.match(run.stderr, /dropped/);
    assert.equal(frames(server, 'exec_chat').length, 1);
    const task = await runCli(['task', 'explain', '--protocol', 'agent-service', '--url', server.url, '--file', 'shop/pricing.py', '--range', '6-10'], work, env());
    assert.equal(task.code, 4, task.stderr);
  });
});
