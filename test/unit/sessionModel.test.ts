import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyAcpUpdate } from '../../src/acp/applyUpdate';
import type { SessionUpdate } from '../../src/acp/types';
import { SessionModel, type SessionEvent } from '../../src/session/sessionModel';
import { english } from '../../src/session/notices';
import { askUserRecord, elicitRecord, questionNotice } from '../../src/session/questionRecord';

const apply = (m: SessionModel, u: object) => applyAcpUpdate(m, u as SessionUpdate);
const text = (t: string) => ({ type: 'text', text: t });

describe('SessionModel fed by ACP updates', () => {
  it('groups chunks by messageId and keeps thought and answer apart', () => {
    const m = new SessionModel('s');
    apply(m, { sessionUpdate: 'agent_thought_chunk', messageId: 't', content: text('hmm ') });
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('Hel') });
    apply(m, { sessionUpdate: 'agent_thought_chunk', messageId: 't', content: text('ok') });
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('lo') });
    assert.deepEqual(
      m.messages().map((x) => [x.role, x.text]),
      [
        ['thought', 'hmm ok'],
        ['agent', 'Hello'],
      ],
    );
  });

  it('merges id-less chunks until another entity intervenes', () => {
    const m = new SessionModel('s');
    apply(m, { sessionUpdate: 'agent_message_chunk', content: text('a') });
    apply(m, { sessionUpdate: 'agent_message_chunk', content: text('b') });
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'c', title: 'Read', kind: 'read', status: 'pending' });
    apply(m, { sessionUpdate: 'agent_message_chunk', content: text('c') });
    assert.deepEqual(
      m.timeline().map((e) => (e.kind === 'message' ? e.text : e.id)),
      ['ab', 'c', 'c'],
    );
  });

  it('merges partial tool call updates field by field', () => {
    const m = new SessionModel('s');
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'c', title: 'Edit a.ts', kind: 'edit', status: 'pending', rawInput: { path: 'a.ts' } });
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'in_progress' });
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'completed', content: [{ type: 'diff', path: 'a.ts', oldText: 'x', newText: 'y' }] });
    const tc = m.toolCall('c')!;
    assert.equal(tc.title, 'Edit a.ts');
    assert.equal(tc.toolKind, 'edit');
    assert.equal(tc.status, 'completed');
    assert.deepEqual(tc.rawInput, { path: 'a.ts' });
    assert.equal(tc.content.length, 1);
    assert.equal(m.timeline().length, 1);
  });

  it('replaces the plan whole and tracks modes, usage, info and commands', () => {
    const m = new SessionModel('s');
    const events: SessionEvent['type'][] = [];
    m.on((e) => events.push(e.type));
    apply(m, {
      sessionUpdate: 'plan',
      entries: [
        { content: 'a', priority: 'high', status: 'pending' },
        { content: 'b', priority: 'low', status: 'pending' },
      ],
    });
    apply(m, { sessionUpdate: 'plan', entries: [{ content: 'a', priority: 'high', status: 'completed' }] });
    m.setModes({
      currentModeId: 'ask',
      availableModes: [
        { id: 'ask', name: 'Ask' },
        { id: 'code', name: 'Code' },
      ],
    });
    apply(m, { sessionUpdate: 'current_mode_update', currentModeId: 'code' });
    apply(m, { sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount: 0.01, currency: 'USD' } });
    apply(m, { sessionUpdate: 'session_info_update', title: 'Fix the bug' });
    apply(m, { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'init', description: 'Init' }] });
    apply(m, { sessionUpdate: 'some_future_update', x: 1 });
    assert.deepEqual(
      m.plan.map((p) => p.status),
      ['completed'],
    );
    assert.equal(m.modes?.currentModeId, 'code');
    assert.equal(m.modes?.availableModes.length, 2);
    assert.equal(m.usage?.used, 10);
    assert.equal(m.info.title, 'Fix the bug');
    assert.equal(m.commands[0]?.name, 'init');
    assert.deepEqual(events, ['plan', 'plan', 'modes', 'modes', 'usage', 'info', 'commands']);
  });

  it('moves the turn through running, awaiting_permission, cancelling and idle', () => {
    const m = new SessionModel('s');
    const states: string[] = [];
    m.on((e) => e.type === 'turn' && states.push(e.state));
    m.beginTurn();
    const opts = [{ optionId: 'y', name: 'Yes', kind: 'allow_once' }];
    m.upsertPermission({ id: 'p', toolCallId: 'c', title: 't', options: opts, state: 'pending' });
    m.upsertPermission({ id: 'p', toolCallId: 'c', title: 't', options: opts, state: 'answered', answer: 'y' });
    m.upsertPermission({ id: 'p2', toolCallId: 'c', title: 't', options: opts, state: 'pending' });
    m.requestCancel();
    m.endTurn('cancelled');
    assert.deepEqual(states, ['running', 'awaiting_permission', 'running', 'awaiting_permission', 'cancelling', 'idle']);
    assert.equal((m.get('permission', 'p2') as { state: string }).state, 'cancelled');
    assert.equal(m.lastStopReason, 'cancelled');
  });

  it('Stop: the calls it cut end cancelled (even called completed after it), a finished one stays done, and a Stopped line follows', () => {
    const m = new SessionModel('s');
    m.beginTurn();
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'done', title: 'ls', kind: 'execute', status: 'completed' });
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'sleep', title: 'sleep 60', kind: 'execute', status: 'in_progress' });
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'queued', title: 'cat', kind: 'read', status: 'pending' });
    m.requestCancel();
    // opencode, after session/cancel: the aborted command reported `completed`, then the turn ends `cancelled`.
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'sleep', status: 'completed', content: [{ type: 'content', content: text('User aborted the command') }] });
    m.endTurn('cancelled');
    const status = (id: string) => m.toolCall(id)?.status;
    assert.deepEqual([status('done'), status('sleep'), status('queued')], ['completed', 'cancelled', 'cancelled']);
    assert.equal(m.toolCall('sleep')?.content.length, 1, 'what the agent said of it is kept');
    const last = m.timeline().at(-1);
    assert.deepEqual(last?.kind === 'notice' && [last.title, last.code], ['Stopped', 'stopped']);
    // A late update does not bring the green "done" back.
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'sleep', status: 'completed' });
    assert.equal(status('sleep'), 'cancelled');
  });

  it('a turn that finishes on its own after a cancel was asked keeps its calls as the agent ended them, and says nothing of a stop', () => {
    const m = new SessionModel('s');
    m.beginTurn();
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'c', title: 'make', kind: 'execute', status: 'in_progress' });
    m.requestCancel();
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'completed' });
    m.endTurn('end_turn');
    assert.equal(m.toolCall('c')?.status, 'completed');
    assert.equal(m.timeline().filter((e) => e.kind === 'notice').length, 0);
  });
});

describe('questionRecord: what an agent asked and what the person answered', () => {
  it('askUser, elicit (accepted, declined, a link)', () => {
    const ask = { question: ' Which file? ', options: [], multiple: false, allowCustom: false };
    assert.deepEqual(askUserRecord(ask, { outcome: 'answered', text: 'b.txt' }), { question: 'Which file?', answer: 'b.txt' });
    assert.deepEqual(askUserRecord({ ...ask, question: 'Which file?' }, { outcome: 'cancelled' }), { question: 'Which file?', answer: undefined });
    assert.deepEqual(askUserRecord({ ...ask, question: ' ', header: 'Pick' }, { outcome: 'cancelled' }), { question: 'Pick', answer: undefined });
    assert.deepEqual(elicitRecord({ message: 'Your name?' }, { action: 'accept', content: { name: 'Ada', ok: true } }), {
      question: 'Your name?',
      answer: 'name: Ada, ok: yes',
    });
    assert.deepEqual(elicitRecord({ message: 'Your name?' }, { action: 'decline' }), { question: 'Your name?', answer: undefined });
    assert.deepEqual(elicitRecord({ message: '', url: 'https://example.com/' }, { action: 'accept' }), { question: 'https://example.com/', answer: 'accepted' });
    const said = questionNotice('qwen', { question: 'Q?', answer: undefined });
    assert.deepEqual({ title: english(said.title), detail: english(said.detail) }, { title: 'qwen asked: Q?', detail: 'No answer (cancelled)' });
  });
});
