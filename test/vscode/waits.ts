/// <reference lib="dom" />
/**
 * Waits on the workbench's observable state (instead of fixed sleeps): an element that stopped moving, a
 * webview frame that rendered, the editor ready for keys, the cursor on a line, a computed diff, a quick
 * pick that finished loading. Each fails with what it waited for (test/support/wait.ts).
 */
import type { Frame, Locator, Page } from 'playwright-core';
import { until } from '../support/wait';

/**
 * Waits until `target` is visible and still: its box the same across two animation frames and no (finite)
 * animation running in it — what a screenshot of it should show.
 */
export async function settled(target: Locator, what: string, timeoutMs = 15_000): Promise<void> {
  await target.waitFor({ state: 'visible', timeout: timeoutMs });
  await until(
    () =>
      target.evaluate(
        (el) =>
          new Promise<boolean>((resolve) => {
            const box = () => JSON.stringify(el.getBoundingClientRect());
            const before = box();
            requestAnimationFrame(() =>
              requestAnimationFrame(() => {
                const moving = el.getAnimations({ subtree: true }).some((a) => a.playState === 'running' && a.effect?.getComputedTiming().iterations !== Infinity);
                resolve(box() === before && !moving);
              }),
            );
          }),
      ),
    { what: `${what} to settle`, timeoutMs },
  );
}

/** The first frame (not the workbench's own) in which `predicate` holds, polled until one does. */
export async function frameWhere(page: Page, predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<Frame> {
  return until(
    async () => {
      // Every frame at once, each for at most 2 s: an evaluate on a frame that is being replaced waits for an
      // execution context that may never come (seen after opening a session from history: 30 s lost per open).
      const frames = page.frames().filter((f) => f !== page.mainFrame() && !f.isDetached());
      const hits = await Promise.all(frames.map((f) => Promise.race([f.evaluate(predicate).catch(() => false), new Promise<false>((r) => setTimeout(() => r(false), 2000).unref())])));
      return frames[hits.findIndex(Boolean)];
    },
    { what, timeoutMs, intervalMs: 200 },
  );
}

/**
 * Shows the Explorer in the side bar and waits until the chat view is really hidden: its webview (not
 * retained when hidden) is gone and the Explorer is the expanded container.
 */
export async function showExplorer(page: Page, chat: Frame): Promise<void> {
  await page.locator('.activitybar [aria-label^="Explorer"]').first().click();
  const explorer = page.locator('.activitybar .action-item[aria-expanded="true"]', { has: page.locator('[aria-label^="Explorer"]') });
  await until(async () => chat.isDetached() && (await explorer.count()) > 0, { what: 'the Explorer shown and the chat webview gone', timeoutMs: 15_000 });
}

/** The active editor has the focus and shows its text (it mounts a moment after its tab). */
export async function editorReady(page: Page, timeoutMs = 15_000): Promise<void> {
  await page.locator('.editor-group-container.active .monaco-editor.focused .view-line').first().waitFor({ state: 'visible', timeout: timeoutMs });
}

/** The status bar's cursor position says line `line` (the editor took the Go to Line / click). */
export async function cursorOnLine(page: Page, line: number, timeoutMs = 15_000): Promise<void> {
  await page.locator('.statusbar-item[id="status.editor.selection"]', { hasText: new RegExp(`^\\s*Ln ${line}, Col \\d+`) }).waitFor({ timeout: timeoutMs });
}

/** The active editor's cursor is inside `box` (where a click put it). */
export async function cursorWithin(page: Page, box: { x: number; y: number; width: number; height: number }, timeoutMs = 5_000): Promise<void> {
  const cursor = page.locator('.editor-group-container.active .monaco-editor.focused .cursors-layer .cursor').first();
  await until(
    () =>
      cursor.evaluate(
        (el, b) => {
          // The rectangle, not visibility: the cursor blinks.
          const r = el.getBoundingClientRect();
          const sameLine = Math.abs(r.y + r.height / 2 - (b.y + b.height / 2)) <= Math.max(r.height, b.height);
          return sameLine && r.x >= b.x - 1 && r.x <= b.x + b.width + 1;
        },
        box,
        { timeout: timeoutMs },
      ),
    { what: 'the cursor where the click was', timeoutMs },
  );
}

/** A diff editor whose diff is computed (its changes are marked), settled: ready for a screenshot. */
export async function diffShown(page: Page, timeoutMs = 15_000): Promise<void> {
  const diff = page.locator('.monaco-diff-editor', { has: page.locator('.line-insert, .line-delete, .char-insert, .char-delete') }).first();
  await diff.locator('.editor.modified .view-line').first().waitFor({ state: 'visible', timeout: timeoutMs });
  await settled(diff, 'the diff editor', timeoutMs);
}

/**
 * The quick pick titled `title` shows its own items: a row matching `row`. A new quick pick shows the rows
 * of the one before (here: the palette's) until its items arrive, and its busy bar only after 800 ms.
 */
export async function quickPickLoaded(page: Page, title: string | RegExp, row: string | RegExp, timeoutMs = 30_000): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'visible', timeout: timeoutMs });
  await widget.locator('.monaco-list-row', { hasText: row }).first().waitFor({ state: 'visible', timeout: timeoutMs });
}

/** The quick input's list has the row labelled `label` focused, so Enter picks it (typing filters asynchronously). */
export async function focusedRow(page: Page, label: string, timeoutMs = 10_000): Promise<void> {
  const exactly = new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  const name = page.locator('.label-name', { hasText: exactly });
  await page.locator('.quick-input-widget .monaco-list-row.focused', { has: name }).waitFor({ state: 'visible', timeout: timeoutMs });
}
