/** Where claude-agent-acp's fork at a message resumes, read from its session file (src/acp/claudeFork.ts). */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { claudeConfigDir, claudeResumePoint, forksAtMessage } from '../../src/acp/claudeFork';

const ID = '87066a5d-99d1-449d-b1e8-2e6a8d566083';
const prompt = (uuid: string, parent: string | null, text: string) => ({ type: 'user', uuid, parentUuid: parent, message: { role: 'user', content: [{ type: 'text', text }] } });
const RECORDS = [
  { type: 'queue-operation' },
  { type: 'user', uuid: 'u0', parentUuid: null, isMeta: true, message: { content: '<local-command-caveat>Caveat</local-command-caveat>' } },
  { type: 'user', uuid: 'u1', parentUuid: 'u0', message: { content: '<command-name>/model</command-name>' } },
  prompt('p1', 'u1', 'Remember ALPHA.'),
  { type: 'assistant', uuid: 'a1', parentUuid: 'p1', message: { content: [{ type: 'tool_use', id: 't1' }] } },
  { type: 'user', uuid: 'r1', parentUuid: 'a1', message: { content: [{ type: 'tool_result', tool_use_id: 't1' }] } },
  { type: 'assistant', uuid: 'a2', parentUuid: 'r1', message: { content: [{ type: 'text', text: 'noted' }] } },
  prompt('s1', 'a2', '<system-reminder>files changed</system-reminder>'),
  prompt('p2', 's1', 'Remember BRAVO.'),
  { type: 'assistant', uuid: 'a3', parentUuid: 'p2', message: { content: [{ type: 'text', text: 'noted' }] } },
];

function configDir(records: unknown[], partialLine = false): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-fork-'));
  const folder = path.join(dir, 'projects', '-tmp-some-workspace');
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, `${ID}.jsonl`), `${records.map((r) => JSON.stringify(r)).join('\n')}\n${partialLine ? '{"type":"us' : ''}`);
  return dir;
}

test('the fork resumes at the record before the prompt; tool results, commands and reminders are no prompts', () => {
  const dir = configDir(RECORDS, true);
  assert.deepEqual(claudeResumePoint(dir, ID, 1, 2), { at: 's1' });
  assert.deepEqual(claudeResumePoint(dir, ID, 0, 2), { at: 'u1' });
  // A reattached session: the file holds earlier prompts than the transcript; counted from the end.
  assert.deepEqual(claudeResumePoint(dir, ID, 0, 1), { at: 's1' });
});

test('a first prompt with no record before it resumes at the start', () => {
  const dir = configDir([prompt('p1', null, 'hello'), { type: 'assistant', uuid: 'a1', parentUuid: 'p1' }]);
  assert.deepEqual(claudeResumePoint(dir, ID, 0, 1), { start: true });
});

test('a file behind the transcript, or none, says so', () => {
  const dir = configDir(RECORDS);
  assert.match((claudeResumePoint(dir, ID, 2, 3) as { missing: string }).missing, /holds 2 of the 3 prompts/);
  assert.match((claudeResumePoint(dir, 'no-such-id', 0, 1) as { missing: string }).missing, /no session file no-such-id\.jsonl/);
});

test('which agents fork at a message, and where their config folder is', () => {
  assert.equal(forksAtMessage('@zed-industries/claude-agent-acp'), true);
  assert.equal(forksAtMessage('@zed-industries/claude-code-acp'), true);
  assert.equal(forksAtMessage('opencode'), false);
  assert.equal(claudeConfigDir({ CLAUDE_CONFIG_DIR: '/x/claude', HOME: '/h' }, false), '/x/claude');
  assert.equal(claudeConfigDir({ HOME: '/h' }, false), path.join('/h', '.claude'));
});
