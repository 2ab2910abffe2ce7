import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registerEnvSecrets, streamLogger } from '../../src/core/log';
import { maskFrame, TrafficLog, trafficLogger } from '../../src/session/traffic';

test('traffic: requests and their answers paired both ways, with durations, methods and sizes', () => {
  const t = new TrafficLog();
  t.frame('out', { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { prompt: [] } }, 1000);
  t.frame('in', { jsonrpc: '2.0', id: 0, method: 'session/request_permission', params: {} }, 1010);
  t.frame('in', { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'agent_message_chunk' } } }, 1020);
  t.frame('out', { jsonrpc: '2.0', id: 0, result: { outcome: { outcome: 'cancelled' } } }, 1050);
  t.frame('in', { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'boom' } }, 1400);
  // pi RPC: a command with an id, its response, an event.
  t.frame('out', { type: 'prompt', id: 'req-1', message: 'hi' }, 2000);
  t.frame('in', { type: 'response', command: 'prompt', id: 'req-1', success: true }, 2005);
  t.frame('in', { type: 'message_update' }, 2006);
  // The agent service: a task by request_id, its streamed reply (the request stays open until the last frame),
  // an IDE-service request of the service's and our answer.
  t.frame('out', { cmd: 'exec_chat', request_id: 77, msg: 'hi', stream: true }, 3000);
  t.frame('in', { request_id: 77, msg: 'Hel', stream_seq_id: 0, stream_finish: false }, 3010);
  t.frame('in', { cmd: 'get_document_symbols', request_id: 'ide-1', abspath: '/w/a.ts' }, 3015);
  t.frame('out', { request_id: 'ide-1', result: [] }, 3018);
  t.frame('in', { request_id: 77, msg: 'lo', stream_seq_id: 1, stream_finish: true }, 3030);
  t.frame('in', { request_id: 77, msg: 'late' }, 3040);
  const l = t.list();
  assert.deepEqual(
    l.map((e) => [e.dir, e.kind, e.id, e.method, e.durationMs]),
    [
      ['out', 'request', 1, 'session/prompt', undefined],
      ['in', 'request', 0, 'session/request_permission', undefined],
      ['in', 'notification', undefined, 'session/update', undefined],
      ['out', 'response', 0, 'session/request_permission', 40],
      ['in', 'error', 1, 'session/prompt', 400],
      ['out', 'request', 'req-1', 'prompt', undefined],
      ['in', 'response', 'req-1', 'prompt', 5],
      ['in', 'notification', undefined, 'message_update', undefined],
      ['out', 'request', 77, 'exec_chat', undefined],
      ['in', 'response', 77, 'exec_chat', 10],
      ['in', 'request', 'ide-1', 'get_document_symbols', undefined],
      ['out', 'response', 'ide-1', 'get_document_symbols', 3],
      ['in', 'response', 77, 'exec_chat', 30],
      ['in', 'response', 77, undefined, undefined],
    ],
  );
  assert.equal(l[0]!.size, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { prompt: [] } }).length);
});

test('traffic: the ring keeps the newest entries within its count and bytes, cheaply', () => {
  const t = new TrafficLog(100, 10_000);
  for (let i = 0; i < 50_000; i++) t.frame('in', { jsonrpc: '2.0', method: 'session/update', params: { i } });
  assert.equal(t.size.entries, 100);
  assert.match(t.list().at(-1)!.text, /"i":49999/);
  const big = new TrafficLog(100, 10_000);
  for (let i = 0; i < 10; i++) big.line('stderr', 'x'.repeat(3000));
  assert.ok(big.size.bytes <= 10_000 && big.size.entries === 3, `kept ${big.size.entries} entries, ${big.size.bytes} bytes`);
  const huge = new TrafficLog();
  huge.frame('in', { jsonrpc: '2.0', method: 'session/update', params: { text: 'y'.repeat(1_000_000) } });
  assert.ok(huge.list()[0]!.text.length <= 4001 && huge.list()[0]!.size > 1_000_000);
});

test('traffic: env values, secret-looking keys and registered env secrets never show, nor are copied', () => {
  const key = 'sk-traffic-FAKE-0123456789abcdef';
  const forget = registerEnvSecrets({ MY_SERVICE_CREDENTIAL: 'short-but-named-x', OTHER: key, PATHY: '/usr/local/bin' });
  try {
    const t = new TrafficLog();
    const seen: string[] = [];
    t.onEntry((e) => seen.push(e.text));
    t.frame('out', { jsonrpc: '2.0', id: 2, method: 'session/new', params: { mcpServers: [{ name: 'ide', command: 'node', env: [{ name: 'AGENT_HOST_IDE_TOKEN', value: 'tok-123456789' }] }] } });
    t.frame('out', { jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { prompt: [{ type: 'text', text: `the key is ${key}; named short-but-named-x` }] } });
    t.frame('out', { jsonrpc: '2.0', id: 4, method: 'authenticate', params: { headers: { Authorization: 'Bearer abc.def.ghi' }, apiKey: 'plain' } });
    const shown =
      t
        .list()
        .map((e) => e.text)
        .join('\n') +
      seen.join('\n') +
      t.jsonLines();
    for (const secret of [key, 'tok-123456789', 'short-but-named-x', 'abc.def.ghi', '"plain"']) assert.ok(!shown.includes(secret), `${secret} shown`);
    assert.match(shown, /session\/prompt/);
    assert.match(shown, /\/usr\/local\/bin|the key is/);
  } finally {
    forget();
  }
  assert.deepEqual(maskFrame({ env: { A: '1' }, list: [{ token: 'x' }] }), { env: { A: '***' }, list: [{ token: '***' }] });
  // A frame with nothing to mask comes back as it is (not copied); one with a secret is a masked copy, the frame untouched.
  const frames: unknown[] = [
    { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'token key secret' } } } },
    { env: { A: '1' } },
    { env: [] },
    { env: [{ name: 'A', value: '1' }] },
    { list: [{ token: 'x' }] },
    { apiKey: 7, nested: { password: { inner: 'plain' } } },
    { authorization: 'Bearer x' },
    [1, 'two', { credentials: 'x' }],
    'a string',
    null,
  ];
  const secret = [false, true, false, true, true, false, true, true, false, false];
  for (const [i, f] of frames.entries()) {
    const before = JSON.stringify(f);
    const masked = maskFrame(f);
    assert.equal(masked !== f, secret[i], `${before}: copied only when it has something to mask`);
    assert.equal(JSON.stringify(masked) !== before, secret[i], `${before}: masked`);
    assert.equal(JSON.stringify(f), before, `${before}: the frame itself untouched`);
  }
});

test('traffic: the logger tap turns stderr lines into entries and dropped lines into a count', () => {
  const lines: string[] = [];
  const t = new TrafficLog();
  const log = trafficLogger(
    streamLogger((l) => lines.push(l), 'info'),
    t,
  );
  log.info('[agent stderr] warming up');
  log.error('Agent sent a malformed line: {oops (dropped; connection continues)');
  log.info('ordinary line');
  assert.equal(t.counters.linesDropped, 1);
  assert.deepEqual(
    t.list().map((e) => [e.dir, e.text.slice(0, 20)]),
    [
      ['stderr', 'warming up'],
      ['note', 'Agent sent a malform'],
    ],
  );
  assert.equal(lines.length, 3, 'everything is still logged');
});

test('traffic: a frame read with its line keeps the line as read, unless something in it could be masked', () => {
  const t = new TrafficLog();
  const line = '{"jsonrpc": "2.0", "method": "session/update",  "params": {"update": {"sessionUpdate": "agent_message_chunk"}}}';
  t.frame('in', JSON.parse(line), 1000, line);
  const secretLine = '{"jsonrpc":"2.0","method":"session/update","params":{"meta":{"apiKey":"sk-raw-123"}}}';
  t.frame('in', JSON.parse(secretLine), 1001, secretLine);
  const envLine = '{"jsonrpc":"2.0","id":5,"method":"terminal/create","params":{"command":"ls","env":[{"name":"A","value":"v-raw-9"}]}}';
  t.frame('in', JSON.parse(envLine), 1002, envLine);
  const [plain, secret, env] = t.list();
  assert.equal(plain?.text, line, 'the line as the agent wrote it (its spacing kept)');
  assert.equal(plain?.method, 'session/update');
  assert.ok(!secret?.text.includes('sk-raw-123') && secret?.text.includes('"apiKey":"***"'), secret?.text);
  assert.ok(!env?.text.includes('v-raw-9'), env?.text);
  assert.equal(env?.kind, 'request');
});
