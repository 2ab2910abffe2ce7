/** The tree's layering (README "Layout"), checked by scripts/check-layers.mjs on every run of the suite. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/paths';

test('imports follow the floors, no cycles between folders, no class tests on sessions, no file over 500 lines', () => {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'check-layers.mjs')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr || r.stdout);
});
