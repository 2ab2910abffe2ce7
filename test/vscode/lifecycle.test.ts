/**
 * Lifetimes in a real VS Code (code-server + Chromium), with the smoke agent: with no agent, Stop and Cancel are
 * not offered; a command run through the terminal service grows in its card, shows in a VS Code terminal on
 * demand and that terminal goes with the release; an agent that crashes mid-turn leaves its running tool card failed with the reason (not spinning),
 * through the restart and the next turn, and its exit notice loses Restart once the agent runs again; a prompt sent while the agent cannot start waits in the queue (one
 * error notice, however many are sent) and goes out, in order, once Restart brings the agent up; a background
 * tab closed with × stays closed after a window reload, and the transcript of every restarted session comes back
 * whole; and ending the extension host (the reload) stops the agent gracefully — it sees its stdin close (or
 * SIGTERM), not only a bare SIGKILL — and no agent process is left, nor what each agent started with `setsid -f`
 * (also with `env -i` where the host may make cgroups; without, that one is the documented limit).
 * Screenshots: test-artifacts/lifecycle-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { processAlive } from '../../src/core/agentProcess';
import { cgroupsHere } from '../support/cgroups';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { runCommand, statusBarItem, withWorkbench } from './runner';

async function paletteOffers(page: Page, title: string): Promise<boolean> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`>${title}`);
  // The palette lists what matches (or, with no match, similar commands, or says there is none).
  const rows = page.locator('.quick-input-widget .monaco-list-row', { hasText: title });
  await page.locator('.quick-input-widget .monaco-list-row').first().or(page.getByText('No matching commands')).first().waitFor({ timeout: 15_000 });
  const found = (await rows.count()) > 0;
  await page.keyboard.press('Escape');
  return found;
}

const tool = (frame: Frame, status: string, title: string) => frame.locator(`.entry.tool.status-${status}`, { hasText: title });
const unfinished = (frame: Frame) => frame.locator('.entry.tool.status-in_progress, .entry.tool.status-pending');

/** A crash mid-turn: the running tool card ends failed, saying why, and stays so through the restart and the next turn. */
async function crashMidTool(frame: Frame, shot: (name: string) => Promise<string>): Promise<void> {
  await send(frame, 'crash: Run the build');
  await tool(frame, 'in_progress', 'Run the build')
    .or(tool(frame, 'failed', 'Run the build'))
    .first()
    .waitFor({ timeout: 30_000 });
  await waitText(frame, '.entry.notice.error', 'Agent exited', 30_000);
  const card = tool(frame, 'failed', 'Run the build');
  await card.waitFor({ timeout: 15_000 });
  assert.match((await card.textContent()) ?? '', /agent exited .*code 3/i, 'the card does not say why it failed');
  // Restarted after the backoff (1 s), then a whole turn: the card does not spin again.
  await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
  await send(frame, 'say: after the crash');
  await waitText(frame, '.msg.agent', 'Heard: after the crash', 30_000);
  await turnIdle(frame, 30_000);
  assert.equal(await unfinished(frame).count(), 0, 'a tool card still spins after the crash');
  assert.equal(await card.count(), 1);
  // The automatic restart did the exit notice's work: Show Log stays, Restart goes (a click would restart it again).
  const exited = frame.locator('.entry.notice.error', { hasText: 'Agent exited' });
  assert.equal(await exited.count(), 1);
  assert.equal(await exited.locator('[data-action="restart"]').count(), 0, 'the exit notice still offers Restart after the automatic restart');
  assert.equal(await exited.locator('[data-action="show-log"]').count(), 1);
  await shot('lifecycle-crash-tool-card');
}

/**
 * Prompts sent while the agent cannot start: each waits in the queue (the composer empties into it, never into
 * nothing), the failed start is said once, and Restart (once the agent can run) sends them in order.
 */
async function promptWhileBroken(page: Page, frame: Frame, broken: string, shot: (name: string) => Promise<string>): Promise<void> {
  fs.writeFileSync(broken, '');
  await runCommand(page, 'Atrium: Restart Agent');
  // Three failed starts within a minute open the breaker: the agent is in error and not started again.
  await frame.waitForFunction(() => /not started again/.test(document.querySelector('.conn')?.getAttribute('title') ?? ''), undefined, { timeout: 60_000 });
  const startFailed = frame.locator('.entry.notice.error', { hasText: 'not started again' });
  const queued = frame.locator('[data-testid="queued"]');
  for (const [i, text] of ['say: first while broken', 'say: second while broken'].entries()) {
    await send(frame, text);
    await queued.filter({ hasText: text }).waitFor({ timeout: 15_000 });
    assert.equal(await frame.locator('.composer textarea').inputValue(), '');
    // The start this send tried has failed again (one more crash counted) before the next look.
    await frame.waitForFunction((n) => new RegExp(`crashed ${n} times`).test(document.querySelector('.conn')?.getAttribute('title') ?? ''), 4 + i, { timeout: 30_000 });
    await startFailed.first().waitFor({ timeout: 15_000 });
  }
  assert.equal(await queued.count(), 2);
  assert.equal(await startFailed.count(), 1, 'the failed start is said more than once');
  assert.equal(await frame.locator('.msg.user', { hasText: 'while broken' }).count(), 0, 'a message shows as sent while nothing took it');
  await shot('lifecycle-prompt-while-broken');

  fs.rmSync(broken);
  await startFailed.locator('[data-action="restart"]').click();
  await waitText(frame, '.msg.agent', 'Heard: second while broken', 60_000);
  await turnIdle(frame, 30_000);
  const users = await frame.locator('.msg.user', { hasText: 'while broken' }).allTextContents();
  assert.deepEqual(
    users.map((u) => /(first|second) while broken/.exec(u)?.[1]),
    ['first', 'second'],
    `sent once each, in order: ${users.join(' | ')}`,
  );
  assert.equal(await queued.count(), 0);
  await shot('lifecycle-prompt-sent-after-restart');
}

/**
 * A command run through the terminal service (ACP `terminal/create`) for four seconds: the card shows its output
 * growing, then the exit code; "Show in Terminal" opens it in a VS Code terminal while it runs, and that terminal
 * goes when the agent releases it.
 */
async function liveTerminal(page: Page, frame: Frame, shot: (name: string) => Promise<unknown>): Promise<void> {
  await send(frame, 'ticker: 16');
  const block = frame.locator('.entry.tool .terminal-block').last();
  const output = block.locator('.term-out');
  const ticks = async () => ((await output.textContent().catch(() => '')) ?? '').match(/tick \d/g)?.length ?? 0;
  const early = await until(
    async () => {
      const n = await ticks();
      return n > 0 ? n : undefined;
    },
    { what: 'the first line of the command in its card', timeoutMs: 30_000, intervalMs: 50 },
  );
  assert.ok(early < 16, `the card showed the output only once the command had ended (${early} lines at first)`);
  await block.locator('[data-action="show-terminal"]').click();
  const vscodeTerminal = page.locator('.terminal-tabs-entry, .single-terminal-tab, .terminal-wrapper');
  await vscodeTerminal.first().waitFor({ timeout: 15_000 });
  // The shot once the terminal shows lines (its rows, where it draws them as text), before the command ends.
  await page
    .locator('.terminal-wrapper .xterm-rows', { hasText: 'tick' })
    .first()
    .waitFor({ timeout: 3_000 })
    .catch(() => undefined);
  await shot('lifecycle-live-terminal');
  await until(async () => (await ticks()) === 16, { what: 'all sixteen lines in the card', timeoutMs: 30_000, intervalMs: 100 });
  await block.locator('.term-status', { hasText: 'Exit code 0' }).waitFor({ timeout: 30_000 });
  await waitText(frame, '.msg.agent', /Ticker done: \{"exitCode":0/);
  await turnIdle(frame);
  await until(async () => (await page.locator('.terminal-wrapper').count()) === 0, { what: 'the VS Code terminal to go with the release', timeoutMs: 15_000 });
  assert.equal(await block.locator('[data-action="show-terminal"]').count(), 0, 'a released terminal is still offered');
}

test('Stop and Cancel need an agent; a crash fails its tool card; a prompt to a broken agent waits; a closed tab stays closed; the extension host stops its agent gracefully', {
  timeout: 420_000,
}, async () => {
  const { scratch, workspace } = scratchWorkspace('lifecycle');
  const logFile = path.join(scratch, 'lifecycle.log');
  const broken = path.join(scratch, 'broken');
  const agent = {
    name: 'smoke-agent',
    command: process.execPath,
    args: [path.join(repoRoot, 'out/test/vscode/fixtures/smokeAgent.js')],
    env: { SMOKE_LIFECYCLE_LOG: logFile, SMOKE_BROKEN: broken, SMOKE_STRAYS: scratch },
    // Unsandboxed: this checks how the host reaps an agent's process group by host pids (a sandboxed agent's strays
    // have pids of its namespace, which ends them with it) and the fixture logs outside the workspace.
    sandbox: 'off',
  };
  /** The strays every agent started left (`setsid-<agent pid>`, `setsid-env-i-<agent pid>`), with their pids. */
  const strays = () =>
    fs
      .readdirSync(scratch)
      .filter((n) => /^setsid(-env-i)?-\d+$/.test(n))
      .map((n) => ({ name: n, pid: Number(fs.readFileSync(path.join(scratch, n), 'utf8').trim()) }))
      .filter((s) => s.pid > 0);
  const lines = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean) : []);
  try {
    await withWorkbench({ workspace, userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name }, timeoutMs: 380_000 }, async (page, info) => {
      const shot = (name: string) => info.screenshot(name);
      const item = await statusBarItem(page, 'agentHost.status', 60_000);
      assert.equal(await paletteOffers(page, 'Atrium: Cancel the Running Turn'), false, 'Cancel is offered with no agent running');
      assert.equal(await paletteOffers(page, 'Atrium: Stop Agent'), false, 'Stop is offered with no agent running');

      await runCommand(page, 'Atrium: Start Agent');
      await until(() => lines().find((l) => l.startsWith('started')), { what: 'the agent to start', intervalMs: 200 });
      await until(async () => (await item.locator('.codicon-hubot').count()) > 0, { what: 'the status bar to say ready', intervalMs: 200 });
      assert.equal(await paletteOffers(page, 'Atrium: Stop Agent'), true, 'Stop is not offered with the agent running');
      await info.screenshot('lifecycle-agent-running');

      let frame = await openChat(page);
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      await liveTerminal(page, frame, shot);
      await crashMidTool(frame, shot);
      await promptWhileBroken(page, frame, broken, shot);

      // Two tabs: the first shown, the second closed with × — it must not come back with the reload.
      await runCommand(page, 'Atrium: New Chat Tab');
      await frame.locator('[data-testid="tab-t2"]').waitFor({ timeout: 15_000 });
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      await frame.locator('[data-testid="tab-t1"]').click();
      await waitText(frame, '.msg.agent', 'Heard: second while broken', 15_000);
      await frame.locator('[data-testid="tab-t2"]').hover(); // an inactive tab's × shows on hover
      await frame.locator('[data-testid="close-t2"]').click();
      await frame.waitForFunction(() => !document.querySelector('[data-testid="tab-t2"]'), undefined, { timeout: 15_000 });

      // Reloading the window ends its extension host (code-server has no "Restart Extension Host"): the
      // workbench tells the remote extension host to terminate, which deactivates the extension first.
      const running = lines()
        .filter((l) => l.startsWith('started '))
        .map((l) => Number(l.split(' ')[1]))
        .filter((pid) => processAlive(pid));
      assert.ok(running.length > 0, 'no agent runs before the reload');
      for (const pid of running) {
        await until(() => strays().filter((s) => s.name.endsWith(`-${pid}`)).length === 2, { what: `the strays of agent ${pid}`, intervalMs: 100 });
      }
      await runCommand(page, 'Developer: Reload Window');
      for (const pid of running) {
        await until(() => lines().some((l) => new RegExp(`^(stdin-closed|sigterm) ${pid}$`).test(l)), { what: `agent ${pid} to be asked to stop`, timeoutMs: 60_000, intervalMs: 200 });
        await until(() => !processAlive(pid), { what: `agent process ${pid} to be gone`, timeoutMs: 15_000, intervalMs: 200 });
      }
      // Nothing any agent left with setsid -f outlives it (env -i too, where the host may make cgroups).
      const cgroups = cgroupsHere(scratch);
      for (const stray of strays().filter((s) => cgroups || !s.name.startsWith('setsid-env-i'))) {
        await until(() => !processAlive(stray.pid), { what: `the stray ${stray.name} (pid ${stray.pid}) to be gone`, timeoutMs: 15_000, intervalMs: 200 });
      }

      await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
      frame = await openChat(page);
      await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
      await waitText(frame, '.msg.agent', 'Heard: second while broken', 15_000);
      // The whole transcript came back, each restarted session's part kept beside the others'.
      for (const answer of ['Heard: after the crash', 'Heard: first while broken', 'Heard: second while broken']) {
        assert.equal(await frame.locator('.msg.agent', { hasText: answer }).count(), 1, `"${answer}" is not in the transcript once after the reload`);
      }
      const tabs = await frame.locator('[role="tab"]').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.tab));
      assert.deepEqual(tabs, ['t1'], 'the closed tab came back after the reload');
      // The copy kept across the reload has the crashed card failed too.
      assert.equal(await tool(frame, 'failed', 'Run the build').count(), 1);
      assert.equal(await unfinished(frame).count(), 0, 'a tool card spins after the reload');
      await shot('lifecycle-after-reload');
    });
  } finally {
    for (const stray of fs.existsSync(scratch) ? strays() : []) if (processAlive(stray.pid)) process.kill(stray.pid, 'SIGKILL');
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
