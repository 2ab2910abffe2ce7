/**
 * The agent service's test server (test/support/agentServiceServer.ts) driven by a raw `ws` client: what it
 * answers, in which frames and order, and how it turns clients away, as the adapter's tests will rely on.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { AgentServiceServer, type AgentServiceServerOptions, defaultIdeCalls, QUEUE_FULL } from '../support/agentServiceServer';
import { until } from '../support/wait';

type Frame = Record<string, unknown>;
const KEY = 'simpletest2025_unit';
const MODEL = 'local deepseek-r1:32b';
const servers: AgentServiceServer[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function serve(options: AgentServiceServerOptions = {}): Promise<AgentServiceServer> {
  const server = await AgentServiceServer.start(options);
  servers.push(server);
  return server;
}

/** A raw client: every frame it got, and how its socket ended. */
class Client {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.frames.push(JSON.parse(String(data)) as Frame));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
    });
  }

  /** Resolves once the upgrade is done (the server may close the socket right after). */
  static connect(url: string, headers: Record<string, string> = { 'X-Api-Key': KEY }, ca?: string): Promise<Client> {
    const ws = new WebSocket(url, { headers, ...(ca !== undefined && { ca }) });
    const client = new Client(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** The first frame (in arrival order) for which `match` holds. */
  next(match: (f: Frame) => boolean, what: string, timeoutMs = 3000): Promise<Frame> {
    return until(() => this.frames.find(match), { what: () => `${what}; got ${JSON.stringify(this.frames)}`, timeoutMs, intervalMs: 10 });
  }

  forId(id: unknown): Frame[] {
    return this.frames.filter((f) => f.request_id === id);
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    return until(() => this.closed, { what: 'the socket to close', timeoutMs: 3000, intervalMs: 10 });
  }
}

const context = (filepath: string, text: string, from: number, to: number) => ({
  filepath,
  range: { start: { line: from, character: 0 }, end: { line: to, character: 4 } },
  text,
});
const PY = 'def next_turn(self, board):\n    winner = board.check()\n    return winner\n';
const explain = (id: unknown, extra: Frame = {}): Frame => ({
  cmd: 'exec_explain',
  request_id: id,
  model: MODEL,
  selected_text: context('example\\game.py', PY, 33, 35),
  visible_text: context('example\\game.py', '', 20, 60),
  ...extra,
});
const done = (c: Client, id: unknown) =>
  c.next((f) => f.request_id === id && (f.stream_finish === true || (f.msg !== undefined && f.stream_seq_id === undefined) || f.error !== undefined), `the answer to ${String(id)}`);
const text = (frames: Frame[]) => frames.map((f) => f.msg).join('');

describe('agent service test server', () => {
  it('closes a socket with a wrong or missing key at once (1008 "invalid api key"), and can close plainly or refuse the upgrade with 401', async () => {
    const server = await serve();
    for (const headers of [{}, { 'X-Api-Key': 'wrong_key' }]) {
      const client = await Client.connect(server.url, headers);
      assert.deepEqual(await client.whenClosed(), { code: 1008, reason: 'invalid api key' });
    }
    const good = await Client.connect(server.url);
    await until(() => server.connections() === 1, { what: 'the good connection counted', timeoutMs: 2000 });
    assert.equal(good.closed, undefined);
    assert.deepEqual(
      server.connectionLog.map((c) => [c.apiKey, c.state]),
      [
        [undefined, 'rejected-key'],
        ['wrong_key', 'rejected-key'],
        [KEY, 'open'],
      ],
    );
    server.options.authFailure = 'plain-close';
    assert.equal((await (await Client.connect(server.url, {})).whenClosed()).code, 1005);
    server.options.authFailure = 'http-401';
    const refused = await Client.connect(server.url, {}).then(
      () => 'opened',
      (error: Error) => error.message,
    );
    assert.match(refused, /401/);
  });

  it('answers list_model at once and echoes a string request_id; bad requests get a plain-text error', async () => {
    const server = await serve();
    const c = await Client.connect(server.url);
    c.send({ cmd: 'list_model', request_id: 'abc' });
    assert.deepEqual(await c.next((f) => f.request_id === 'abc', 'models'), { request_id: 'abc', models: ['local deepseek-R1:32b', 'deepseek-R1:32b'] });
    c.send({ cmd: 'exec_nope', request_id: 2 });
    c.send(explain(3, { selected_text: undefined }));
    c.send(explain(4, { model: 'gpt-9' }));
    c.send(explain(5, { visible_text: { filepath: 'a.py', range: { start: { line: 1 } }, text: '' } }));
    c.ws.send('not json');
    assert.equal((await c.next((f) => f.request_id === 2, 'unknown cmd')).error, 'unknown cmd "exec_nope"');
    assert.equal((await c.next((f) => f.request_id === 3, 'missing field')).error, 'exec_explain: missing field "selected_text"');
    assert.match(String((await c.next((f) => f.request_id === 4, 'unknown model')).error), /unknown model "gpt-9"/);
    assert.match(String((await c.next((f) => f.request_id === 5, 'bad range')).error), /field "visible_text" must be an object \{filepath, range/);
    assert.deepEqual(await c.next((f) => f.request_id === null, 'invalid JSON'), { request_id: null, error: 'invalid JSON' });
    assert.equal(server.tasks.length, 0, 'no bad request became a task');
  });

  it('streams an explanation as deltas with stream_seq_id 0..n-1 and one stream_finish, derived from the request; one frame without stream', async () => {
    const server = await serve({ chunks: 4 });
    const c = await Client.connect(server.url);
    c.send(explain(7, { stream: true }));
    await done(c, 7);
    const frames = c.forId(7);
    assert.deepEqual(
      frames.map((f) => [f.stream_seq_id, f.stream_finish]),
      [
        [0, false],
        [1, false],
        [2, false],
        [3, true],
      ],
    );
    const answer = text(frames);
    for (const part of ['example\\game.py', '33:0-35:4', 'def next_turn(self, board):', 'visible 20:0-60:4']) assert.ok(answer.includes(part), `${part} in ${answer}`);
    c.send(explain(8));
    const single = await done(c, 8);
    assert.deepEqual(Object.keys(single).sort(), ['msg', 'request_id']);
    assert.equal(single.msg, answer);
    c.send(explain(9, { language: 'zh' }));
    assert.match(String((await done(c, 9)).msg), /代码解释.*example\\game\.py/);
    server.options.singleFrameStreamFields = true;
    server.options.honourStream = false;
    server.options.answers = { exec_explain: (req) => `custom for ${String(req.request_id)}` };
    c.send(explain(10, { stream: true }));
    assert.deepEqual(await done(c, 10), { request_id: 10, msg: 'custom for 10', stream_seq_id: 0, stream_finish: true });
    assert.equal(c.forId(10).length, 1);
    server.options.answers = {
      exec_explain: () => {
        throw new Error('model overloaded');
      },
    };
    c.send(explain(11));
    assert.deepEqual(await done(c, 11), { request_id: 11, error: 'model overloaded' });
  });

  it('shuffle swaps neighbouring frames (the finish frame before the last delta), dropSeq leaves a gap, dropAfterFrames terminates mid-answer', async () => {
    const server = await serve({ chunks: 4, shuffle: true });
    const c = await Client.connect(server.url);
    c.send(explain(1, { stream: true }));
    await until(() => c.forId(1).length === 4, { what: 'four frames', timeoutMs: 3000, intervalMs: 10 });
    assert.deepEqual(
      c.forId(1).map((f) => f.stream_seq_id),
      [1, 0, 3, 2],
    );
    c.send(explain(2));
    const sorted = c.forId(1).sort((a, b) => (a.stream_seq_id as number) - (b.stream_seq_id as number));
    assert.equal(text(sorted), (await done(c, 2)).msg, 'the shuffled deltas reassemble to the whole answer');
    server.options.shuffle = false;
    server.options.dropSeq = 2;
    c.send(explain(3, { stream: true }));
    await done(c, 3);
    assert.deepEqual(
      c.forId(3).map((f) => f.stream_seq_id),
      [0, 1, 3],
    );
    delete server.options.dropSeq;
    server.options.dropAfterFrames = 2;
    c.send(explain(4, { stream: true }));
    assert.equal((await c.whenClosed()).code, 1006);
    assert.equal(c.forId(4).length, 2);
    assert.equal(server.tasks.find((t) => t.requestId === 4)?.state, 'aborted');
  });

  it('works tasks FIFO and rejects one when the queue is full', async () => {
    const server = await serve({ workers: 1, taskMs: 150, maxQueue: 2 });
    const [a, b, c, d] = (await Promise.all([1, 2, 3, 4].map(() => Client.connect(server.url)))) as [Client, Client, Client, Client];
    a.send(explain('a'));
    await server.taskStarted('exec_explain');
    b.send(explain('b'));
    await until(() => server.tasks.length === 2, { what: 'b queued', timeoutMs: 2000, intervalMs: 10 });
    c.send(explain('c'));
    await until(() => server.tasks.length === 3, { what: 'c queued', timeoutMs: 2000, intervalMs: 10 });
    d.send(explain('d'));
    assert.deepEqual(await d.next((f) => f.request_id === 'd', 'the rejection'), { request_id: 'd', error: QUEUE_FULL });
    assert.equal(QUEUE_FULL, 'task queue is full, try again later');
    await done(c, 'c');
    assert.ok(a.forId('a')[0]?.msg && b.forId('b')[0]?.msg, 'a and b answered');
    const started = server.tasks.filter((t) => t.startedAt !== undefined).sort((x, y) => (x.startedAt as number) - (y.startedAt as number));
    assert.deepEqual(
      started.map((t) => t.requestId),
      ['a', 'b', 'c'],
    );
    for (const [i, t] of started.entries()) if (i > 0) assert.ok((t.startedAt as number) >= (started[i - 1]?.endedAt as number), `${String(t.requestId)} started once the one before ended`);
  });

  it('cancels a connection\'s running task when it sends a newer one: {error: "cancelled"} for the old, no more frames of it', async () => {
    const server = await serve({ chunks: 4, frameDelayMs: 100 });
    const c = await Client.connect(server.url);
    c.send(explain(1, { stream: true }));
    await c.next((f) => f.request_id === 1, 'a first delta');
    c.send({ cmd: 'exec_chat', request_id: 2, model: MODEL, msg: 'hello there' });
    const answer = await done(c, 2);
    assert.match(String(answer.msg), /You said: "hello there"/);
    const one = c.forId(1);
    assert.deepEqual(one.at(-1), { request_id: 1, error: 'cancelled' });
    assert.ok(one.length < 5, `no delta of 1 after its cancellation: ${JSON.stringify(one)}`);
    assert.ok(c.frames.indexOf(one.at(-1) as Frame) < c.frames.indexOf(answer), 'the cancellation comes before the new answer');
    assert.deepEqual(
      server.tasks.map((t) => t.state),
      ['cancelled', 'done'],
    );
    server.options.taskMs = 300;
    const busy = await Client.connect(server.url);
    busy.send(explain('busy'));
    await server.taskStarted(undefined, 3);
    c.send(explain(3));
    await until(() => server.tasks.length === 4, { what: '3 queued', timeoutMs: 2000, intervalMs: 10 });
    c.send(explain(4));
    assert.deepEqual(await c.next((f) => f.request_id === 3, 'the queued task cancelled'), { request_id: 3, error: 'cancelled' });
    await done(c, 4);
    assert.deepEqual(
      server.tasks.map((t) => [t.requestId, t.state, t.startedAt === undefined]),
      [
        [1, 'cancelled', false],
        [2, 'done', false],
        ['busy', 'done', false],
        [3, 'cancelled', true],
        [4, 'done', false],
      ],
    );
  });

  it('closes the 6th connection of a key ("too many connections"); another key, or a freed place, gets in', async () => {
    const server = await serve();
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => Client.connect(server.url)));
    const sixth = await Client.connect(server.url);
    assert.deepEqual(await sixth.whenClosed(), { code: 1008, reason: 'too many connections' });
    const other = await Client.connect(server.url, { 'X-Api-Key': 'simpletest2025_other' });
    five[0]?.ws.close();
    await until(() => server.connections() === 5, { what: 'the first to go', timeoutMs: 2000, intervalMs: 10 });
    const again = await Client.connect(server.url);
    await until(() => server.connections() === 6, { what: 'a new connection in the freed place', timeoutMs: 2000, intervalMs: 10 });
    assert.equal(other.closed, undefined);
    assert.equal(again.closed, undefined);
  });

  it('asks the plugin over the socket (get_document_symbols, find_type_def_locations) before answering, and says what came back; a silent plugin times out', async () => {
    const server = await serve({ ideCalls: defaultIdeCalls, ideTimeoutMs: 200 });
    const c = await Client.connect(server.url);
    const recommend = {
      cmd: 'exec_unittest_recommend',
      request_id: 11,
      model: MODEL,
      file_content: PY,
      filepath: '/w/example/game.py',
      func_name: 'next_turn',
      func_location: { start: { line: 33, character: 4 }, end: { line: 35, character: 4 } },
      func_symbols: [{ name: 'next_turn', kind: 'Function', range: { start: { line: 33, character: 4 }, end: { line: 35, character: 4 } }, children: [] }],
    };
    c.send(recommend);
    const symbols = await c.next((f) => f.cmd === 'get_document_symbols', 'the symbols call');
    assert.deepEqual(symbols, { cmd: 'get_document_symbols', request_id: 'ide-1', abspath: '/w/example/game.py' });
    c.send({ request_id: 'ide-1', result: [1, 2, 3, 4, 5].map((i) => ({ name: `s${i}` })) });
    const typeDef = await c.next((f) => f.cmd === 'find_type_def_locations', 'the type definition call');
    assert.deepEqual(typeDef, { cmd: 'find_type_def_locations', request_id: 'ide-2', abspath: '/w/example/game.py', line: 33, character: 4 });
    c.send({ request_id: 'ide-2', result: [{ uri: 'file:///w/board.py' }] });
    const answer = String((await done(c, 11)).msg);
    assert.match(answer, /IDE: 5 symbols, 1 type definition$/);
    const cases = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(answer)?.[1] ?? 'null') as { kind: string; title: string }[];
    assert.deepEqual(
      cases.map((x) => x.kind),
      ['happy', 'happy', 'happy', 'edge', 'edge', 'edge'],
    );
    assert.deepEqual(
      server.ideReplies.map((r) => [r.call.cmd, r.reply && 'result' in r.reply ? (r.reply.result as unknown[]).length : r.reply, r.timedOut]),
      [
        ['get_document_symbols', 5, false],
        ['find_type_def_locations', 1, false],
      ],
    );
    c.send({ ...recommend, request_id: 12 });
    c.send({ request_id: (await c.next((f) => f.request_id === 'ide-3', 'the third call')).request_id, error: 'no such file' });
    assert.match(String((await done(c, 12)).msg), /IDE: get_document_symbols failed: no such file, find_type_def_locations timed out after 200 ms$/);
    c.send({ cmd: 'exec_unittest_code', request_id: 13, test_cases_str: JSON.stringify(cases), function_name: 'next_turn', file_path: 'tests/test_game.py' });
    const code = String((await done(c, 13)).msg);
    assert.ok(code.startsWith('6 tests for `next_turn`:'), code);
    for (const x of cases) assert.ok(code.includes(x.title), `${x.title} in ${code}`);
  });

  it('writes a docstring into the signature (Python """, TS /** */) with the body as ...', async () => {
    const server = await serve();
    const c = await Client.connect(server.url);
    c.send({ cmd: 'exec_docstring', request_id: 1, model: MODEL, selected_text: context('game.py', PY, 33, 35) });
    const py = String((await done(c, 1)).msg);
    c.send({ cmd: 'exec_docstring', request_id: 2, model: MODEL, selected_text: context('src/turn.ts', 'export function nextTurn(board: Board) {\n  return board.check();\n}\n', 3, 5) });
    assert.match(py, /```python\ndef next_turn\(self, board\):\n {4}"""Next turn\.\n\n {4}From game\.py 33:0-35:4\.\n {4}"""\n {4}\.\.\.\n```/);
    const ts = String((await done(c, 2)).msg);
    assert.match(ts, /```typescript\n\/\*\*\n \* Next turn\.\n \*\n \* From src\/turn\.ts 3:0-5:4\.\n \*\/\nexport function nextTurn\(board: Board\) \{\n {2}\.\.\.\n\}\n```/);
  });

  it('serves wss with its self-signed certificate (trusted by its PEM only)', async () => {
    const server = await serve({ tls: true });
    assert.match(server.url, /^wss:\/\/127\.0\.0\.1:\d+\/ws$/);
    assert.match(server.certificate?.fingerprint256 ?? '', /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    await assert.rejects(Client.connect(server.url), /self[- ]signed/);
    const c = await Client.connect(server.url, { 'X-Api-Key': KEY }, server.certificate?.pem);
    c.send({ cmd: 'list_model', request_id: 1 });
    assert.ok(Array.isArray((await c.next((f) => f.request_id === 1, 'models')).models));
  });

  it('close() leaves nothing open: a process with a running task, a pending IDE call and a waiter exits by itself', async () => {
    const lib = path.join(__dirname, '..', 'support', 'agentServiceServer.js');
    const script = `
      const { AgentServiceServer, defaultIdeCalls } = require(${JSON.stringify(lib)});
      const { WebSocket } = require('ws');
      (async () => {
        const server = await AgentServiceServer.start({ tls: true, taskMs: 60000, ideCalls: defaultIdeCalls, ideTimeoutMs: 60000 });
        const ws = new WebSocket(server.url, { headers: { 'X-Api-Key': 'simpletest2025_x' }, ca: server.certificate.pem });
        ws.on('message', () => {});
        ws.on('error', () => {});
        await new Promise((r) => ws.once('open', r));
        ws.send(JSON.stringify(${JSON.stringify(explain(1))}));
        await server.waitUntil(() => server.ideReplies.length === 1, 'the IDE call');
        server.waitUntil(() => false, 'never', 60000).catch(() => {});
        await server.close();
        console.log('closed ' + server.connections() + ' ' + server.tasks.map((t) => t.state));
      })();`;
    const child = spawn(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..', '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    child.stderr.on('data', (d) => {
      out += String(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(timer);
    assert.equal(code, 0, `the process exits by itself (SIGKILL after 5 s gives null): ${out}`);
    assert.equal(out.trim(), 'closed 0 aborted', 'close() ends the task before it resolves');
  });
});
