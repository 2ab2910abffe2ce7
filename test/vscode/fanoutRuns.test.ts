/**
 * Run on Several Agents… in the real VS Code (docs/fanout.md): the composer's "Run on several agents…" sends its
 * text to codex, claude-agent and opencode on the scripted model, each in a git worktree of its own made from the workspace's tree as it is (an uncommitted change,
 * an untracked file, an ignored folder), each in a chat tab pinned to its worktree; each approves its shell command
 * in a modal. The check command, named once for the workspace, passes in codex's run only.
 * - Until something is applied, the workspace's files, index and HEAD are byte for byte as they were.
 * - The Runs view shows the three runs with their outcome, files and check (screenshot runs-view.png); a run's Diff
 *   opens the multi-file diff against the start (runs-diff.png).
 * - The user changed the first line of tracked.txt while the runs waited; applying codex's run (which changed that
 *   line too) writes its other files as they are in its worktree and leaves tracked.txt with both sides as a merge
 *   conflict, opened in the merge editor (runs-merge.png): neither side is lost. Each run also wrote a CI workflow,
 *   a protected file: Apply names it in a modal first (runs-protected.png), and "Apply the Other Files" leaves it out.
 * - Claude's and opencode's runs side by side (runs-compare.png); claude's as a new branch (the working tree
 *   untouched); opencode's discarded: `git worktree list` has the workspace alone, and no process of a run is left.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { git, treeState } from '../support/gitTree';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat } from './chatUi';
import { runCommand, withWorkbench, type WorkbenchInfo } from './runner';

const ids = ['codex', 'claude', 'opencode'] as const;
/** The worktrees git knows besides the workspace's own. */
const runWorktrees = (repo: string) =>
  git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length))
    .filter((w) => path.resolve(w) !== path.resolve(repo));

test('Run on Several Agents: three agents in worktrees, the Runs view, a diff, an apply with a merge conflict, discard', { timeout: 900_000 }, async () => {
  for (const id of ids) assert.ok(agentById(id)!.installed(), `${id} is not installed: run scripts/setup-agents.sh`);
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('fanout-runs');
  try {
    git(workspace, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(workspace, 'tracked.txt'), 'first\nsecond\n');
    fs.writeFileSync(path.join(workspace, 'committed.txt'), 'as committed\n');
    fs.writeFileSync(path.join(workspace, '.gitignore'), 'build/\n');
    git(workspace, 'add', '-A');
    git(workspace, 'commit', '-q', '-m', 'start');
    fs.writeFileSync(path.join(workspace, 'committed.txt'), 'changed, not committed\n');
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'untracked notes\n');
    fs.mkdirSync(path.join(workspace, 'build'));
    fs.writeFileSync(path.join(workspace, 'build', 'out.bin'), 'ignored\n');
    const agents = [];
    for (const id of ids) {
      const spec = await agentById(id)!.prepare({ scratch: path.join(scratch, id), modelUrl: model.url, workspace });
      agents.push({ name: id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false });
    }
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'codex', 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 840_000,
        viewport: { width: 1400, height: 900 },
        failureShot: 'runs-failure',
      },
      (page, info) => steps(page, info, workspace),
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

async function steps(page: Page, info: WorkbenchInfo, repo: string): Promise<void> {
  const initial = treeState(repo);
  // The chat first: the extension is up (its commands in the palette) and Atrium's side bar is shown.
  const chat = await openChat(page);

  // The check command, once for the workspace.
  await runCommand(page, 'Atrium: Check Command for Runs');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill('grep -q codex answer.txt');
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });

  // Three runs of the composer's text: its "Run on several agents…" button.
  const command = [
    'basename "$PWD" > answer.txt',
    'cat committed.txt notes.txt > seen.txt',
    'ls build > ignored.txt 2>&1 || true',
    "sed -i 's/^first$/first, by the run/' tracked.txt",
    'mkdir -p .github/workflows && echo "on: push" > .github/workflows/ci.yml',
  ].join('; ');
  await chat.locator('.composer textarea').fill(`Do it. SCENARIO: shell ${JSON.stringify({ command })}`);
  await chat.locator('[data-testid="run-on-several"]').click();
  for (const id of ids) {
    const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${id}$`) }) }).first();
    await row.waitFor({ timeout: 15_000 });
    await row.locator('.monaco-checkbox, .quick-input-list-checkbox, input[type="checkbox"]').first().click();
  }
  await page.locator('.quick-input-widget .quick-input-count', { hasText: '3 Selected' }).waitFor({ timeout: 10_000 });
  await info.screenshot('runs-pick');
  await page.locator('.quick-input-widget .monaco-button', { hasText: /^OK$/ }).click();

  // While the runs wait for their permissions: nothing of the workspace changed; then the user edits tracked.txt.
  const firstModal = page.locator('.monaco-dialog-box');
  await firstModal.waitFor({ timeout: 180_000 });
  const worktreesMade = runWorktrees(repo);
  assert.equal(worktreesMade.length, 3, 'not one worktree per run');
  assert.equal(treeState(repo), initial, 'the workspace changed before any apply');
  for (const wt of runWorktrees(repo)) {
    assert.equal(fs.readFileSync(path.join(wt, 'committed.txt'), 'utf8'), 'changed, not committed\n', `${wt} lacks the uncommitted change`);
    assert.equal(fs.readFileSync(path.join(wt, 'notes.txt'), 'utf8'), 'untracked notes\n', `${wt} lacks the untracked file`);
    assert.ok(!fs.existsSync(path.join(wt, 'build')), `${wt} has the ignored folder`);
  }
  fs.writeFileSync(path.join(repo, 'tracked.txt'), 'first, by the user\nsecond\n');

  // Each run's shell command, approved in its modal.
  const view = runsView(page);
  const rows = view.locator('.monaco-list-row[aria-level="1"]');
  let approved = 0;
  await until(
    async () => {
      const box = page.locator('.monaco-dialog-box');
      if (await box.isVisible()) {
        const allow = box.locator('.dialog-buttons .monaco-button', { hasText: /^Allow/ }).first();
        if (await allow.isVisible()) {
          await allow.click();
          approved++;
          await box.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
        }
      }
      const texts = await rows.allTextContents();
      return texts.length === 3 && texts.every((t) => /check (passed|exit \d)/.test(t)) ? texts : undefined;
    },
    { what: 'the three runs ended and checked', timeoutMs: 420_000, intervalMs: 500 },
  );
  assert.ok(approved >= 3, `${approved} permission modal(s) answered`);
  const texts = await rows.allTextContents();
  for (const id of ids) {
    const t = texts.find((x) => x.startsWith(`${id} · run`));
    assert.ok(t, `no row for ${id}: ${texts.join(' | ')}`);
    assert.match(t, /end_turn/, t);
    assert.match(t, /5 file\(s\) \+6 −1/, t);
    assert.match(t, id === 'codex' ? /check passed/ : /check exit 1/, t);
  }
  // The workspace still has only the user's own edit.
  assert.equal(fs.readFileSync(path.join(repo, 'tracked.txt'), 'utf8'), 'first, by the user\nsecond\n');
  assert.ok(!fs.existsSync(path.join(repo, 'answer.txt')), 'a run wrote into the workspace');
  await info.screenshot('runs-view');

  // Codex's run: its diff against the start.
  const codexRow = rows.filter({ hasText: /^codex · run/ }).first();
  await action(codexRow, 'Diff Against the Start', () =>
    page
      .locator('.tab', { hasText: /codex · run 1 ↔ the tree it started from/ })
      .first()
      .isVisible(),
  );
  await page.locator('.multiDiffEditor, .multi-diff-editor', {}).first().waitFor({ timeout: 30_000 });
  await page
    .locator('.tab', { hasText: /codex · run 1 ↔ the tree it started from/ })
    .first()
    .waitFor({ timeout: 15_000 });
  await info.screenshot('runs-diff');

  // Apply it: its other files as in its worktree; tracked.txt with both sides, in the merge editor.
  const codexWt = runWorktrees(repo).find((w) => fs.readFileSync(path.join(w, 'answer.txt'), 'utf8').includes('codex'));
  assert.ok(codexWt, 'codex’s worktree');
  const expected = Object.fromEntries(['answer.txt', 'seen.txt', 'ignored.txt'].map((f) => [f, fs.readFileSync(path.join(codexWt, f), 'utf8')]));
  const protectedModal = page.locator('.monaco-dialog-box', { hasText: /changed protected files: \.github\/workflows\/ci\.yml/ });
  await action(codexRow, 'Apply to My Files', () => protectedModal.isVisible());
  assert.match((await protectedModal.textContent()) ?? '', /\*\*\/\.github\/workflows/);
  assert.ok(!fs.existsSync(path.join(repo, 'answer.txt')), 'applied before the protected file was answered');
  await info.screenshot('runs-protected');
  await protectedModal.locator('.dialog-buttons .monaco-button', { hasText: 'Apply the Other Files' }).click();
  await until(() => fs.existsSync(path.join(repo, 'answer.txt')) || undefined, { what: 'the applied files', timeoutMs: 30_000 });
  for (const [f, text] of Object.entries(expected)) assert.equal(fs.readFileSync(path.join(repo, f), 'utf8'), text, f);
  assert.ok(!fs.existsSync(path.join(repo, '.github')), 'the protected file was applied');
  const merged = await until(
    () => {
      const text = fs.readFileSync(path.join(repo, 'tracked.txt'), 'utf8');
      return text.includes('<<<<<<<') ? text : undefined;
    },
    { what: 'tracked.txt merged', timeoutMs: 30_000 },
  );
  assert.match(merged, /^<<<<<<< yours\nfirst, by the user\n=======\nfirst, by the run\n>>>>>>> run /m, merged);
  assert.match(merged, /\nsecond\n$/);
  // The merge editor: the user's line and the run's, each in its input.
  await page.locator('.view-line', { hasText: 'first, by the user' }).first().waitFor({ timeout: 30_000 });
  await page.locator('.view-line', { hasText: 'first, by the run' }).first().waitFor({ timeout: 30_000 });
  await page.locator('.tab', { hasText: 'Merging: tracked.txt' }).first().waitFor({ timeout: 15_000 });
  await info.screenshot('runs-merge');
  assert.equal(runWorktrees(repo).length, 2, 'the applied run’s worktree is still there');

  // The view's title says the disk the worktrees use.
  assert.match((await view.locator('.pane-header').textContent()) ?? '', /\d worktree\(s\) · [\d.]+ MiB/);

  // Two runs side by side: claude's against opencode's.
  await action(rows.filter({ hasText: /^claude · run/ }).first(), 'Compare With Another Run', () =>
    page
      .locator('.quick-input-list .monaco-list-row', { hasText: /^opencode · run 3/ })
      .first()
      .isVisible(),
  );
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: /^opencode · run 3/ })
    .first()
    .click();
  await page
    .locator('.tab', { hasText: /claude · run 2 ↔ opencode · run 3/ })
    .first()
    .waitFor({ timeout: 30_000 });
  // Each side's answer.txt: its own worktree's name.
  await page
    .locator('.view-line', { hasText: /-2-claude$/ })
    .first()
    .waitFor({ timeout: 30_000 });
  await page
    .locator('.view-line', { hasText: /-3-opencode$/ })
    .first()
    .waitFor({ timeout: 30_000 });
  await info.screenshot('runs-compare');

  // Claude's run as a new branch (the working tree untouched), then opencode's discarded.
  const beforeBranch = treeState(repo);
  await action(rows.filter({ hasText: /^claude · run/ }).first(), 'Apply as a New Branch', () => git(repo, 'branch', '--list', 'atrium/*').trim() !== '');
  const branch = await until(
    () =>
      git(repo, 'branch', '--list', 'atrium/*')
        .trim()
        .replace(/^\*?\s*/, '') || undefined,
    { what: 'the run’s branch', timeoutMs: 30_000 },
  );
  assert.match(git(repo, 'show', `${branch}:answer.txt`), /claude/);
  assert.equal(git(repo, 'show', `${branch}:tracked.txt`), 'first, by the run\nsecond\n');
  assert.equal(treeState(repo), beforeBranch, 'Apply as a New Branch touched the working tree');
  // The branch keeps the run: its worktree goes.
  await until(() => (runWorktrees(repo).length === 1 ? true : undefined), { what: "claude's worktree removed", timeoutMs: 30_000 });
  await action(rows.filter({ hasText: /^opencode · run/ }).first(), 'Discard', () => runWorktrees(repo).length === 0);
  await until(() => (runWorktrees(repo).length === 0 ? true : undefined), { what: "opencode's worktree removed", timeoutMs: 30_000 });
  assert.deepEqual(runWorktrees(repo), []);
  await until(
    () => {
      const left: string[] = [];
      for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        const cwd = (() => {
          try {
            return fs.readlinkSync(`/proc/${pid}/cwd`);
          } catch {
            return '';
          }
        })();
        if (worktreesMade.some((w) => cwd === w || cwd.startsWith(w + path.sep))) left.push(`${pid} ${cwd}`);
      }
      return left.length === 0 ? true : undefined;
    },
    { what: 'no process left in a run’s worktree', timeoutMs: 30_000 },
  );
}

/** The Runs view's pane in Atrium's side bar. */
function runsView(page: Page): Locator {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Runs/i }) }).first();
}

/**
 * Runs an action of a tree row from its context menu, again while `done` says it has not happened (a hover or a
 * re-render of the tree can close the menu before the pick lands).
 */
async function action(row: Locator, label: string, done?: () => boolean | Promise<boolean>): Promise<void> {
  const page = row.page();
  const menu = page.locator('.context-view .monaco-menu');
  const item = menu.locator('.action-item', { hasText: label }).first();
  await until(
    async () => {
      try {
        await page.keyboard.press('Escape');
        await page.mouse.move(0, 0);
        await row.click({ button: 'right', timeout: 5_000 });
        await item.hover({ timeout: 3_000 });
        // The hovered item has the menu's focus: Enter runs it.
        if (!(await item.evaluate((el) => el.classList.contains('focused') || el.querySelector('.focused') !== null || el.contains(document.activeElement)))) return undefined;
        await page.keyboard.press('Enter');
        await menu.waitFor({ state: 'hidden', timeout: 3_000 });
      } catch {
        return undefined;
      }
      if (!done) return true;
      for (let i = 0; i < 50; i++) {
        if (await done()) return true;
        await new Promise((r) => setTimeout(r, 200));
      }
      return undefined;
    },
    { what: `"${label}" from the row's context menu`, timeoutMs: 60_000, intervalMs: 300 },
  );
}
