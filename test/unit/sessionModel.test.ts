import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyAcpUpdate } from '../../src/acp/applyUpdate';
import type { SessionUpdate } from '../../src/acp/types';
import { SessionModel, type SessionEvent } from '../../src/session/sessionModel';
import { questionNotice, questionRecord } from '../../src/session/questionRecord';

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
});

describe('questionRecord: what an agent asked and what the person answered', () => {
  it('ask_user, elicitation (accepted, declined), and other methods', () => {
    assert.deepEqual(questionRecord('_agentao.cn/ask_user', { question: ' Which file? ' }, { outcome: 'answered', text: 'b.txt' }), { question: 'Which file?', answer: 'b.txt' });
    assert.deepEqual(questionRecord('_agentao.cn/ask_user', { question: 'Which file?' }, { outcome: 'cancelled' }), { question: 'Which file?', answer: undefined });
    assert.deepEqual(questionRecord('elicitation/create', { message: 'Your name?' }, { action: 'accept', content: { name: 'Ada', ok: true } }), {
      question: 'Your name?',
      answer: 'name: Ada, ok: yes',
    });
    assert.deepEqual(questionRecord('elicitation/create', { message: 'Your name?' }, { action: 'decline' }), { question: 'Your name?', answer: undefined });
    assert.equal(questionRecord('_x/other', {}, {}), undefined);
    assert.deepEqual(questionNotice('qwen', { question: 'Q?', answer: undefined }), { title: 'qwen asked: Q?', detail: 'No answer (cancelled)' });
  });
});
