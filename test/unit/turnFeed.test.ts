/**
 * One turn told as VS Code's Chat view tells a response (src/views/chatParticipant/turnFeed.ts): a real SessionModel
 * fed ACP updates, the parts the participant would stream. Only what the turn adds is told; the text arrives as
 * it streams, chunk by chunk, and a new message, a failed tool or a warning starts a paragraph of its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyAcpUpdate } from '../../src/acp/applyUpdate';
import type { SessionUpdate } from '../../src/acp/types';
import { SessionModel } from '../../src/session/sessionModel';
import { type FeedPart, planMarkdown, TurnFeed } from '../../src/views/chatParticipant/turnFeed';

const apply = (m: SessionModel, u: object) => applyAcpUpdate(m, u as SessionUpdate);
const text = (t: string) => ({ type: 'text', text: t });
const words = { thinking: 'Thinking…', waiting: (t: string) => `Waiting: ${t}`, failed: (t: string) => `${t} failed` };

function feedOf(m: SessionModel): { parts: FeedPart[]; feed: TurnFeed } {
  const parts: FeedPart[] = [];
  return { parts, feed: new TurnFeed(m, (p) => parts.push(p), words) };
}

describe('TurnFeed: a turn as the Chat view streams it', () => {
  it('streams the answer chunk by chunk, thoughts and tools as progress, a finished tool’s files as anchors', () => {
    const m = new SessionModel('s');
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'old', content: text('an earlier answer') });
    const { parts, feed } = feedOf(m);
    apply(m, { sessionUpdate: 'agent_thought_chunk', messageId: 't', content: text('let me see') });
    apply(m, { sessionUpdate: 'agent_thought_chunk', messageId: 't', content: text(' more') });
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('Hel') });
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('lo') });
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'c', title: 'Edit src/a.ts', kind: 'edit', status: 'pending', locations: [{ path: '/w/src/a.ts', line: 3 }] });
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'in_progress' });
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'completed' });
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'b', content: text('Done.') });
    apply(m, {
      sessionUpdate: 'plan',
      entries: [
        { content: 'edit a.ts', status: 'completed', priority: 'high' },
        { content: 'test', status: 'in_progress', priority: 'high' },
      ],
    });
    apply(m, { sessionUpdate: 'usage_update', used: 8000, size: 128000 });
    feed.dispose();
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'b', content: text(' (after the turn)') });
    assert.deepEqual(parts, [
      { kind: 'progress', text: 'Thinking…' },
      { kind: 'markdown', text: 'Hel' },
      { kind: 'markdown', text: 'lo' },
      { kind: 'progress', text: 'Edit src/a.ts' },
      { kind: 'anchor', path: '/w/src/a.ts', line: 3, title: 'Edit src/a.ts' },
      { kind: 'markdown', text: '\n\n' },
      { kind: 'markdown', text: 'Done.' },
    ]);
    assert.equal(planMarkdown(feed.plan ?? []), '- [x] edit a.ts\n- [ ] test …');
    assert.deepEqual(feed.usage && [feed.usage.used, feed.usage.size], [8000, 128000]);
  });

  it('says a failed tool, a waiting permission and a warning; not the turn’s own info notices', () => {
    const m = new SessionModel('s');
    const { parts, feed } = feedOf(m);
    apply(m, { sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('Trying.') });
    apply(m, { sessionUpdate: 'tool_call', toolCallId: 'x', title: 'Run\nnpm test', kind: 'execute', status: 'pending' });
    m.upsertPermission({ id: 'p', toolCallId: 'x', title: 'npm test', options: [], state: 'pending' });
    apply(m, { sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'failed' });
    m.notice('warning', 'The agent is slow', 'no output for 60 s');
    m.notice('info', 'Just so you know');
    feed.dispose();
    assert.deepEqual(parts, [
      { kind: 'markdown', text: 'Trying.' },
      { kind: 'progress', text: 'Run\nnpm test' },
      { kind: 'progress', text: 'Waiting: npm test' },
      { kind: 'markdown', text: '\n\n' },
      { kind: 'markdown', text: '> Run npm test failed\n\n' },
      { kind: 'markdown', text: '> **The agent is slow** no output for 60 s\n\n' },
    ]);
  });
});
