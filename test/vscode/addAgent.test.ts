/**
 * "Atrium: Add Agent…" in a real VS Code (code-server + Chromium): browse an ACP registry (a local
 * registry file with codex-acp 0.16.0 as an npx entry whose env points it at the scripted model), install it
 * pinned into the configured storage (a real `npm install`), find the entry in the user's settings (with the
 * codex preset's approval policy added), pick it, and run a real turn with it in the chat; then "Check Agent
 * Compatibility…" on it shows the report (real turns against the scripted model) as a Markdown preview.
 * The pi (ACP) preset: a pi-acp without pi says "command not found: pi" in the chat (not "sign in"), and a
 * sign-in whose login command fails keeps its terminal open with the command's output and exit code. (Add
 * Agent → pi (ACP) installing pi-acp with pi, both pinned, then a turn: the newcomer test walks it, after
 * `npm start`.) Screenshots: test-artifacts/add-agent-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ACP_LAUNCH, agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { hostileAgent, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, pick, send, turnIdle, waitText } from './chatUi';
import { agentEntryIn, answerModal, runCommand, withWorkbench } from './runner';

test('Add Agent… installs codex-acp from an ACP registry and the chat runs a turn with it', { timeout: 600_000 }, async () => {
  const codex = agentById('codex')!;
  assert.ok(codex.installed(), 'codex must be installed: scripts/setup-agents.sh (its npm cache makes the install offline)');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('addagent');
  const storage = path.join(scratch, 'storage');
  try {
    const spec = await codex.prepare({ scratch: path.join(scratch, 'codex'), modelUrl: model.url, workspace });
    // Only what points codex at the scripted model (CODEX_HOME and its key), as a registry entry's env.
    const env = { CODEX_HOME: spec.env.CODEX_HOME!, SCRIPTED_API_KEY: spec.env.SCRIPTED_API_KEY!, RUST_LOG: 'error' };
    const registry = path.join(scratch, 'registry.json');
    fs.writeFileSync(
      registry,
      JSON.stringify({
        version: '1.0.0',
        agents: [
          {
            id: 'codex-acp',
            name: 'Codex CLI',
            version: '0.16.0',
            description: "ACP adapter for OpenAI's coding assistant",
            license: 'Apache-2.0',
            distribution: { npx: { package: '@zed-industries/codex-acp@0.16.0', env } },
          },
        ],
        extensions: [],
      }),
    );
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.registry.url': registry, 'agentHost.install.storageDir': storage, 'agentHost.sessions.stateDir': path.join(scratch, 'state') },
        timeoutMs: 560_000,
      },
      async (page, info) => {
        await openChat(page); // the extension is up (its commands are in the palette)
        await runCommand(page, 'Atrium: Add Agent');
        const rows = page.locator('.quick-input-widget .monaco-list-row');
        await rows.filter({ hasText: 'OpenCode' }).first().waitFor({ timeout: 15_000 });
        const presets = await rows.evaluateAll((els) => els.map((r) => (r.querySelector('.label-name')?.textContent ?? '').trim()));
        assert.ok(presets.includes('OpenCode') && presets.includes('Codex'), `presets listed: ${presets.join(', ')}`);
        await page.locator('.quick-input-widget input').fill('Browse');
        await rows.filter({ hasText: 'Browse the ACP Registry' }).first().waitFor({ timeout: 10_000 });
        await page.keyboard.press('Enter');
        const entry = rows.filter({ hasText: 'Codex CLI' }).first();
        await entry.waitFor({ timeout: 30_000 });
        const title = (await page.locator('.quick-input-widget .quick-input-title').textContent()) ?? '';
        assert.match(title, /ACP Registry/);
        assert.match((await entry.textContent()) ?? '', /0\.16\.0.*Apache-2\.0.*npx/);
        await info.screenshot('add-agent-registry');
        await page.keyboard.press('Enter');
        // The install (npm, pinned) runs with its own progress; the entry lands in the user's settings.
        const added = await until(() => agentEntryIn(info.scratch, 'Codex CLI'), { what: 'the installed agent in agentHost.agents', timeoutMs: 300_000, intervalMs: 500 });
        assert.ok(fs.existsSync(path.join(storage, 'codex-acp', '0.16.0', 'install.json')), 'no install record in the storage');
        assert.ok(
          [added.command, ...added.args].some((x) => x.startsWith(path.join(storage, 'codex-acp', '0.16.0'))),
          `the entry does not run the installed copy: ${added.command} ${added.args.join(' ')}`,
        );
        assert.deepEqual(added.args.slice(-2), ['-c', 'approval_policy="untrusted"'], "the codex preset's approval policy was not added");
        assert.equal(added.preset, 'codex-acp');
        assert.equal(added.env.CODEX_HOME, env.CODEX_HOME);

        // The chat's agent picker lists it at once; pick it there and run a turn.
        const frame = await openChat(page);
        await frame.waitForFunction(() => [...document.querySelectorAll('[data-testid="agent"] vscode-option')].some((o) => o.getAttribute('value') === 'Codex CLI'), undefined, { timeout: 15_000 });
        await pick(frame, 'agent', 'Codex CLI');
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await send(frame, `SCENARIO: answer ${JSON.stringify({ text: 'Installed codex answers.' })}`);
        await waitText(frame, '.msg.agent', 'Installed codex answers.');
        await turnIdle(frame);

        // Check Agent Compatibility… on it: real turns against the scripted model, the report as a preview.
        await runCommand(page, 'Atrium: Check Agent Compatibility');
        await rows.filter({ hasText: 'Codex CLI' }).first().waitFor({ timeout: 15_000 });
        assert.match((await rows.filter({ hasText: 'Codex CLI' }).first().textContent()) ?? '', /scripted model/);
        await page.keyboard.press('Enter');
        const table = await until(
          async () => {
            for (const f of page.frames()) {
              const text = await f.evaluate(() => (document.querySelector('table') ? document.body.innerText : '')).catch(() => '');
              if (/Compatibility:/.test(text) && /permission\.asked/.test(text)) return text;
            }
            return '';
          },
          { what: 'the compatibility report', timeoutMs: 180_000, intervalMs: 1000 },
        );
        for (const id of ['initialize', 'session.new', 'prompt.turn', 'permission.asked', 'permission.reject', 'cancel', 'exit.sigterm']) assert.match(table, new RegExp(id.replace('.', '\\.')));
        assert.match(table, /permission\.asked\s+✅ verified/, "codex asks before writing (its preset's approval policy), verified on a real turn");
        await info.screenshot('compat-check');
      },
    );
  } finally {
    await model.close();
  }
});

/** The text of a notification containing `text`: its toast, or (toasts are not always raised in a headless window) the center's item. */
async function notification(page: Page, text: string): Promise<string> {
  const toast = page.locator('.notification-toast', { hasText: text }).first();
  if (
    await toast.waitFor({ timeout: 3000 }).then(
      () => true,
      () => false,
    )
  )
    return (await toast.textContent()) ?? '';
  await runCommand(page, 'Notifications: Show Notifications');
  const item = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  await item.waitFor({ timeout: 15_000 });
  const said = (await item.textContent()) ?? '';
  await runCommand(page, 'Notifications: Hide Notifications');
  return said;
}

/** What the terminal panel shows, through its own Select All and Copy. */
async function terminalText(page: Page): Promise<string> {
  await page.evaluate(() => navigator.clipboard.writeText('CLIPBOARD-BEFORE'));
  await page.locator('.terminal-wrapper').last().click();
  await runCommand(page, 'Terminal: Select All');
  await page.keyboard.press('Control+Shift+C');
  return until(async () => (await page.evaluate(() => navigator.clipboard.readText())).replace(/^CLIPBOARD-BEFORE$/, ''), { what: 'the terminal text on the clipboard', intervalMs: 200 });
}

test('pi (ACP): without pi the chat says "command not found: pi"; a failed sign-in keeps its terminal', { timeout: 600_000 }, async () => {
  const piAcp = agentById('pi-acp')!;
  assert.ok(piAcp.installed(), 'pi-acp must be installed: scripts/setup-agents.sh pi-acp (its npm cache makes the install offline)');
  const { scratch, workspace } = scratchWorkspace('addagent-pi');
  const launch = ACP_LAUNCH['pi-acp']!();
  // pi-acp from .tools with neither pi on PATH nor PI_ACP_PI_COMMAND, and no pi sign-in: what the issue saw.
  const withoutPi = { name: 'pi-acp without pi', command: launch.command, args: launch.args, env: { PI_CODING_AGENT_DIR: path.join(scratch, 'no-pi-sign-in') }, preset: 'pi-acp' };
  // An agent that asks to sign in, whose terminal login fails (no $HOSTILE_AUTH_FILE) saying why on stderr.
  const login = { name: 'hostile login', command: process.execPath, args: [hostileAgent, 'auth'], env: {} };
  const pathWithoutPi = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => d && !fs.existsSync(path.join(d, 'pi')) && !fs.existsSync(path.join(d, 'pi-acp')))
    .join(path.delimiter);
  try {
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [withoutPi, login],
          'agentHost.defaultAgent': withoutPi.name,
          'agentHost.sessions.stateDir': path.join(scratch, 'state'),
        },
        env: { PATH: pathWithoutPi },
        timeoutMs: 560_000,
      },
      async (page, info) => {
        await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(info.url).origin });
        // 1. pi-acp without pi: the chat names what is missing and what installs it; nothing asks to sign in.
        const frame = await openChat(page);
        await send(frame, 'hello');
        const notice = frame.locator('.entry.notice.error', { hasText: 'command not found: pi' }).first();
        await notice.waitFor({ timeout: 60_000 });
        const said = (await notice.textContent()) ?? '';
        assert.match(said, /"pi-acp without pi" cannot start: command not found: pi/);
        assert.match(said, /pi-acp runs pi \(@mariozechner\/pi-coding-agent 0\.73\.1\).*Add Agent…" → pi \(ACP\) installs both, pinned/s);
        assert.doesNotMatch(said, /sign in/i);
        assert.equal(await page.locator('.notification-toast', { hasText: /sign in/i }).count(), 0, 'a notification asks to sign in');
        await info.screenshot('add-agent-pi-missing');

        // 2. A sign-in whose login command fails: its terminal stays open with the output and the exit code.
        await pick(frame, 'agent', 'hostile login');
        await frame.waitForFunction(() => /sign in/i.test(document.querySelector('.conn')?.getAttribute('title') ?? ''), undefined, { timeout: 60_000 });
        await runCommand(page, 'Atrium: Sign In');
        const method = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Log in in a terminal' }).first();
        await method.waitFor({ timeout: 30_000 });
        await method.click();
        assert.match(await answerModal(page, 'Run in a Terminal'), /hostileAgent\.js auth login/);
        const shown = await until(
          async () => {
            const text = await terminalText(page);
            return /\[exit code/.test(text) && text;
          },
          { what: 'the failed login in its terminal', timeoutMs: 30_000, intervalMs: 500 },
        );
        assert.match(shown, /hostile login: cannot sign in \(HOSTILE_AUTH_FILE is not set\)/);
        assert.match(shown, /\[exit code 1\] The sign-in command failed; its output is above\. Press Enter to close this terminal\./);
        await info.screenshot('add-agent-sign-in-failed-terminal');
        assert.match(
          await notification(page, 'exited with code 1'),
          /Signing in to hostile login failed: the login command exited with code 1\. Its output stays in the terminal "Sign in: Log in in a terminal"/,
        );
        // Still open after a while: Enter closes it.
        await page.locator('.terminal-wrapper').last().click();
        await page.keyboard.press('Enter');
        await page.locator('.terminal-wrapper').waitFor({ state: 'detached', timeout: 15_000 });
      },
    );
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
