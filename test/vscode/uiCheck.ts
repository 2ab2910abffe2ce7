/// <reference lib="dom" />
/**
 * A person's view of the extension, driven with Playwright in code-server's workbench: the status bar item
 * shows the configured agent; "Atrium: Ask the Agent…" from the command palette runs a turn; the real
 * permission dialog is answered by clicking its button; a file appears in the workspace and the status bar
 * returns to "ready". Screenshots of each step go to `screenshotDir`.
 */
import { changedSince, snapshot } from '../support/fileSnapshot';
import { until } from '../support/wait';
import { askAgent, statusBarItem, withWorkbench, type WorkbenchOptions } from './runner';
import { settled } from './waits';

export interface UiCheckOptions extends WorkbenchOptions {
  agentName: string;
  /** The prompt typed into the input box. */
  prompt: string;
  /** Button labels of the permission dialog to click, tried in order. */
  allowButtons?: RegExp[];
  /** Skip the turn: only the status bar and its screenshot. */
  statusBarOnly?: boolean;
}

/** Returns the screenshots taken, in order. Throws with a description of what was not seen. */
export async function runUiCheck(opts: UiCheckOptions): Promise<string[]> {
  const shots: string[] = [];
  await withWorkbench(opts, async (page, info) => {
    const item = await statusBarItem(page, 'agentHost.status', 60_000);
    const text = ((await item.textContent()) ?? '').trim();
    if (!text.includes(opts.agentName)) throw new Error(`status bar item shows "${text}", not the agent "${opts.agentName}"`);
    // Its icon is a glyph of the codicon font: loaded, and the item in place.
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    await settled(item, 'the status bar item');
    shots.push(await info.screenshot('workbench-status-bar'));
    if (opts.statusBarOnly) return;

    const before = snapshot(opts.workspace);
    await askAgent(page, opts.prompt);

    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 90_000 }).catch(async (error) => {
      await info.screenshot('ui-no-permission-dialog').catch(() => undefined);
      throw new Error(`no permission dialog appeared: ${(error as Error).message.split('\n')[0]}`);
    });
    await settled(dialog, 'the permission dialog');
    shots.push(await info.screenshot('workbench-permission-dialog'));
    const buttons = dialog.locator('.dialog-buttons .monaco-button');
    const labels = (await buttons.allTextContents()).map((l) => l.trim());
    const allow = opts.allowButtons ?? [/^allow once$/i, /^allow$/i, /allow/i, /^yes$/i];
    const index = allow.map((re) => labels.findIndex((l) => re.test(l))).find((i) => i >= 0);
    if (index === undefined) throw new Error(`no allow button in the permission dialog: [${labels.join(' | ')}]`);
    console.log(`[ui] permission dialog [${labels.join(' | ')}] → ${labels[index]}`);
    await buttons.nth(index).click();

    // The turn ends: a file changed in the workspace and the status bar is back to "ready" (hubot icon).
    let changed: string[] = [];
    let label: string | null = null;
    await until(
      async () => {
        changed = changedSince(before, opts.workspace);
        label = await item.getAttribute('aria-label');
        return changed.length > 0 && (await item.locator('.codicon-hubot').count()) > 0;
      },
      {
        what: () => (changed.length ? `the status bar back to ready (it says "${label}")` : 'a file written into the workspace by the turn'),
        timeoutMs: 90_000,
        intervalMs: 250,
      },
    );
    await settled(item, 'the status bar item');
    shots.push(await info.screenshot('workbench-after-turn'));
    console.log(`[ui] files written through the UI turn: ${changed.join(', ')}`);
  });
  return shots;
}
