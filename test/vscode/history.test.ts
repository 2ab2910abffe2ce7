/**
 * Session history in a real VS Code (code-server + Chromium) with real agents on the scripted model:
 * two opencode sessions from the chat, "Atrium: Session History…" lists both; opening the first
 * resumes it (Atrium's copy shown above the notice, its tab named after it) and the model sees only that
 * conversation; rename, export as Markdown (a clean suggested name, a notification saying where) and delete through the item buttons; and a pi-acp session opened from history is
 * loaded (the agent's replay is the transcript). The CLI shares the store: a session it started is listed and goes
 * on in the editor with its context, and an editor session goes on in the CLI with `--resume`. Screenshots in
 * test-artifacts/history-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { SessionStore } from '../../src/session/sessionStore';
import { runCli } from '../support/cli';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { runCommand, withWorkbench } from './runner';
import { quickPickLoaded } from './waits';

const answer = (marker: string, text: string) => `${marker}\nSCENARIO: answer ${JSON.stringify({ text })}`;

async function historyRows(page: Page): Promise<string[]> {
  await runCommand(page, 'Atrium: Session History');
  // Its rows (not the palette's) say who keeps each session.
  await quickPickLoaded(page, 'Atrium: Session History', /kept by the agent|Atrium copy only/);
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  return rows.evaluateAll((els) => els.map((r) => (r.querySelector('.label-name')?.textContent ?? '').trim()));
}

/** Clicks the item button `label` on the history row whose title contains `title`. */
async function rowButton(page: Page, title: string, label: string): Promise<void> {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
  await row.hover();
  await row.locator(`.action-label[aria-label="${label}"]`).click();
}

/** "New Chat Session", then the cleared transcript and a ready agent. */
async function newChat(page: Page, frame: Frame): Promise<void> {
  await runCommand(page, 'Atrium: New Chat Session');
  await frame.waitForFunction(() => document.querySelectorAll('.entries > .entry').length === 0, undefined, { timeout: 30_000 });
  await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
}

async function newSession(frame: Frame, marker: string, text: string): Promise<void> {
  await send(frame, answer(marker, text));
  await waitText(frame, '.msg.agent', text);
  await turnIdle(frame);
}

test('session history in the real VS Code: list, open (resume and load), rename, export, delete', { timeout: 600_000 }, async () => {
  const opencode = agentById('opencode')!;
  const pi = agentById('pi-acp')!;
  assert.ok(opencode.installed() && pi.installed(), 'opencode and pi-acp must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('history');
  const stateDir = path.join(scratch, 'state');
  const store = new SessionStore(stateDir);
  try {
    const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    const pa = await pi.prepare({ scratch: path.join(scratch, 'pi'), modelUrl: model.url, workspace });
    const agents = [
      { name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false },
      { name: 'pi', command: pa.command, args: pa.args, env: pa.env, inheritEnv: false },
    ];
    // A session the CLI starts in the same store (the editor's `agentHost.sessions.stateDir`), before the editor runs.
    const cfgFile = path.join(scratch, 'agents.json');
    fs.writeFileSync(cfgFile, JSON.stringify(agents));
    const cli = (...args: string[]) => runCli(['--config', cfgFile, '--agent', 'opencode', '--cwd', workspace, '--state-dir', stateDir, '--format', 'json', ...args], workspace);
    const fromCli = await cli(answer('HIST-CLI from the terminal', 'Cli noted.'));
    assert.equal(fromCli.code, 0, fromCli.stderr);
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'opencode', 'agentHost.sessions.stateDir': stateDir, 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 540_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        let frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await newSession(frame, 'HIST-ONE about the parser', 'One noted.');
        await newChat(page, frame);
        await newSession(frame, 'HIST-TWO about the lexer', 'Two noted.');
        const recorded = store.list();
        assert.deepEqual(
          recorded.map((r) => r.title),
          ['HIST-TWO about the lexer', 'HIST-ONE about the parser', 'HIST-CLI from the terminal'],
        );

        // The list: the three sessions of this folder (the CLI's too), newest first.
        const rows = await historyRows(page);
        assert.deepEqual(rows.slice(0, 3), ['HIST-TWO about the lexer', 'HIST-ONE about the parser', 'HIST-CLI from the terminal']);
        await info.screenshot('history-01-list');

        // The CLI's session continues in the editor with its context.
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'HIST-CLI' }).first().click();
        frame = await openChat(page);
        await waitText(frame, '.msg.agent', 'Cli noted.', 60_000);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const beforeCli = model.requests.length;
        await newSession(frame, 'HIST-CLI-AGAIN go on', 'Cli continued.');
        assert.ok(
          model.requests.slice(beforeCli).some((r) => JSON.stringify(r.body ?? null).includes('HIST-CLI from the terminal')),
          "the model's next request lacks the CLI's turn",
        );
        await historyRows(page);

        // Open the first: resumed; our copy shows above the notice; the model sees that conversation only.
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'HIST-ONE' }).first().click();
        frame = await openChat(page);
        await waitText(frame, '.entry.notice', 'Session resumed', 60_000);
        await waitText(frame, '.msg.agent', 'One noted.');
        // Its tab carries the session's title, not the agent's name.
        const tabTitle = () => frame.locator('[role="tab"][aria-selected="true"] .tab-title').textContent();
        await frame.locator('[role="tab"][aria-selected="true"] .tab-title', { hasText: 'HIST-ONE about the parser' }).waitFor({ timeout: 15_000 });
        assert.equal(await frame.locator('.msg', { hasText: 'Two noted.' }).count(), 0, 'the other session is still shown');
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const before = model.requests.length;
        await newSession(frame, 'HIST-ONE-AGAIN what was it about?', 'Back in one.');
        const bodies = model.requests.slice(before).map((r) => JSON.stringify(r.body ?? null));
        assert.ok(
          bodies.some((b) => b.includes('HIST-ONE about the parser') && b.includes('HIST-ONE-AGAIN')),
          'the model did not see the reopened conversation',
        );
        assert.ok(!bodies.some((b) => b.includes('HIST-TWO')), 'the model saw the other session');
        assert.equal(await tabTitle(), 'HIST-ONE about the parser', 'the next turn renamed the reopened tab');
        await info.screenshot('history-02-resumed');

        // And back: the editor's session goes on in the CLI (`--resume`), with its context.
        const one = store.list().find((r) => r.title === 'HIST-ONE about the parser');
        assert.ok(one, 'the reopened session is in the store');
        const beforeBack = model.requests.length;
        const back = await cli('--resume', one.sessionId, answer('HIST-BACK in the terminal', 'Back in the CLI.'));
        assert.equal(back.code, 0, back.stderr);
        assert.ok(
          model.requests.slice(beforeBack).some((r) => JSON.stringify(r.body ?? null).includes('HIST-ONE-AGAIN')),
          "the CLI's request lacks the editor's turn",
        );

        // Rename through the item button.
        await historyRows(page);
        await rowButton(page, 'HIST-ONE', 'Rename');
        const input = page.locator('.quick-input-widget input');
        await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Rename session' }).waitFor({ timeout: 15_000 });
        await input.fill('Parser work?');
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Parser work?' }).first().waitFor({ timeout: 15_000 });
        assert.equal(
          store
            .list()
            .find((r) => r.title === 'Parser work?')
            ?.firstPrompt?.startsWith('HIST-ONE'),
          true,
        );

        // Export: the save dialog (code-server's simple file dialog) suggests a clean name and takes a path.
        const exported = path.join(workspace, 'parser-work.md');
        await rowButton(page, 'Parser work?', 'Export as Markdown');
        // The save dialog reuses the quick input: it is ready once it has put its default path in (a .md file).
        const pathInput = page.locator('.quick-input-widget input');
        await until(async () => (await pathInput.inputValue()).endsWith('.md'), { what: 'the save dialog with its default path', timeoutMs: 15_000 });
        const suggested = await pathInput.inputValue();
        assert.ok(suggested.endsWith('/Parser-work.md'), `the suggested file name: ${suggested}`);
        await pathInput.fill(exported);
        await page.keyboard.press('Enter');
        const md = await until(() => fs.existsSync(exported) && fs.readFileSync(exported, 'utf8'), { what: 'the exported Markdown file', timeoutMs: 15_000, intervalMs: 200 });
        // It says where it wrote: a toast, or (toasts wait for the window's focus, which a headless run may lack) the center's item.
        const said = `exported to ${exported}`;
        const toast = page.locator('.notifications-toasts .notification-toast', { hasText: said });
        const toasted = await toast.waitFor({ timeout: 5000 }).then(
          () => true,
          () => false,
        );
        if (!toasted) {
          await runCommand(page, 'Notifications: Show Notifications');
          await page.locator('.notifications-center .notification-list-item', { hasText: said }).waitFor({ timeout: 15_000 });
        }
        await info.screenshot('history-05-exported');
        if (!toasted) await page.keyboard.press('Escape');
        await historyRows(page);
        assert.match(md, /^# Parser work\?\n/);
        assert.match(md, /## User\n\nHIST-ONE about the parser/);
        assert.match(md, /## Agent\n\nOne noted\./);
        assert.match(md, /HIST-ONE-AGAIN/);
        assert.doesNotMatch(md, /HIST-TWO/);

        // Delete the other one, after the modal.
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'HIST-TWO' }).first().waitFor({ timeout: 15_000 });
        await rowButton(page, 'HIST-TWO', 'Delete');
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ state: 'visible', timeout: 15_000 });
        await info.screenshot('history-03-delete');
        await dialog.locator('.dialog-buttons .monaco-button', { hasText: /^Delete$/ }).click();
        // The list comes back, showing the old rows until its items arrive (once): the new list is the one
        // with "Parser work" and without HIST-TWO. Its only other state is the old one, with HIST-TWO.
        const listed = () => page.locator('.quick-input-widget .monaco-list-row').evaluateAll((els) => els.map((r) => r.textContent ?? ''));
        let labels: string[] = [];
        await until(
          async () => {
            labels = await listed();
            return labels.some((l) => l.includes('Parser work')) && !labels.some((l) => l.includes('HIST-TWO'));
          },
          {
            what: () => `the list without HIST-TWO (it shows ${JSON.stringify(labels)})`,
            timeoutMs: 15_000,
          },
        );
        assert.equal(await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'HIST-TWO' }).count(), 0, 'still listed (the agent keeps it: it must be hidden)');
        assert.equal(
          store.list().some((r) => r.title.startsWith('HIST-TWO')),
          false,
          'still in the local index',
        );
        await page.keyboard.press('Escape');

        // pi-acp offers load only: a session opened from history is replayed by the agent.
        await frame.locator('[data-testid="agent"]').evaluate((el) => {
          (el as HTMLElement & { value: string }).value = 'pi';
          el.dispatchEvent(new Event('change', { bubbles: true }));
        });
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        // Switching agent keeps the transcript and draws a line naming the agent that answers from here on.
        await waitText(frame, '.entry.notice', 'Continued with pi', 30_000);
        assert.equal(await frame.locator('.msg.agent', { hasText: 'Back in one.' }).count(), 1, 'switching agent lost the transcript');
        await newChat(page, frame);
        await newSession(frame, 'HIST-PI remember the pier', 'Pier noted.');
        await newChat(page, frame);
        await historyRows(page);
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'HIST-PI' }).first().click();
        frame = await openChat(page);
        await waitText(frame, '.entry.notice', 'Session loaded', 90_000);
        await waitText(frame, '.msg.user', 'HIST-PI remember the pier');
        await waitText(frame, '.msg.agent', 'Pier noted.');
        await info.screenshot('history-04-loaded');
        assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'an error dialog is up');
        assert.equal(await page.locator('.notifications-toasts .notification-toast', { hasText: /error|failed/i }).count(), 0, 'an error notification is up');
      },
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
