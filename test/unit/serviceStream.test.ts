/**
 * How an agent service's streamed answer reaches the session model (src/agentService/serviceSession.ts), against
 * the test server: the frames of one read become one chunk (one event, as ACP's coalesced chunks), the text stays
 * exact and live (a piece shows before the next frame is sent), and every piece of a task precedes the end of its turn
 * — also when a newer task cancels it.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { startAgentSession } from '../../src/adapters/factory';
import { silentLogger } from '../../src/core/log';
import type { AgentSession } from '../../src/session/agentSession';
import type { SessionEvent } from '../../src/session/sessionModel';
import { AgentServiceServer, type AgentServiceServerOptions } from '../support/agentServiceServer';

const servers: AgentServiceServer[] = [];
const sessions: AgentSession[] = [];
after(async () => {
  await Promise.all(sessions.map((s) => s.shutdown().catch(() => undefined)));
  await Promise.all(servers.map((s) => s.close()));
});

async function open(options: AgentServiceServerOptions): Promise<{ server: AgentServiceServer; session: AgentSession; events: SessionEvent[] }> {
  const server = await AgentServiceServer.start(options);
  servers.push(server);
  const session = await startAgentSession(
    { name: 'service', command: server.url, url: server.url, protocol: 'agent-service' },
    { logger: silentLogger, cwd: process.cwd(), decidePermission: async () => ({ outcome: 'cancelled', by: 'policy' }), apiKey: 'simpletest2025_stream' },
  );
  sessions.push(session);
  const events: SessionEvent[] = [];
  session.model.on((e) => events.push(e));
  return { server, session, events };
}

const piece = (i: number) => `${String(i).padStart(4, '0')}:piece `;
const agentText = (session: AgentSession) =>
  session.model
    .messages('agent')
    .map((m) => m.text)
    .join('');
/** The agent message's events: its creation and each append. */
const agentEvents = (events: SessionEvent[]) => events.filter((e) => (e.type === 'entity' && e.entity.kind === 'message' && e.entity.role === 'agent') || (e.type === 'append' && e.role === 'agent'));

describe('agent service: a streamed answer in the session model', () => {
  test('2,000 frames sent back to back: the text exact, in far fewer chunks than frames, all before the turn ends', async () => {
    const text = Array.from({ length: 2000 }, (_, i) => piece(i)).join('');
    const { server, session, events } = await open({ chunks: 2000, answers: { exec_chat: text } });
    assert.deepEqual(await session.prompt([{ type: 'text', text: 'go' }]), { stopReason: 'end_turn' });
    assert.equal(agentText(session), text);
    assert.equal(server.sent.filter((f) => f.frame.msg !== undefined).length, 2000);
    const chunks = agentEvents(events);
    assert.ok(chunks.length < 100, `${chunks.length} events for 2,000 frames`);
    const ended = events.findIndex((e) => e.type === 'turn' && e.state === 'idle');
    assert.ok(events.indexOf(chunks.at(-1)!) < ended, 'the last piece came before the turn ended');
  });

  test('frames that come apart still show one by one, as they come', async () => {
    const { server, session, events } = await open({ chunks: 5, frameDelayMs: 150, answers: { exec_chat: 'one two three four five' } });
    const turn = session.prompt([{ type: 'text', text: 'go' }]);
    await server.waitUntil(() => server.sent.some((f) => f.frame.stream_seq_id === 0), 'the first frame');
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(agentText(session).length > 0, 'the first piece shows before the second frame is sent');
    assert.notEqual(server.tasks[0]!.state, 'done');
    await turn;
    assert.equal(agentText(session), 'one two three four five');
    assert.equal(agentEvents(events).length, 5);
  });

  test('a newer task cancels the first: every piece of the first precedes its cancelled turn', async () => {
    const text = Array.from({ length: 400 }, (_, i) => piece(i)).join('');
    const { server, session, events } = await open({ chunks: 400, frameDelayMs: 1, answers: { exec_chat: (req) => (req.msg === 'first' ? text : 'second answer') } });
    const first = session.prompt([{ type: 'text', text: 'first' }]);
    await server.waitUntil(() => server.sent.filter((f) => f.frame.msg !== undefined).length >= 20, '20 frames of the first');
    const second = session.prompt([{ type: 'text', text: 'second' }]);
    assert.deepEqual(await first, { stopReason: 'cancelled' });
    assert.deepEqual(await second, { stopReason: 'end_turn' });
    const firstMessage = session.model.messages('agent')[0]!;
    assert.ok(text.startsWith(firstMessage.text) && firstMessage.text.length >= 10 * piece(0).length, `the first's pieces, in order (${firstMessage.text.length} characters)`);
    const cancelled = events.findIndex((e) => e.type === 'turn' && e.state === 'idle' && e.stopReason === 'superseded');
    const ofFirst = events.filter((e) => (e.type === 'append' && e.id === firstMessage.id) || (e.type === 'entity' && e.entity.id === firstMessage.id));
    const lastOfFirst = events.indexOf(ofFirst.at(-1)!);
    assert.ok(lastOfFirst < cancelled, 'no piece of the first task after its turn ended');
    assert.equal(session.model.messages('agent').at(-1)!.text, 'second answer');
  });
});
