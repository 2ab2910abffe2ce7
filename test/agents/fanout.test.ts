/**
 * `agent-host fanout` (docs/fanout.md) with codex-acp, claude-agent-acp and opencode on the scripted model, in a git
 * repository whose tree has an uncommitted change, an untracked file and an ignored one:
 * - one prompt runs on the three at once (codex on a model asked for by --model), each in a worktree of its own: each writes its own answer.txt (its
 *   worktree's name), records what it found of the user's uncommitted and untracked files, and changes the first
 *   line of a tracked file; the check command passes in codex's run only; the rows (JSON) say so;
 * - the user's tree (files, index, HEAD) is byte for byte as before while the runs are kept;
 * - applying codex's run while the user changed the same line is refused (exit 5) and writes nothing; applying
 *   claude's run once the user's change is undone puts exactly its diff into the tree;
 * - `--remove all` leaves `git worktree list` with the user's own worktree only, and no agent process is left;
 * - Ctrl-C during a run cancels it and removes every worktree (exit 7); a folder that is not a repository, and
 *   one run only, are usage errors (exit 2).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { git, treeState } from '../support/gitTree';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { runCli } from '../support/cli';
import { cliPath, repoRoot } from '../support/paths';
import { agentById } from './catalog';

const SCRATCH_ROOT = path.join(repoRoot, '.scratch', 'fanout');
const ids = ['codex', 'claude', 'opencode'] as const;

interface Row {
  run: number;
  id: string;
  label: string;
  agent: string;
  worktree: string;
  outcome: string;
  exitCode: number;
  files: Array<{ file: string; added: number; removed: number }>;
  added: number;
  removed: number;
  check?: { exitCode: number | null; tail: string };
  wallMs: number;
  tokens: number | null;
  usage?: unknown;
}

describe('agent-host fanout: codex, claude and opencode on one prompt, each in a worktree', { concurrency: false }, () => {
  let model: ScriptedModel;
  let scratch: string;
  let repo: string;
  let agentsFile: string;
  let state: string;
  let worktrees: string;

  before(async () => {
    for (const id of ids) assert.ok(agentById(id)!.installed(), `${id} is not installed: run scripts/setup-agents.sh`);
    model = await startScriptedModel();
    fs.mkdirSync(SCRATCH_ROOT, { recursive: true });
    scratch = fs.mkdtempSync(path.join(SCRATCH_ROOT, 'run-'));
    repo = path.join(scratch, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'tracked.txt'), 'first\nsecond\n');
    fs.writeFileSync(path.join(repo, 'committed.txt'), 'as committed\n');
    fs.writeFileSync(path.join(repo, '.gitignore'), 'build/\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'start');
    // The user's work in progress: an uncommitted change, an untracked file, an ignored one.
    fs.writeFileSync(path.join(repo, 'committed.txt'), 'changed, not committed\n');
    fs.writeFileSync(path.join(repo, 'notes.txt'), 'untracked notes\n');
    fs.mkdirSync(path.join(repo, 'build'));
    fs.writeFileSync(path.join(repo, 'build', 'out.bin'), 'ignored\n');
    const agents = [];
    for (const id of ids) {
      const spec = await agentById(id)!.prepare({ scratch: path.join(scratch, id), modelUrl: model.url, workspace: repo });
      agents.push({ name: id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false });
    }
    agentsFile = path.join(scratch, 'agents.json');
    fs.writeFileSync(agentsFile, JSON.stringify(agents));
    state = path.join(scratch, 'state');
    worktrees = path.join(scratch, 'worktrees');
  });
  after(async () => {
    await model?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const shellPrompt = (command: string) => `Do it.\nSCENARIO: shell ${JSON.stringify({ command })}`;
  const runArgs = (...rest: string[]) => ['fanout', '--config', agentsFile, '--cwd', repo, '--state-dir', state, '--worktrees', worktrees, '--approve-all', ...rest];

  let rows: Row[] = [];
  let initial = '';

  test('three runs in parallel, each in its own worktree with the user’s uncommitted and untracked files; the tree untouched', { timeout: 420_000 }, async () => {
    initial = treeState(repo);
    const command = ['basename "$PWD" > answer.txt', 'cat committed.txt notes.txt > seen.txt', 'ls build > ignored.txt 2>&1 || true', "sed -i 's/^first$/first, by the run/' tracked.txt"].join('; ');
    const r = await runCli(
      runArgs('--agent', 'codex', '--model', 'gpt-5.4', '--agent', 'claude', '--agent', 'opencode', '--check', 'grep -q codex answer.txt', '--keep', '--format', 'json', shellPrompt(command)),
      repo,
    );
    assert.equal(r.code, 0, r.stderr);
    rows = JSON.parse(r.stdout) as Row[];
    assert.deepEqual(
      rows.map((x) => [x.run, x.agent, x.outcome]),
      [
        [1, 'codex', 'end_turn'],
        [2, 'claude', 'end_turn'],
        [3, 'opencode', 'end_turn'],
      ],
      r.stderr,
    );
    assert.equal(treeState(repo), initial, 'the user’s tree changed before any apply');
    // Codex's run on the model asked for (a config option of codex's), which the model server was asked for.
    assert.equal(rows[0]!.label, 'codex (gpt-5.4)');
    assert.ok(
      model.requests.some((q) => (q.body as { model?: string } | undefined)?.model === 'gpt-5.4'),
      'no request for gpt-5.4',
    );
    for (const row of rows) {
      const wt = row.worktree;
      assert.ok(wt.startsWith(worktrees + path.sep), `${row.agent}'s worktree ${wt} is not under --worktrees`);
      assert.equal(fs.readFileSync(path.join(wt, 'answer.txt'), 'utf8').trim(), path.basename(wt), `${row.agent} wrote elsewhere`);
      assert.equal(fs.readFileSync(path.join(wt, 'seen.txt'), 'utf8'), 'changed, not committed\nuntracked notes\n', `${row.agent} did not find the user's work in progress`);
      assert.match(fs.readFileSync(path.join(wt, 'ignored.txt'), 'utf8'), /No such file/, `${row.agent}'s worktree has the ignored folder`);
      assert.equal(fs.readFileSync(path.join(wt, 'tracked.txt'), 'utf8'), 'first, by the run\nsecond\n');
      assert.deepEqual(row.files.map((f) => f.file).sort(), ['answer.txt', 'ignored.txt', 'seen.txt', 'tracked.txt'], `${row.agent}'s files`);
      assert.equal(row.added, 4 + 1);
      assert.equal(row.removed, 1);
      assert.equal(row.check?.exitCode, row.agent === 'codex' ? 0 : 1, `${row.agent}'s check: ${row.check?.tail}`);
      assert.ok(row.wallMs > 0);
    }
    assert.equal(new Set(rows.map((x) => x.worktree)).size, 3);
    // Tokens from the agents' usage reports, where an agent sends them.
    assert.ok(
      rows.some((x) => typeof x.tokens === 'number' && x.tokens > 0),
      JSON.stringify(rows.map((x) => [x.agent, x.tokens, x.usage])),
    );
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 4);
  });

  test('apply: refused (exit 5, nothing written) where the user changed the same line; exactly the run’s diff once it is undone', { timeout: 120_000 }, async () => {
    assert.equal(rows.length, 3, 'the runs did not run');
    const [codexRun, claudeRun] = rows;
    const list = await runCli(['fanout', '--list', '--cwd', repo, '--worktrees', worktrees, '--format', 'json'], repo);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual((JSON.parse(list.stdout) as Array<{ id: string }>).map((k) => k.id).sort(), rows.map((x) => x.id).sort());

    fs.writeFileSync(path.join(repo, 'tracked.txt'), 'first, by the user\nsecond\n');
    const userEdited = treeState(repo);
    const refused = await runCli(['fanout', '--apply', codexRun!.id, '--cwd', repo, '--worktrees', worktrees], repo);
    assert.equal(refused.code, 5, refused.stderr);
    assert.match(refused.stderr, /tracked\.txt changed meanwhile \(nothing was written\)/);
    assert.equal(treeState(repo), userEdited, 'a refused apply wrote something');

    fs.writeFileSync(path.join(repo, 'tracked.txt'), 'first\nsecond\n');
    assert.equal(treeState(repo), initial);
    const applied = await runCli(['fanout', '--apply', claudeRun!.id, '--cwd', repo, '--worktrees', worktrees], repo);
    assert.equal(applied.code, 0, applied.stderr);
    // The tree is now the base plus claude's run: each file it changed as in its worktree, the rest as before.
    for (const f of ['answer.txt', 'seen.txt', 'ignored.txt', 'tracked.txt']) {
      assert.equal(fs.readFileSync(path.join(repo, f), 'utf8'), fs.readFileSync(path.join(claudeRun!.worktree, f), 'utf8'), f);
    }
    assert.equal(fs.readFileSync(path.join(repo, 'committed.txt'), 'utf8'), 'changed, not committed\n');
    assert.equal(fs.readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'untracked notes\n');
    assert.deepEqual(git(repo, 'status', '--porcelain').trimEnd().split('\n').sort(), [' M committed.txt', ' M tracked.txt', '?? answer.txt', '?? ignored.txt', '?? notes.txt', '?? seen.txt']);

    const removed = await runCli(['fanout', '--remove', 'all', '--cwd', repo, '--worktrees', worktrees], repo);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1);
    for (const row of rows) assert.ok(!fs.existsSync(row.worktree), `${row.worktree} is still there`);
    assert.equal(git(repo, 'for-each-ref', 'refs/atrium-runs').trim(), '', 'the runs’ refs are left');
    const left = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(scratch) && !l.includes('ps -eo'));
    assert.deepEqual(left, [], 'a process of the runs is left');
  });

  test('Ctrl-C during the runs cancels them and removes every worktree (exit 7)', { timeout: 240_000 }, async () => {
    const child = spawn(process.execPath, [cliPath, ...runArgs('--agent', 'codex', '--agent', 'codex', shellPrompt('sleep 60'))], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const running = new Promise<void>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if ((stderr.match(/\] running/g) ?? []).length >= 2) resolve();
      }),
    );
    await running;
    // Both agents have their turn: wait until the model was asked by each.
    const asked = model.requests.length;
    for (let i = 0; i < 600 && model.requests.length < asked + 2; i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 7, stderr);
    assert.match(stdout, /Removed the 2 worktrees/);
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, stderr);
    assert.deepEqual(fs.existsSync(worktrees) ? fs.readdirSync(worktrees) : [], []);
  });

  test('usage: not a git repository, or one run only (exit 2)', async () => {
    // Outside this project's own repository (the scratch folder is in it).
    const plain = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-host-fanout-'));
    try {
      const r = await runCli(['fanout', '--config', agentsFile, '--cwd', plain, '--agent', 'codex', '--agent', 'claude', 'hi'], plain);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is not in a git repository: runs on several agents need git/);
    } finally {
      fs.rmSync(plain, { recursive: true, force: true });
    }
    const one = await runCli(runArgs('--agent', 'codex', 'hi'), repo);
    assert.equal(one.code, 2);
    assert.match(one.stderr, /give 2 to 8 runs/);
  });
});
