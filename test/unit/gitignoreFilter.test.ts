/** What the `@` file search leaves out by the workspace's .gitignore files (src/host/gitignoreFilter.ts). */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { gitignoreFilter } from '../../src/host/gitignoreFilter';

test("the folder's .gitignore, .git/info/exclude and a nested .gitignore, each for the paths below it", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gitignore-'));
  fs.writeFileSync(path.join(root, '.gitignore'), 'build/\n*.log\n!keep.log\n');
  fs.mkdirSync(path.join(root, '.git', 'info'), { recursive: true });
  fs.writeFileSync(path.join(root, '.git', 'info', 'exclude'), 'secret.txt\n');
  fs.mkdirSync(path.join(root, 'pkg'));
  fs.writeFileSync(path.join(root, 'pkg', '.gitignore'), '/generated.ts\n');
  const ignored = gitignoreFilter(root, ['pkg/.gitignore', 'src/a.ts']);
  for (const rel of ['build/out.js', 'debug.log', 'src/deep/trace.log', 'secret.txt', 'pkg/generated.ts']) assert.equal(ignored(rel), true, rel);
  for (const rel of ['src/a.ts', 'keep.log', 'generated.ts', 'pkg/src/generated.ts', 'pkg/index.ts']) assert.equal(ignored(rel), false, rel);
});

test('a folder without .gitignore ignores nothing', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gitignore-'));
  assert.equal(gitignoreFilter(root)('anything/at/all.txt'), false);
});
