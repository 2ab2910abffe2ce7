/**
 * The MCP tool server at the level of its lines (no bridge, no socket): protocol version negotiation, the
 * JSON-RPC errors a client can provoke, tool results and failures, and cancellation. The official SDK client
 * drives it end to end in mcpBridge.test.ts.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { MCP_PROTOCOL_VERSIONS, serveMcpTools, type RunningMcpServer } from '../../src/mcp/mcpToolServer';
import type { HostToolProvider } from '../../src/session/hostTools';

type Message = { jsonrpc?: string; id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** Tools: `echo` answers its text, `broken` throws, `refuses` answers an error result, `slow` waits for its cancel. */
function fakeProvider(onSlowAbort: () => void): HostToolProvider {
  return {
    definitions: () => ['echo', 'broken', 'refuses', 'slow'].map((name) => ({ name, label: name, description: `the ${name} tool`, parameters: { type: 'object', properties: {} } })),
    call: async (name, args, signal) => {
      if (name === 'broken') throw new Error('the tool broke');
      if (name === 'refuses') return { content: [{ type: 'text', text: 'no' }], isError: true };
      if (name === 'slow') {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        onSlowAbort();
        throw new Error('aborted');
      }
      return { content: [{ type: 'text', text: String(args.text) }] };
    },
  };
}

function harness() {
  const input = new PassThrough();
  const output = new PassThrough();
  let aborted = 0;
  const server: RunningMcpServer = serveMcpTools(
    fakeProvider(() => aborted++),
    { info: { name: 'test-server', version: '1.2.3' }, input, output },
  );
  const received: Message[] = [];
  const waiting: ((m: Message) => void)[] = [];
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, nl)) as Message;
      buffer = buffer.slice(nl + 1);
      const wake = waiting.shift();
      if (wake) wake(message);
      else received.push(message);
    }
  });
  return {
    server,
    input,
    aborted: () => aborted,
    line: (text: string) => input.write(`${text}\n`),
    send: (message: object) => input.write(`${JSON.stringify(message)}\n`),
    next: () => new Promise<Message>((resolve) => (received.length ? resolve(received.shift()!) : waiting.push(resolve))),
    /** Whatever arrived and was not taken yet, after the event loop had a moment. */
    pending: async () => {
      await new Promise((r) => setTimeout(r, 50));
      return received.splice(0);
    },
  };
}

const clientInfo = { name: 'test-client', version: '1' };

describe('MCP tool server (lines in, lines out)', () => {
  it("answers initialize in the client's protocol version when it knows it, else in its newest", async () => {
    const { SUPPORTED_PROTOCOL_VERSIONS } = await import('@modelcontextprotocol/sdk/types.js');
    // Whatever we answer, the official client accepts.
    for (const v of MCP_PROTOCOL_VERSIONS) assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(v), `${v} is not a version the SDK knows`);
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo } });
    assert.deepEqual(await h.next(), {
      jsonrpc: '2.0',
      id: 1,
      result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'test-server', version: '1.2.3' } },
    });
    h.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo } });
    assert.equal((await h.next()).result?.protocolVersion, MCP_PROTOCOL_VERSIONS[0]);
    h.send({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { capabilities: {}, clientInfo } });
    const bad = await h.next();
    assert.equal(bad.id, 3);
    assert.equal(bad.error?.code, -32602);
    h.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    h.send({ jsonrpc: '2.0', method: 'notifications/something_else', params: { x: 1 } });
    h.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
    assert.deepEqual(await h.next(), { jsonrpc: '2.0', id: 4, result: {} }, 'notifications are not answered');
    h.input.end();
    await h.server.closed;
  });

  it('lists the tools as MCP tools, read-only, with their schemas', async () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    const { result } = await h.next();
    const tools = result?.tools as { name: string; title: string; inputSchema: { type: string }; annotations: unknown }[];
    assert.deepEqual(
      tools.map((t) => t.name),
      ['echo', 'broken', 'refuses', 'slow'],
    );
    assert.deepEqual(tools[0], { name: 'echo', title: 'echo', description: 'the echo tool', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } });
    h.input.end();
  });

  it("answers malformed messages with the JSON-RPC error that fits, under the request's id when it has one", async () => {
    const h = harness();
    h.line('{not json');
    assert.deepEqual(await h.next(), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the line is not JSON' } });
    h.line('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    assert.equal((await h.next()).error?.code, -32600);
    h.send({ id: 5, method: 'ping' }); // no "jsonrpc"
    assert.deepEqual(pick(await h.next()), { id: 5, code: -32600 });
    h.send({ jsonrpc: '2.0', id: 1.5, method: 'ping' }); // not an integer id
    assert.deepEqual(pick(await h.next()), { id: undefined, code: -32600 });
    h.send({ jsonrpc: '2.0', id: 'a', method: 'resources/list' });
    assert.deepEqual(pick(await h.next()), { id: 'a', code: -32601 });
    h.send({ jsonrpc: '2.0', id: 6, method: 'toString' }); // not a method, whatever objects have
    assert.deepEqual(pick(await h.next()), { id: 6, code: -32601 });
    h.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: ['echo'] });
    assert.deepEqual(pick(await h.next()), { id: 7, code: -32602 });
    h.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 42 } });
    assert.deepEqual(pick(await h.next()), { id: 8, code: -32602 });
    h.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: 'text' } });
    assert.deepEqual(pick(await h.next()), { id: 9, code: -32602 });
    h.send({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'nope' } });
    assert.deepEqual(await h.next(), { jsonrpc: '2.0', id: 10, error: { code: -32602, message: 'Unknown tool: nope' } });
    h.send({ jsonrpc: '2.0', id: 11, result: {} }); // an answer to nothing we asked: dropped
    assert.deepEqual(await h.pending(), []);
    h.input.end();
  });

  it('answers tool results, and a tool that fails with a result marked isError', async () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
    assert.deepEqual((await h.next()).result, { content: [{ type: 'text', text: 'hi' }] });
    h.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'broken' } });
    assert.deepEqual((await h.next()).result, { content: [{ type: 'text', text: 'the tool broke' }], isError: true });
    h.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'refuses', arguments: {} } });
    assert.deepEqual((await h.next()).result, { content: [{ type: 'text', text: 'no' }], isError: true });
    h.input.end();
  });

  it('cancels a running call on notifications/cancelled and does not answer it; the end of input cancels the rest', async () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'slow' } });
    h.send({ jsonrpc: '2.0', id: 'slow-2', method: 'tools/call', params: { name: 'slow' } });
    h.send({ jsonrpc: '2.0', id: 'slow-2', method: 'ping' });
    assert.deepEqual(pick(await h.next()), { id: 'slow-2', code: -32600 }, 'an id in use is refused');
    h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'the user stopped' } });
    h.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    assert.deepEqual(await h.next(), { jsonrpc: '2.0', id: 2, result: {} });
    assert.equal(h.aborted(), 1);
    assert.deepEqual(await h.pending(), [], 'the cancelled call got no answer');
    h.input.end();
    await h.server.closed;
    await new Promise((r) => setImmediate(r));
    assert.equal(h.aborted(), 2, 'the call still running was cancelled when the input ended');
    assert.deepEqual(await h.pending(), []);
  });
});

function pick(m: Message): { id: unknown; code: number | undefined } {
  return { id: m.id, code: m.error?.code };
}
