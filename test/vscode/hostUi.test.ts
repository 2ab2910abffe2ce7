/**
 * The permission modal and the write review in a real VS Code, with the fixture agent (it writes through
 * fs/* and offers a trap option): buttons by kind, the trap flagged, Show Diff, Accept in the review.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { runHostUiCheck } from './hostUi';

test('the permission modal says what each option does, and the write review applies only after Accept', { timeout: 300_000 }, async () => {
  const { scratch, workspace } = scratchWorkspace('host-ui');
  const agent = { name: 'smoke-agent', command: process.execPath, args: [path.join(repoRoot, 'out/test/vscode/fixtures/smokeAgent.js')], env: {} };
  try {
    const shots = await runHostUiCheck({
      workspace,
      userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name },
      timeoutMs: 240_000,
    });
    assert.equal(shots.length, 9);
    assert.ok(fs.existsSync(path.join(workspace, 'reviewed.txt')));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
