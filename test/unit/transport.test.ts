/**
 * Both protocol adapters over the in-memory transport (src/transport/memory.ts), no process: the ACP client
 * and an RPC session each run a whole turn against a scripted agent written here, then the agent's end closes
 * with a reason that fails what still waits. The stdio transport's faults are the fault matrix's
 * (faults.test.ts, rpcFaults.test.ts); what is the transport's own (line limit, stall, counters) is here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AcpClient } from '../../src/acp/acpClient';
import { AgentExitedError, processAlive } from '../../src/core/agentProcess';
import { streamLogger } from '../../src/core/log';
import type { FramingError } from '../../src/core/ndjson';
import { headlessRpcUi } from '../../src/rpc/extensionUi';
import { RpcConnection } from '../../src/rpc/rpcConnection';
import { RpcSession } from '../../src/rpc/rpcSession';
import { memoryTransportPair, type MemoryTransport } from '../../src/transport/memory';
import { StdioTransport, stdioProcess } from '../../src/transport/stdio';
import { repoRoot } from '../support/paths';

// biome-ignore lint/suspicious/noExplicitAny: the wire frames of both protocols, read deep in the scripted agents and the assertions
type Json = Record<string, any>;
const settle = () => new Promise((r) => setImmediate(r));

function capture() {
  const lines: string[] = [];
  return { lines, logger: streamLogger((l) => lines.push(l), 'debug') };
}

/** The agent's end of the stream: every message it received, requests handed to `serve`, answers to its own requests matched. */
function scriptedAgent(end: MemoryTransport, serve: (message: Json, agent: ScriptedAgent) => void | Promise<void>) {
  const received: Json[] = [];
  const malformed: FramingError[] = [];
  const waiting = new Map<unknown, (answer: Json) => void>();
  let next = 0;
  const agent = {
    received,
    malformed,
    send: (message: Json) => end.write(message),
    /** A request of the agent's; resolves with the client's answer. */
    request: (message: Json) =>
      new Promise<Json>((resolve) => {
        const id = `agent-${++next}`;
        waiting.set(id, resolve);
        void end.write({ ...message, id });
      }),
  };
  end.listen({
    message: (message: Json) => {
      received.push(message);
      const answer = waiting.get(message.id);
      if (answer && message.method === undefined && message.type === undefined) {
        waiting.delete(message.id);
        answer(message);
      } else void serve(message, agent);
    },
    malformed: (error) => malformed.push(error),
  });
  return agent;
}
type ScriptedAgent = ReturnType<typeof scriptedAgent>;

const chunk = (sessionId: string, text: string) => ({
  jsonrpc: '2.0',
  method: 'session/update',
  params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text } } },
});

/** A small ACP agent: initialize, session/new, and a prompt turn that streams, asks a permission and ends. */
function acpAgent(end: MemoryTransport) {
  return scriptedAgent(end, async (m, agent) => {
    const reply = (result: unknown) => agent.send({ jsonrpc: '2.0', id: m.id, result });
    switch (m.method) {
      case 'initialize':
        return reply({ protocolVersion: 1, agentCapabilities: { loadSession: false }, authMethods: [] });
      case 'session/new':
        return reply({ sessionId: 's1' });
      case 'session/prompt': {
        if (m.params.prompt[0]?.text === 'never') return; // answered only by the close
        for (const text of ['Hel', 'lo ', 'world.']) await agent.send(chunk('s1', text));
        const answer = await agent.request({
          jsonrpc: '2.0',
          method: 'session/request_permission',
          params: {
            sessionId: 's1',
            toolCall: { toolCallId: 't1', title: 'Write notes.md', kind: 'edit', status: 'pending' },
            options: [
              { optionId: 'allow-once', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject-once', name: 'Reject', kind: 'reject_once' },
            ],
          },
        });
        await agent.send(chunk('s1', ` Permission: ${answer.result?.outcome?.optionId}.`));
        return reply({ stopReason: 'end_turn' });
      }
      default:
        return agent.send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no ${m.method}` } });
    }
  });
}

describe('ACP client over the in-memory transport', () => {
  it('runs a whole turn: initialize, session/new, a prompt that streams and asks a permission, end_turn', async () => {
    const [clientEnd, agentEnd] = memoryTransportPair();
    const agent = acpAgent(agentEnd);
    const frames: string[] = [];
    const asked: Json[] = [];
    const client = new AcpClient(clientEnd, {
      logger: capture().logger,
      handlers: {
        requestPermission: async (params) => {
          asked.push(params);
          return { outcome: { outcome: 'selected', optionId: params.options[0]!.optionId } };
        },
      },
      frameTap: (dir, f) => frames.push(`${dir} ${(f as Json).method ?? `#${(f as Json).id}`}`),
    });
    const text: string[] = [];
    client.onSessionUpdate((n) => text.push((n.update as Json).content.text));

    assert.equal((await client.initialize({})).protocolVersion, 1);
    const { sessionId } = await client.newSession(repoRoot);
    assert.equal(sessionId, 's1');
    const result = await client.prompt(sessionId, [{ type: 'text', text: 'go' }]);
    assert.equal(result.stopReason, 'end_turn');
    await settle();

    assert.equal(text.join(''), 'Hello world. Permission: allow-once.');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.toolCall.title, 'Write notes.md');
    // The agent got the answer to its own request, under its id.
    const answer = agent.received.find((m) => m.id === 'agent-1');
    assert.deepEqual(answer?.result, { outcome: { outcome: 'selected', optionId: 'allow-once' } });
    assert.deepEqual(
      agent.received.map((m) => m.method ?? `#${m.id}`),
      ['initialize', 'session/new', 'session/prompt', '#agent-1'],
    );
    assert.deepEqual(
      frames.filter((f) => f.startsWith('out')),
      ['out initialize', 'out session/new', 'out session/prompt', 'out #agent-1'],
    );
    assert.equal(frames.filter((f) => f === 'in session/update').length, 4, 'the tap sees each chunk as sent');
    // Both ends count the same traffic.
    assert.deepEqual(
      { out: clientEnd.stats.bytesOut, in: clientEnd.stats.bytesIn, messagesOut: clientEnd.stats.messagesOut, messagesIn: clientEnd.stats.messagesIn },
      { out: agentEnd.stats.bytesIn, in: agentEnd.stats.bytesOut, messagesOut: 4, messagesIn: 8 },
    );
    assert.deepEqual(client.outstanding(), { requests: [], serving: 0 });
    await client.shutdown();
  });

  it('the agent end closing with a reason fails the turn that waits with it, and every later request at once', async () => {
    const [clientEnd, agentEnd] = memoryTransportPair();
    acpAgent(agentEnd);
    const { logger, lines } = capture();
    const client = new AcpClient(clientEnd, { logger, handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) } });
    await client.initialize({});
    const turn = client.prompt('s1', [{ type: 'text', text: 'never' }]);
    await settle();
    await agentEnd.close({ code: 3, signal: null, stderrTail: 'fatal: the model went away' });
    await assert.rejects(turn, (e: unknown) => e instanceof AgentExitedError && e.exit.code === 3 && /exited with code 3[\s\S]*the model went away/.test(e.message));
    assert.equal(client.exitInfo?.code, 3);
    await assert.rejects(client.newSession(repoRoot), AgentExitedError);
    assert.equal(clientEnd.writable, false);
    assert.ok(lines.some((l) => /\[error\] Agent exited with code 3/.test(l)));
    assert.deepEqual(client.outstanding(), { requests: [], serving: 0 });
  });

  it('a broken line is reported and dropped; one over the line limit that answered a request fails that request, not the stream', async () => {
    const [clientEnd, agentEnd] = memoryTransportPair({ maxLineBytes: 1024 });
    const agent = scriptedAgent(agentEnd, (m) => {
      if (m.method === 'initialize') agentEnd.writeRaw(`not json\n{"jsonrpc":"2.0","id":${m.id},"result":{"pad":"${'x'.repeat(4096)}"}}\n`);
      else void agentEnd.write({ jsonrpc: '2.0', id: m.id, result: { sessionId: 's2' } });
    });
    const { logger, lines } = capture();
    const client = new AcpClient(clientEnd, { logger, handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) } });
    await assert.rejects(client.initialize({}), /sent a message of 41\d\d bytes, over the 1024-byte line limit/);
    assert.equal((await client.newSession(repoRoot)).sessionId, 's2', 'the stream goes on after the dropped line');
    assert.ok(lines.some((l) => /\[error\] Malformed JSON from agent.*\(dropped; connection continues\)/.test(l)));
    assert.ok(lines.some((l) => /\[error\] Dropped a line of 41\d\d bytes: over the 1024-byte limit/.test(l)));
    assert.equal(clientEnd.stats.linesDropped, 2);
    assert.equal(agent.malformed.length, 0);
    await client.shutdown();
  });
});

describe('RPC session over the in-memory transport', () => {
  it('runs a whole turn: get_state, a prompt acknowledged, streamed deltas, a dialog answered, agent_end', async () => {
    const [clientEnd, agentEnd] = memoryTransportPair();
    const agent = scriptedAgent(agentEnd, async (m, a) => {
      const ok = (data?: unknown) => a.send({ type: 'response', id: m.id, command: m.type, success: true, ...(data !== undefined ? { data } : {}) });
      switch (m.type) {
        case 'get_state':
          return ok({ sessionId: 'scripted', isStreaming: false, isCompacting: false, steeringMode: 'one-at-a-time', followUpMode: 'one-at-a-time', messageCount: 0, pendingMessageCount: 0 });
        case 'get_available_models':
          return ok({ models: [] });
        case 'get_commands':
        case 'get_available_commands':
          return ok({ commands: [] });
        case 'silent':
          return; // never answered
        case 'extension_ui_response':
          return; // matched by the dialog below
        case 'prompt': {
          await ok();
          await a.send({ type: 'agent_start' });
          for (const delta of ['Hel', 'lo ']) await a.send({ type: 'message_update', message: { role: 'assistant' }, assistantMessageEvent: { type: 'text_delta', delta } });
          await a.send({ type: 'extension_ui_request', id: 'ui-1', method: 'confirm', title: 'Run make?', message: 'make all' });
          const answer = await new Promise<Json>((resolve) => {
            const poll = () => {
              const got = agent.received.find((f) => f.type === 'extension_ui_response' && f.id === 'ui-1');
              if (got) resolve(got);
              else setTimeout(poll, 5);
            };
            poll();
          });
          const text = `world (confirmed: ${answer.confirmed})`;
          await a.send({ type: 'message_update', message: { role: 'assistant' }, assistantMessageEvent: { type: 'text_delta', delta: text } });
          return a.send({ type: 'agent_end', messages: [{ role: 'assistant', content: [{ type: 'text', text: `Hello ${text}` }], stopReason: 'stop' }] });
        }
        default:
          return a.send({ type: 'response', command: m.type, success: false, error: `Unknown command: ${m.type}` });
      }
    });
    const { logger } = capture();
    const ui = headlessRpcUi({ policy: 'approve-all' });
    const frames: string[] = [];
    const connection = new RpcConnection(clientEnd, { logger, commandTimeoutMs: 5000, frameTap: (dir, f) => frames.push(`${dir} ${(f as Json).type}`) });
    const session = await RpcSession.open(connection, { name: 'scripted', command: 'none', protocol: 'rpc' }, { logger, cwd: repoRoot, rpcUi: ui });
    const result = await session.prompt([{ type: 'text', text: 'go' }]);
    assert.equal(result.stopReason, 'end_turn');
    assert.equal(
      session.model
        .messages('agent')
        .map((m) => m.text)
        .join(''),
      'Hello world (confirmed: true)',
    );
    assert.deepEqual(
      ui.events.map((e) => [e.method, e.answer]),
      [['confirm', true]],
    );
    assert.equal(agent.received.find((f) => f.type === 'prompt')?.message, 'go');
    assert.ok(frames.includes('in agent_end') && frames.includes('out extension_ui_response'), frames.join(', '));
    assert.equal(session.model.turn, 'idle');
    await settle();
    assert.equal(clientEnd.stats.bytesOut, agentEnd.stats.bytesIn);
    assert.deepEqual(connection.pendingCommands(), []);

    // The agent's end goes away mid-command: the command fails with the reason, no process needed.
    const waiting = connection.send({ type: 'silent' }, { timeoutMs: 0 });
    await agentEnd.close({ code: null, signal: 'SIGKILL', stderrTail: '' });
    await assert.rejects(waiting, (e: unknown) => e instanceof AgentExitedError && /killed by SIGKILL/.test(e.message));
    await session.shutdown();
  });
});

describe('in-memory transport', () => {
  it('reports a write its peer does not take within the stall time, and refuses writes past the backlog', async () => {
    const [end] = memoryTransportPair({ writeStallMs: 50, maxBacklogBytes: 64 * 1024 }); // the peer never listens
    const stalled = new Promise<number>((resolve) => end.onStall((bytes) => resolve(bytes)));
    const first = end.write({ pad: 'a'.repeat(40 * 1024) });
    void end.write({ pad: 'b'.repeat(20 * 1024) }).catch(() => undefined);
    await assert.rejects(end.write({ pad: 'c'.repeat(10 * 1024) }), /not reading its input: \d+ bytes already wait for it \(at most 65536\)/);
    assert.ok((await stalled) > 60 * 1024);
    await end.close();
    assert.equal(end.writable, false);
    await assert.rejects(first, /closed/, 'a write the peer never took fails at the close instead of waiting');
    await assert.rejects(end.write({ after: 'close' }), /closed/);
  });
});

/** Echoes each line it reads as `{"echo": …}`, says its pid on stderr, exits 5 when its input ends. */
const ECHO = `process.stderr.write('echo pid ' + process.pid + '\\n');
let b = '';
process.stdin.on('data', (d) => { b += d; let i; while ((i = b.indexOf('\\n')) >= 0) { const l = b.slice(0, i); b = b.slice(i + 1); process.stdout.write(JSON.stringify({ echo: JSON.parse(l) }) + '\\n'); } });
process.stdin.on('end', () => process.exit(5));`;

describe('stdio transport', () => {
  it("carries messages through a real process's pipes, counts both ways, and closes with the process's exit", async () => {
    const { logger } = capture();
    const transport = StdioTransport.spawn({ command: process.execPath, args: ['-e', ECHO], cwd: repoRoot }, logger);
    const got: Json[] = [];
    transport.listen({ message: (m) => got.push(m), malformed: (e) => assert.fail(e.message) });
    await transport.write({ n: 1 });
    await transport.write({ n: 2, text: 'héllo' });
    while (got.length < 2) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(got, [{ echo: { n: 1 } }, { echo: { n: 2, text: 'héllo' } }]);
    const sent = Buffer.byteLength('{"n":1}\n{"n":2,"text":"héllo"}\n');
    assert.deepEqual(transport.stats, { bytesIn: sent + 2 * Buffer.byteLength('{"echo":}'), bytesOut: sent, messagesIn: 2, messagesOut: 2, linesDropped: 0 });
    const pid = stdioProcess(transport).pid!;
    const exit = await transport.close();
    assert.equal(exit.code, 5, 'stdin closed first: the agent exits on its own');
    assert.equal(await transport.closed, exit);
    assert.equal(transport.writable, false);
    assert.equal(processAlive(pid), false);
    assert.throws(() => stdioProcess(memoryTransportPair()[0]), /not reached through the stdio of a process/);
  });
});
