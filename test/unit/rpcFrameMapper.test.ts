/**
 * The pure frame → model mapper (src/rpc/frameMapper.ts) on frames recorded from real agents
 * (test/fixtures/rpc-frames/, written by test/rpc/recordFrames.ts): pi 0.73.1 and omp 18.2.3 each
 * writing a file through a tool call, replayed into a fresh SessionModel.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { RpcDialect } from '../../src/rpc/dialect';
import { FrameMapper, runOutcome, type FrameEffects } from '../../src/rpc/frameMapper';
import type { RpcFrame } from '../../src/rpc/rpcConnection';
import { SessionModel, type ToolCallEntity } from '../../src/session/sessionModel';
import { repoRoot } from '../support/paths';

const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'rpc-frames');

const RECORDED = [
  { agent: 'pi 0.73.1', file: 'pi-write-turn.ndjson', dialect: new RpcDialect('upstream', 'recorded') },
  { agent: 'omp 18.2.3', file: 'omp-write-turn.ndjson', dialect: new RpcDialect('fork', 'recorded') },
];

function recorded(file: string): RpcFrame[] {
  return fs
    .readFileSync(path.join(FIXTURES, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as RpcFrame);
}

/** Applies frames as the session does: renamed to our event names first. */
function replay(frames: RpcFrame[], dialect: RpcDialect): { model: SessionModel; mapper: FrameMapper; effects: FrameEffects[] } {
  const model = new SessionModel('replay');
  const mapper = new FrameMapper(model);
  const effects = frames.map((frame) => mapper.apply({ ...frame, type: dialect.eventName(frame.type) }));
  return { model, mapper, effects };
}

describe('RPC frame mapper on recorded turns', () => {
  for (const { agent, file, dialect } of RECORDED) {
    it(`${agent}: a write turn becomes the prompt, one completed tool call and the answer`, () => {
      const frames = recorded(file);
      const { model, effects } = replay(frames, dialect);
      const unknown = frames.filter((_, i) => !effects[i]!.handled).map((f) => f.type);
      assert.deepEqual(unknown, [], 'every recorded event type is known');

      const timeline = model.timeline();
      assert.deepEqual(
        timeline.map((e) => (e.kind === 'message' ? e.role : e.kind)),
        ['user', 'tool_call', 'agent'],
      );
      const [user] = model.messages('user');
      assert.match(user!.text, /^Write it\.\nSCENARIO: write \{"path":"note\.txt"/);

      const tool = timeline[1] as ToolCallEntity;
      assert.equal(tool.status, 'completed');
      assert.equal(tool.toolKind, 'edit');
      assert.equal(tool.title, 'write note.txt');
      assert.equal((tool.rawInput as { path: string }).path, 'note.txt');
      assert.deepEqual(tool.locations, [{ path: 'note.txt' }]);
      assert.match(JSON.stringify(tool.content), /Successfully wrote 1\d bytes/);
      assert.equal(tool.meta?.toolName, 'write');

      const answers = model.messages('agent');
      assert.equal(answers.length, 1, 'streamed deltas and message_end make one message');
      assert.equal(answers[0]!.text, 'Done: wrote note.txt. [scenario: write]');
      assert.equal(model.messages('thought').length, 0);

      assert.ok(model.usage && model.usage.used > 0, 'usage from the assistant message');
      assert.equal(model.turn, 'idle');
      assert.equal(model.lastStopReason, 'end_turn');
      assert.equal(effects.at(-1)?.refreshState, true, 'the end of the run asks for fresh state');
    });

    it(`${agent}: a prompt sent with a display shows it for the echoed user message, start and end alike`, () => {
      const model = new SessionModel('replay');
      const mapper = new FrameMapper(model);
      const display = [
        { type: 'text' as const, text: 'Docstring: write_note in note.py' },
        { type: 'resource_link' as const, uri: 'file:///ws/note.py#L1-2', name: 'note.py:1-2' },
      ];
      mapper.showNextUserAs(display);
      for (const frame of recorded(file)) mapper.apply({ ...frame, type: dialect.eventName(frame.type) });
      const users = model.messages('user');
      assert.equal(users.length, 1);
      assert.deepEqual(users[0]!.parts, display);
      assert.equal(users[0]!.text, 'Docstring: write_note in note.py');
    });

    it(`${agent}: a run aborted mid-tool leaves the tool call failed and the turn cancelled`, () => {
      const frames = recorded(file);
      const started = frames.findIndex((f) => f.type === 'tool_execution_start');
      const { model, mapper } = replay(frames.slice(0, started + 1), dialect);
      assert.equal(model.turn, 'running');
      mapper.endRun(runOutcome(undefined, true), false);
      const tool = model.timeline().find((e): e is ToolCallEntity => e.kind === 'tool_call');
      assert.equal(tool?.status, 'failed');
      assert.equal(tool?.meta?.unfinished, 'cancelled');
      assert.equal(model.turn, 'idle');
      assert.equal(model.lastStopReason, 'cancelled');
    });
  }

  it('reads how a run ended from its last assistant message', () => {
    const end = (stopReason: string, extra: Record<string, unknown> = {}) => [{ role: 'user' }, { role: 'assistant', stopReason, ...extra }];
    assert.deepEqual(runOutcome(end('stop'), false), { stopReason: 'end_turn' });
    assert.deepEqual(runOutcome(end('aborted'), false), { stopReason: 'cancelled' });
    assert.deepEqual(runOutcome(end('length'), false), { stopReason: 'max_tokens' });
    assert.deepEqual(runOutcome(end('error', { errorMessage: 'HTTP 500' }), false), { stopReason: 'error', error: 'HTTP 500' });
    assert.deepEqual(runOutcome(end('stop'), true), { stopReason: 'cancelled' }, 'our abort wins');
  });

  it('patches agentState from queue and compaction events and says so', () => {
    const model = new SessionModel('events');
    const mapper = new FrameMapper(model);
    const queued = mapper.apply({ type: 'queue_update', steering: ['a'], followUp: ['b', 'c'] });
    assert.deepEqual(queued, { handled: true, agentStateChanged: true });
    assert.equal(model.agentState.queuedMessageCount, 3);
    assert.equal(mapper.apply({ type: 'auto_compaction_start', reason: 'threshold' }).agentStateChanged, true);
    assert.equal(model.agentState.isCompacting, true);
    mapper.apply({ type: 'auto_compaction_end', result: { tokensBefore: 9000 } });
    assert.equal(model.agentState.isCompacting, false);
    assert.deepEqual(
      model.timeline().map((e) => (e.kind === 'notice' ? `${e.title} (${e.detail ?? ''})` : e.kind)),
      ['Compacting the context… (threshold)', 'Context compacted (9000 tokens before)'],
    );
    assert.deepEqual(mapper.apply({ type: 'model_changed' }), { handled: true, refreshState: true });
    assert.deepEqual(mapper.apply({ type: 'prompt_result', agentInvoked: false }), { handled: false }, 'turn frames are not the mapper’s');
  });
});
