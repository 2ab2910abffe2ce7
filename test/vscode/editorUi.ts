/**
 * Editor actions a person takes in code-server's workbench, shared by the selection and newcomer tests: the
 * command palette (retried when it closes under the typing), quick open of a file, selecting whole lines,
 * the editor context menu's "Agent" submenu, Accept on a proposal's diff, and waiting for a file's text.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { until } from '../support/wait';
import { cursorOnLine, diffShown, editorReady } from './waits';

/** What takes the screenshots (a workbench's info, or the newcomer test's page). */
export interface Shooter {
  screenshot(name: string): Promise<string>;
}

export async function palette(page: Page, text: string): Promise<void> {
  // The palette can close under the typing (the workbench takes focus back once, e.g. as an agent starts):
  // open it again, a few times, before giving up.
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    const typed = await input
      .waitFor({ state: 'visible', timeout: 15_000 })
      .then(() => input.fill(text, { timeout: 5_000 }))
      .then(
        () => true,
        (error: Error) => {
          if (attempt >= 3) throw error;
          return false;
        },
      );
    if (typed) return;
    await page.keyboard.press('Escape');
  }
}

export async function openFile(page: Page, rel: string): Promise<void> {
  // Quick open sometimes misses the first keystrokes right after an editor opened: try again.
  // The row whose name is exactly the file's: Enter would take whichever row is focused while the list is
  // still settling (src/format.ts once opened src/format.test.ts).
  const name = path.basename(rel);
  const exact = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const row = page
    .locator('.quick-input-widget .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exact }) })
    .first();
  // The widget can also close between finding the row and clicking it (focus taken by a page update): the
  // row stays in the DOM, hidden. Both cases open quick open again.
  for (let attempt = 0; ; attempt++) {
    await palette(page, rel);
    const clicked = await row
      .waitFor({ timeout: 5_000 })
      .then(() => row.click({ timeout: 5_000 }).then(() => true))
      .catch((error: unknown) => {
        if (attempt >= 3) throw error;
        return false;
      });
    if (clicked) break;
    await page.keyboard.press('Escape');
  }
  await page.locator('.tab.active', { hasText: path.basename(rel) }).waitFor({ timeout: 15_000 });
  await editorReady(page);
}

/** Puts the cursor on `line` (1-based) and selects `count` whole lines (count 0: no selection). */
export async function selectLines(page: Page, line: number, count: number): Promise<void> {
  await palette(page, `:${line}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 });
  await cursorOnLine(page, line);
  await editorReady(page);
  await page.keyboard.press('Home');
  for (let i = 0; i < count; i++) await page.keyboard.press('Shift+ArrowDown');
}

/** Right-click on the editor line showing `lineText`, "Agent" submenu, then `item`. */
export async function agentMenu(page: Page, info: Shooter, lineText: string, item: string | RegExp, shot?: string): Promise<void> {
  const line = page.locator('.editor-group-container.active .monaco-editor .view-line', { hasText: lineText }).first();
  // Lines move as the editor settles (a CodeLens arrives, decorations) and no event says it is done: take the
  // line's box once it stayed put for one poll interval (400 ms).
  let previous: { x: number; y: number; height: number } | null = null;
  const box = await until(
    async () => {
      const current = await line.boundingBox({ timeout: 5_000 }).catch(() => null);
      const still = previous && current && previous.y === current.y ? current : null;
      previous = current;
      return still;
    },
    { what: `the line "${lineText}" to stay put`, timeoutMs: 15_000, intervalMs: 400 },
  );
  await page.mouse.click(box.x + 40, box.y + box.height / 2, { button: 'right' });
  const agent = page.locator('.monaco-menu .action-item', { has: page.locator('.action-label', { hasText: /^Agent$/ }) }).first();
  await agent.waitFor({ timeout: 15_000 });
  await agent.click();
  // In the Agent submenu: VS Code's own menu has an Explain and a Fix too when its AI features are on.
  const entry = page.locator('.monaco-submenu .action-item .action-label', { hasText: item }).first();
  await entry.waitFor({ timeout: 15_000 });
  if (shot) await info.screenshot(shot);
  // A click that lands while the submenu is still opening is swallowed: the item stays highlighted. Hovered,
  // the item is focused once the submenu takes input; clicked, the menu closes.
  await entry.hover();
  await until(() => entry.evaluate((el) => el.closest('.action-item')?.classList.contains('focused')), { what: `the menu item ${String(item)} focused`, timeoutMs: 5_000 });
  for (let attempt = 0; attempt < 3 && (await entry.isVisible()); attempt++) {
    await entry.click({ timeout: 5_000 }).catch(() => undefined);
    await entry.waitFor({ state: 'hidden', timeout: 2_000 }).catch(() => undefined);
  }
  assert.equal(await entry.isVisible(), false, `the menu item ${String(item)} did not run`);
}

/**
 * Waits for the proposal's diff editor, screenshots it, clicks Accept in the editor title; then no notification
 * about the proposal stays (the task's progress said where to answer, and closes with the task).
 */
export async function acceptDiff(page: Page, info: Shooter, shot: string): Promise<void> {
  const accept = page.locator('.editor-actions .action-label[aria-label^="Accept the Proposal"]').first();
  await accept.waitFor({ timeout: 90_000 });
  await diffShown(page);
  await info.screenshot(shot);
  await accept.click();
  await accept.waitFor({ state: 'detached', timeout: 15_000 });
  const about = page.locator('.notifications-toasts .notification-toast', { hasText: /Proposed|Accept or Reject/ });
  await until(async () => (await about.count()) === 0, { what: () => "the proposal's notifications to close after Accept", timeoutMs: 30_000 });
}

export async function fileWith(file: string, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  let text = '';
  await until(
    () => {
      text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
      return pattern.test(text);
    },
    {
      what: () => `${path.basename(file)} to match ${pattern}:\n${text}`,
      timeoutMs,
      intervalMs: 200,
    },
  );
  return text;
}
