/**
 * First run in a real VS Code (code-server + Chromium) on a fresh profile, with opencode on the scripted
 * model configured (as `npm start` does):
 * 1. The empty chat shows the walkthrough's steps as links: "Choose an agent" runs the agent picker (through the
 *    page's allow-listed runCommand request) and an agent is picked, "Ask your first question" puts the focus in
 *    the composer, and the first message sent (a first turn) hides the steps — all before the walkthrough ever
 *    opened (VS Code hears a walkthrough's completion events only once its page has opened).
 * 2. "Atrium: Get Started" from the palette then opens the walkthrough "Get started with Atrium" with
 *    its four steps, "Choose or install an agent" and "Ask your first question" ticked, the other two not; the
 *    first step's buttons and picture show. Get Started in the view title's "…" menu opens it too (the title
 *    has one "+"), and so does "Open the walkthrough" in a new, empty chat tab.
 * Screenshots: test-artifacts/walkthrough-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { runCommand, statusBarItem, withWorkbench } from './runner';
import { focusedRow, quickPickLoaded, settled } from './waits';

const STEPS = ['Choose or install an agent', 'Sign in', 'Ask your first question', 'Try a command on selected code'];

/** The walkthrough page of our extension, shown in the editor area. */
function walkthroughPage(page: Page) {
  return page.locator('.gettingStartedContainer', { has: page.locator('.gettingStartedSlideDetails', { hasText: 'Get started with Atrium' }) });
}

/** Closes the walkthrough's editor tab (its close button: the palette may lose its keys to a webview). */
async function closeWalkthrough(page: Page): Promise<void> {
  await page.locator('.tabs-container .tab', { hasText: 'Welcome' }).locator('.tab-actions .action-label').click();
  await walkthroughPage(page).waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The steps' ids in package.json, in order, and which of them this test's work ticks before the page first opens. */
const STEP_IDS = ['chooseAgent', 'signIn', 'ask', 'selection'];
const DONE_BEFORE_OPENING = { chooseAgent: 'true', signIn: 'false', ask: 'true', selection: 'false' };

/** A step's tick on the walkthrough page (a checkbox, `aria-checked` when done). */
function stepCheckbox(page: Page, id: string) {
  return walkthroughPage(page).locator(`[data-done-step-id="agent-host.agent-host#getStarted#${id}"]`).first();
}

/** The step titles the walkthrough page lists, in order. */
async function stepTitles(page: Page): Promise<string[]> {
  const titles = await walkthroughPage(page).locator('.gettingStartedSlideDetails .getting-started-step .step-title').allTextContents();
  return titles.map((t) => t.trim());
}

test('first run: the empty chat offers the steps until the first message; the walkthrough opened afterwards shows the agent picked and the first turn ticked', { timeout: 300_000 }, async () => {
  const agent = agentById('opencode');
  assert.ok(agent, 'no opencode in the catalog');
  assert.ok(agent.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
  for (const f of ['dist/extension.js', 'dist/webview/chat.js']) assert.ok(fs.existsSync(path.join(repoRoot, f)), `${f} is missing: npm run build`);
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('walkthrough');
  const step = (s: string) => console.log(`[walkthrough] ${s}`);
  let ok = false;
  try {
    const spec = await agent.prepare({ scratch: path.join(scratch, 'agent'), modelUrl: model.url, workspace });
    const config = { name: 'opencode (demo model)', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': [config], 'agentHost.defaultAgent': config.name, 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 240_000,
        viewport: { width: 1600, height: 900 },
      },
      async (page, info) => {
        // 1. The empty chat (the walkthrough never opened yet): the steps as links.
        await statusBarItem(page, 'agentHost.status', 60_000);
        const frame = await openChat(page);
        const steps = frame.locator('[data-testid="first-steps"]');
        await steps.waitFor({ state: 'visible', timeout: 15_000 });
        const links = (await steps.locator('button').allTextContents()).map((t) => t.trim());
        assert.deepEqual(links, ['Choose an agent', 'Add Agent…', 'Sign in', 'Ask your first question', 'Open the walkthrough']);
        const hint = ((await steps.locator('.step-hint').textContent()) ?? '').trim();
        assert.match(hint, /right-click → Agent → Explain/);
        assert.equal(await steps.getAttribute('aria-labelledby'), 'first-steps-title');
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await settled(steps, 'the first steps');
        await info.screenshot('walkthrough-1-empty-chat');
        step(`empty chat: ${JSON.stringify(links)} and "${hint}"`);

        // "Choose an agent" runs the picker (the page asks; the extension runs allow-listed commands only): an agent picked.
        await steps.locator('[data-testid="step-choose-agent"]').click();
        await quickPickLoaded(page, 'Atrium: choose the agent', 'opencode (demo model)');
        await focusedRow(page, 'opencode (demo model)');
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
        step('"Choose an agent" opened the agent picker; the agent picked');

        // "Ask your first question" puts the focus in the composer.
        await steps.locator('[data-testid="step-ask"]').click();
        await frame.waitForFunction(() => document.activeElement === document.querySelector('.composer textarea') && document.hasFocus(), undefined, { timeout: 10_000 });
        step('"Ask your first question" focused the composer');

        // The first message (a first turn) hides the steps.
        await send(frame, 'What does this workspace hold?\nSCENARIO: answer {"text": "A sample workspace: textUtils.ts and stats.py."}');
        await frame.locator('.msg.user').first().waitFor({ timeout: 15_000 });
        assert.equal(await steps.isVisible(), false, 'the first steps still show with a message in the chat');
        await waitText(frame, '.msg.agent', 'A sample workspace');
        await turnIdle(frame);
        assert.equal(await frame.locator('[data-testid="first-steps"]:visible').count(), 0);
        await settled(frame.locator('.transcript'), 'the transcript');
        await info.screenshot('walkthrough-2-first-message');
        step('the first message hid the steps; the agent answered');

        // 2. Now the walkthrough, from the palette: the work done while it was closed shows ticked.
        await runCommand(page, 'Atrium: Get Started');
        const walkthrough = walkthroughPage(page);
        await walkthrough.waitFor({ state: 'visible', timeout: 30_000 });
        let titles: string[] = [];
        await until(
          async () => {
            titles = await stepTitles(page);
            return JSON.stringify(titles) === JSON.stringify(STEPS);
          },
          {
            what: () => `the walkthrough's steps ${JSON.stringify(STEPS)} (shown: ${JSON.stringify(titles)})`,
            timeoutMs: 15_000,
          },
        );
        const ticked = async () => Object.fromEntries(await Promise.all(STEP_IDS.map(async (id) => [id, await stepCheckbox(page, id).getAttribute('aria-checked')] as const)));
        let shown: Record<string, string | null> = {};
        await until(
          async () => {
            shown = await ticked();
            return JSON.stringify(shown) === JSON.stringify(DONE_BEFORE_OPENING);
          },
          { what: () => `the steps ticked ${JSON.stringify(DONE_BEFORE_OPENING)} (shown: ${JSON.stringify(shown)})`, timeoutMs: 15_000 },
        );
        // The first step's buttons and picture (an SVG in its own frame, not empty).
        await walkthrough.locator('.getting-started-step .step-title', { hasText: STEPS[0]! }).click();
        const first = walkthrough.locator('.getting-started-step.expanded');
        await first.locator('.step-title', { hasText: STEPS[0]! }).waitFor({ timeout: 10_000 });
        const buttons = (await first.locator('.monaco-button').allTextContents()).map((b) => b.trim());
        assert.deepEqual(buttons, ['Select Agent…', 'Add Agent…'], "the first step's buttons");
        const media = walkthrough.locator('.getting-started-media');
        await settled(media, "the first step's picture");
        const box = await media.boundingBox();
        assert.ok(box && box.width > 100 && box.height > 60, `the first step's picture is ${JSON.stringify(box)}`);
        await settled(walkthrough, 'the walkthrough page');
        await info.screenshot('walkthrough-3-get-started-ticked');
        step(`Get Started: the walkthrough with steps ${JSON.stringify(titles)}, ticked ${JSON.stringify(shown)}; first step's buttons ${JSON.stringify(buttons)}`);
        await closeWalkthrough(page);

        // The view's title: one "+" (New Chat Tab); Get Started is in its "…" menu.
        const titleActions = page.locator('.part.sidebar .title-actions');
        assert.equal(await titleActions.locator('.action-label.codicon-add').count(), 1, 'the chat view title has more than one "+"');
        await titleActions.locator('.action-label.codicon-toolbar-more').click();
        await page.getByRole('menuitem', { name: 'Get Started' }).click();
        await walkthrough.waitFor({ state: 'visible', timeout: 30_000 });
        step('the view title has one "+"; its "…" menu\'s Get Started opened the walkthrough');
        await closeWalkthrough(page);

        // A second chat tab is empty but shows no first steps: they belong to the first tab...
        await titleActions.locator('.action-label.codicon-add').click();
        await frame.locator('[data-testid="tab-t2"]').waitFor({ timeout: 15_000 });
        await frame.locator('.empty-icon').waitFor({ state: 'visible', timeout: 15_000 });
        assert.equal(await frame.locator('[data-testid="first-steps"]:visible').count(), 0, 'the first steps show in a second tab');
        // ...until it is the only one: with the first tab closed, its "Open the walkthrough" opens the page.
        await frame.locator('[data-testid="tab-t1"]').hover();
        await frame.locator('[data-testid="close-t1"]').click();
        const fresh = frame.locator('[data-testid="first-steps"]:visible');
        await fresh.waitFor({ state: 'visible', timeout: 15_000 });
        await fresh.locator('[data-testid="step-walkthrough"]').click();
        await walkthrough.waitFor({ state: 'visible', timeout: 30_000 });
        step('a second tab shows no first steps; once it is the only tab, its "Open the walkthrough" opened the page');
        await closeWalkthrough(page);
      },
    );
    ok = true;
  } finally {
    await model.close();
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
});
