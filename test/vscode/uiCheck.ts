/**
 * A person's view of the extension, driven with Playwright in code-server's workbench: the status bar item
 * shows the configured agent; "Agent Host: Ask the Agent…" from the command palette runs a turn; the real
 * permission dialog is answered by clicking its button; a file appears in the workspace and the status bar
 * returns to "ready". Screenshots of each step go to `screenshotDir`.
 */
import { changedSince, snapshot } from '../support/fileSnapshot';
import { askAgent, statusBarItem, withWorkbench, type WorkbenchOptions } from './runner';

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
    await page.waitForTimeout(500); // icons and layout settle
    shots.push(await info.screenshot('workbench-status-bar'));
    if (opts.statusBarOnly) return;

    const before = snapshot(opts.workspace);
    await askAgent(page, opts.prompt);

    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 90_000 }).catch(async (error) => {
      await info.screenshot('ui-no-permission-dialog').catch(() => undefined);
      throw new Error(`no permission dialog appeared: ${(error as Error).message.split('\n')[0]}`);
    });
    await page.waitForTimeout(300);
    shots.push(await info.screenshot('workbench-permission-dialog'));
    const buttons = dialog.locator('.dialog-buttons .monaco-button');
    const labels = (await buttons.allTextContents()).map((l) => l.trim());
    const allow = opts.allowButtons ?? [/^allow once$/i, /^allow$/i, /allow/i, /^yes$/i];
    const index = allow.map((re) => labels.findIndex((l) => re.test(l))).find((i) => i >= 0);
    if (index === undefined) throw new Error(`no allow button in the permission dialog: [${labels.join(' | ')}]`);
    console.log(`[ui] permission dialog [${labels.join(' | ')}] → ${labels[index]}`);
    await buttons.nth(index).click();

    // The turn ends: a file changed in the workspace and the status bar is back to "ready" (hubot icon).
    const deadline = Date.now() + 90_000;
    let changed: string[] = [];
    while (Date.now() < deadline) {
      changed = changedSince(before, opts.workspace);
      const ready = await item.locator('.codicon-hubot').count();
      if (changed.length && ready) break;
      await page.waitForTimeout(250);
    }
    await page.waitForTimeout(500);
    shots.push(await info.screenshot('workbench-after-turn'));
    if (!changed.length) throw new Error('the turn wrote no file into the workspace');
    if (!(await item.locator('.codicon-hubot').count())) {
      throw new Error(`status bar did not return to ready: "${await item.getAttribute('aria-label')}"`);
    }
    console.log(`[ui] files written through the UI turn: ${changed.join(', ')}`);
  });
  return shots;
}
