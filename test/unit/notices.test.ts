/**
 * The notice catalog (src/session/notices.ts): a notice built in the protocol-blind layers keeps its English
 * text for what is stored and its phrase for the views that word it; the English matches what the log says.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeExit, type ExitInfo } from '../../src/core/agentProcess';
import { cutByExit, english, exitPhrase, NOTICE_TEXTS, phrase, wordPhrase } from '../../src/session/notices';
import { SessionModel, type NoticeEntity } from '../../src/session/sessionModel';
import { slimEntity } from '../../src/session/transcriptCopy';

const exits: ExitInfo[] = [
  { code: 3, signal: null, stderrTail: '' },
  { code: 1, signal: null, stderrTail: 'boom\nat start\n' },
  { code: null, signal: 'SIGKILL', stderrTail: '' },
  { code: null, signal: null, spawnError: 'spawn nope ENOENT', stderrTail: '' },
  { code: null, signal: 'SIGTERM', closedOutput: true, stderrTail: 'tail' },
  { code: 0, signal: null, closedInput: true, stderrTail: '' },
  { code: null, signal: null, disconnected: 'code 1006', stderrTail: '' },
];

test('notices: an exit in English is what the log says (describeExit), the stderr tail as the agent wrote it', () => {
  for (const exit of exits) assert.equal(english(exitPhrase(exit)), describeExit(exit));
  const worded = wordPhrase(exitPhrase(exits[1]!), (key, args) => `<${key}${args.map((a) => ` ${a}`).join('')}>`);
  assert.equal(worded, '<exitCode 1>\n<lastStderr>\nboom\nat start');
});

test('notices: a phrase is stored in English with the phrase beside it; plain text (the agent own) has no phrase', () => {
  const model = new SessionModel('s');
  const events: NoticeEntity[] = [];
  model.on((e) => e.type === 'entity' && e.entity.kind === 'notice' && events.push(e.entity));
  model.notice('info', phrase('sessionResumed'), phrase('switchedDetail', 'abc'));
  model.notice('warning', phrase('newSession'), phrase('newSessionDetail', 'abc', phrase('noReasonGiven')));
  model.notice('warning', 'A message of the agent', 'its detail');
  model.beginTurn();
  model.requestCancel();
  model.endTurn('cancelled');
  const [resumed, fresh, agent, stopped] = events;
  assert.equal(resumed?.title, 'Session resumed');
  assert.equal(resumed?.detail, "Session abc: the agent switched to its session file and keeps its context; what is above is Atrium's copy.");
  assert.deepEqual(resumed?.phrases, { title: { key: 'sessionResumed' }, detail: { key: 'switchedDetail', args: ['abc'] } });
  assert.equal(fresh?.detail, 'Session abc could not be reattached (no reason given); the agent does not remember it.');
  assert.deepEqual(fresh?.phrases?.detail, { key: 'newSessionDetail', args: ['abc', { key: 'noReasonGiven' }] });
  assert.deepEqual(agent, { kind: 'notice', id: '2', severity: 'warning', title: 'A message of the agent', detail: 'its detail' });
  assert.deepEqual([stopped?.code, stopped?.title, stopped?.phrases], ['stopped', 'Stopped', { title: { key: 'stopped' } }]);
  // What is stored is JSON: the phrase comes back as it went.
  assert.deepEqual(JSON.parse(JSON.stringify(model.timeline())), model.timeline());
});

test('notices: the kept copy of a notice keeps its phrases, but not the phrase of a detail it clipped', () => {
  const model = new SessionModel('s');
  const short = model.notice('error', phrase('agentExited'), exitPhrase(exits[0]!));
  assert.deepEqual(slimEntity(short), short);
  const long = model.notice('error', phrase('agentExited'), exitPhrase({ code: 1, signal: null, stderrTail: 'x'.repeat(5000) }));
  const kept = slimEntity(long);
  assert.ok(kept.kind === 'notice' && kept.detail!.length < 2100 && kept.detail!.startsWith('Agent exited with code 1\n--- last stderr ---\nxxx'));
  assert.deepEqual(kept.kind === 'notice' && kept.phrases, { title: { key: 'agentExited' } });
});

test('notices: every catalog text names its arguments {0}… in order, none skipped', () => {
  for (const [key, text] of Object.entries(NOTICE_TEXTS)) {
    const used = [...new Set([...text.matchAll(/\{(\d+)\}/g)].map((m) => Number(m[1])))].sort();
    assert.deepEqual(
      used,
      used.map((_, i) => i),
      key,
    );
  }
});

test('notices: a tool call cut by the exit says how in one line, with its phrase; one a kept copy finds unfinished says so', () => {
  const model = new SessionModel('s');
  model.upsertToolCall({ id: 't', title: 'Run the build', status: 'in_progress' });
  model.failUnfinishedToolCalls(cutByExit(exits[1]!));
  const cut = model.toolCall('t')!;
  assert.equal(cut.interrupted, 'Agent exited with code 1 before this finished.');
  assert.equal(cut.interrupted, `${describeExit(exits[1]!).split('\n')[0]} before this finished.`);
  assert.deepEqual(cut.interruptedPhrase, { key: 'beforeFinished', args: [{ key: 'exitCode', args: ['1'] }] });
  const running = slimEntity({ kind: 'tool_call', id: 'r', title: 'Run', toolKind: 'execute', status: 'in_progress', content: [], locations: [] });
  assert.ok(running.kind === 'tool_call');
  assert.deepEqual([running.status, running.interrupted, running.interruptedPhrase], ['failed', 'Not finished when this session ended.', { key: 'notFinished' }]);
});
