/**
 * What the UI checks do in a workbench withWorkbench() opened (test/vscode/runner.ts re-exports these).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';

/** Waits until the status bar shows the extension's item `id` (e.g. `agentHost.status`); returns it. */
export async function statusBarItem(page: Page, id: string, timeoutMs = 30_000) {
  // VS Code renders extension items as `<div id="<publisher>.<name>.<id>" class="statusbar-item">`.
  const item = page.locator(`.statusbar-item[id$=".${id}"], .statusbar-item[id="${id}"]`).first();
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  return item;
}

/** The Atrium output channel's log file(s) under a workbench's scratch (user-data-dir/logs), as text. */
export function agentHostLog(scratch: string): string {
  let text = '';
  for (const e of fs.readdirSync(scratch, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('Atrium.log')) text += fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
  }
  return text;
}

/** An `agentHost.agents` entry as VS Code wrote it to a settings.json under `dir`. */
export interface AgentEntry {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  preset?: string;
}

/** The `agentHost.agents` entry named `name` in any settings.json under `dir` (only files that mention it are parsed). */
export function agentEntryIn(dir: string, name: string): AgentEntry | undefined {
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name !== 'settings.json') continue;
    const body = fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
    if (!body.includes(name)) continue;
    const found = ((JSON.parse(body) as Record<string, unknown>)['agentHost.agents'] as AgentEntry[] | undefined)?.find((a) => a?.name === name);
    if (found) return found;
  }
  return undefined;
}

/** Runs a command from the palette by its title (e.g. "Atrium: Ask the Agent"). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/**
 * "Developer: Reload Window", then waits for the new document: the old workbench stays in the page until the
 * reload navigates, so waiting for `.monaco-workbench` alone can find the old one (and its frames then detach).
 */
export async function reloadWindow(page: Page): Promise<void> {
  await Promise.all([page.waitForEvent('domcontentloaded', { timeout: 60_000 }), runCommand(page, 'Developer: Reload Window')]);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
}

/**
 * "Atrium: Ask the Agent…" with `prompt`. Waits for the input box's own prompt line before typing:
 * the palette's input is the same element, so filling it too early would type into the palette.
 */
export async function askAgent(page: Page, prompt: string): Promise<void> {
  await runCommand(page, 'Atrium: Ask the Agent');
  await page.locator('.quick-input-widget .quick-input-message', { hasText: /Ask the agent/i }).waitFor({ timeout: 30_000 });
  await page.locator('.quick-input-widget input').fill(prompt);
  await page.keyboard.press('Enter');
}

/** The modal dialog's message and detail, then a click on `button`. */
export async function answerModal(page: Page, button: string): Promise<string> {
  const box = page.locator('.monaco-dialog-box');
  await box.waitFor({ state: 'visible', timeout: 30_000 });
  const text = ((await box.textContent()) ?? '').trim();
  await box
    .locator('.dialog-buttons .monaco-button', { hasText: new RegExp(`^${button}$`) })
    .first()
    .click();
  await box.waitFor({ state: 'hidden', timeout: 10_000 });
  return text;
}
