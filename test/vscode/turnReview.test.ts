/**
 * The turn summary and the review, in a real VS Code (code-server + Chromium): claude-agent on the scripted model
 * runs one shell line that edits two files (one in two places), creates one and deletes one. The transcript ends
 * with "4 files changed +a −b"; Review opens VS Code's multi-file diff of the four; the change at the cursor on
 * line 2 is rejected from the palette → line 2 is back on disk and the change at line 11 stays; a line typed on
 * the right side of b.txt and saved is kept, and Accept keeps it. Then two tabs write at once (tab 1's write waits for
 * its answer while tab 2 writes and ends): each summary says 1 file, each review lists its own file only, and
 * tab 2's Undo all (asked first) removes its file and leaves tab 1's.
 * Permissions are answered in the chat. Screenshots: test-artifacts/turn-review-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle } from './chatUi';
import { fileWith, palette } from './editorUi';
import { focusedRow, quickPickLoaded } from './waits';
import type { Frame, Page } from 'playwright-core';
import { answerModal, withWorkbench } from './runner';

const lines = (n: number, change: Record<number, string> = {}) => `${Array.from({ length: n }, (_, i) => change[i + 1] ?? `line ${i + 1}`).join('\n')}\n`;

const tab = (frame: Frame, id: string) => frame.locator(`[data-testid="tab-${id}"]`);

/** Runs a command from the palette (opened again when the workbench takes the focus back under the typing). */
async function fromPalette(page: Page, title: string): Promise<void> {
  await palette(page, `>${title}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Answers the chat's permission card: Allow once. */
async function allowOnce(frame: Frame): Promise<void> {
  const allow = frame.locator('.entry.permission [data-action="answer-permission"]', { hasText: /Allow once/ }).first();
  await allow.waitFor({ timeout: 90_000 });
  await allow.click();
  await allow.waitFor({ state: 'detached', timeout: 30_000 });
}

/** The shown tab's `nth` summary (its last; it comes once the turn's changes are counted) says 1 file; its Review lists `mine`, never `theirs`. */
async function reviewShows(page: Page, frame: Frame, nth: number, title: string, mine: string, theirs: string): Promise<void> {
  const summary = frame.locator('.entry.notice.changes').nth(nth);
  // (Just after a tab switch the transcript may still be the other tab's, or this turn's summary not yet counted.)
  await until(
    async () =>
      /1 file changed/.test(
        (await summary
          .locator('.notice-title')
          .textContent({ timeout: 1000 })
          .catch(() => '')) ?? '',
      )
        ? true
        : undefined,
    {
      what: `summary ${nth} of "${title}" saying 1 file changed`,
      timeoutMs: 30_000,
    },
  ).catch(async (error: Error) => assert.fail(`${error.message}: ${await frame.locator('.entry.notice.changes .notice-title').allTextContents()}`));
  await summary.locator('[data-action="review-changes"]').click();
  await page.locator('.monaco-workbench .tab', { hasText: new RegExp(`Turn changes: ${title}.*\\(1 file`) }).waitFor({ timeout: 30_000 });
  const editors = page.locator('.editor-group-container .editor-container');
  await editors.getByText(mine, { exact: true }).filter({ visible: true }).first().waitFor({ timeout: 15_000 });
  // (The review replaced in the editor may linger hidden in the page: only what shows counts.)
  assert.equal(await editors.getByText(theirs, { exact: true }).filter({ visible: true }).count(), 0, `${theirs} in the review of "${title}"`);
}

test('a turn that edits two files, creates one and deletes one: its summary, the review across files, one change rejected, one edited (claude)', { timeout: 600_000 }, async () => {
  const claude = agentById('claude')!;
  assert.ok(claude.installed(), 'claude is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('turn-review');
  const file = (name: string) => path.join(workspace, name);
  fs.writeFileSync(file('a.txt'), lines(12));
  fs.writeFileSync(file('b.txt'), 'b\n');
  fs.writeFileSync(file('gone.txt'), 'to be deleted\n');
  const edited = lines(12, { 2: 'line TWO', 11: 'line ELEVEN' });
  try {
    const spec = await claude.prepare({ scratch: path.join(scratch, 'claude'), modelUrl: model.url, workspace });
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [{ name: 'claude', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }],
          'agentHost.defaultAgent': 'claude',
          // Answered in the chat: a modal would keep the second tab from being opened while the first one waits.
          'agentHost.permissions.mode': 'inline',
          'workbench.colorTheme': 'Default Dark Modern',
        },
        timeoutMs: 540_000,
        viewport: { width: 1400, height: 900 },
      },
      async (page, info) => {
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const command = `printf '${edited.replaceAll('\n', '\\n')}' > a.txt; printf 'b changed\\n' > b.txt; printf 'made by the turn\\n' > c.txt; rm gone.txt`;
        await send(frame, `Rework the files.\nSCENARIO: shell ${JSON.stringify({ command })}`);
        await allowOnce(frame);
        const summary = frame.locator('.entry.notice.changes');
        await summary.waitFor({ timeout: 90_000 });
        await turnIdle(frame);
        assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), edited, 'the agent wrote a.txt');
        assert.match((await summary.locator('.notice-title').textContent()) ?? '', /4 files changed\s*\+4\s*−4/);
        await info.screenshot('turn-review-summary');

        await summary.locator('[data-action="review-changes"]').click();
        const review = page.locator('.monaco-workbench .tab', { hasText: /Turn changes: Rework the files.*\(4 files\)/ });
        await review.waitFor({ timeout: 30_000 });
        const modified = page.locator('.monaco-diff-editor .editor.modified .view-line');
        await modified.filter({ hasText: 'line TWO' }).first().waitFor({ timeout: 30_000 });
        await info.screenshot('turn-review-editor');

        // Reject the change on line 2 (the cursor on it, the palette's command): line 11's change stays on disk.
        await modified.filter({ hasText: 'line TWO' }).first().click();
        await fromPalette(page, 'Atrium: Reject the Change at the Cursor');
        await fileWith(file('a.txt'), /line 2\n/);
        assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), lines(12, { 11: 'line ELEVEN' }), 'only the change at line 2 went back');

        // A line fixed on the right side of b.txt and saved is kept; Accept keeps it as it is.
        await modified.filter({ hasText: 'b changed' }).first().click();
        await page.keyboard.press('End');
        await page.keyboard.type(' and fixed');
        await page.keyboard.press('Control+S');
        await fileWith(file('b.txt'), /b changed and fixed\n/);
        // Accept in the review's title: it asks which file, the one just edited first.
        await page.locator('.editor-actions .action-label[aria-label^="Accept a File\'s Changes"]').first().click();
        await quickPickLoaded(page, 'Accept the changes of a file', 'b.txt');
        await focusedRow(page, 'b.txt');
        await info.screenshot('turn-review-accept');
        await page.keyboard.press('Enter');
        await page.locator('.monaco-workbench .tab', { hasText: /Turn changes: .*\(3 files\)/ }).waitFor({ timeout: 30_000 });
        assert.equal(await page.locator('.monaco-workbench .tab', { hasText: 'Turn changes:' }).count(), 1, 'one review per tab');
        assert.equal(fs.readFileSync(file('b.txt'), 'utf8'), 'b changed and fixed\n');
        assert.ok(!fs.existsSync(file('gone.txt')) && fs.existsSync(file('c.txt')), 'the other files as the turn left them');
        await modified.filter({ hasText: 'line ELEVEN' }).first().waitFor({ timeout: 30_000 });
        assert.equal(await modified.filter({ hasText: 'b changed' }).filter({ visible: true }).count(), 0, 'b.txt left the review');
        await info.screenshot('turn-review-after');

        // Two tabs writing at once: tab 1's write waits for its answer while tab 2 writes and ends; each review lists its own file.
        await send(frame, `Tab one writes.\nSCENARIO: write ${JSON.stringify({ path: 'one.txt', content: 'tab one\n' })}`);
        await frame.locator('.entry.permission [data-action="answer-permission"]').first().waitFor({ timeout: 90_000 });
        await fromPalette(page, 'Atrium: New Chat Tab');
        await tab(frame, 't2').waitFor({ timeout: 15_000 });
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await send(frame, `Tab two writes.\nSCENARIO: write ${JSON.stringify({ path: 'two.txt', content: 'tab two\n' })}`);
        await allowOnce(frame);
        await fileWith(file('two.txt'), /tab two/);
        await turnIdle(frame);
        await tab(frame, 't1').click();
        await allowOnce(frame);
        await fileWith(file('one.txt'), /tab one/);
        await turnIdle(frame);
        await reviewShows(page, frame, 1, 'Rework the files', 'one.txt', 'two.txt');
        await info.screenshot('turn-review-tab-one');
        await tab(frame, 't2').click();
        await reviewShows(page, frame, 0, 'Tab two writes', 'two.txt', 'one.txt');
        await info.screenshot('turn-review-tab-two');
        // Undo all of tab 2 (asked first) takes its file away and leaves tab 1's.
        await frame.locator('.entry.notice.changes [data-action="undo-changes"]').last().click();
        assert.match(await answerModal(page, 'Revert'), /two\.txt/);
        await until(() => !fs.existsSync(file('two.txt')), { what: 'two.txt removed by Undo all', timeoutMs: 15_000 });
        assert.equal(fs.readFileSync(file('one.txt'), 'utf8'), 'tab one\n');
      },
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
