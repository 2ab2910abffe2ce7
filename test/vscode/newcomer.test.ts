/**
 * The first hour, as a newcomer lives it (issues 16 and 36): `npm start` itself (scripts/start.sh, with its
 * state in a scratch folder) and a fresh browser on its URL. The chat opens by itself on the first start; a
 * greeting is answered; a file is written through the permission dialog (the chat's card says to answer
 * there); a second chat tab is closed in the background; Explain, Write Docstring and Generate Unit Tests run
 * on the sample's TypeScript; `npm start` is restarted: the closed tab stays closed, and an agent added in the
 * User settings and one in the Remote settings are both in the picker (each named with its source, the demo
 * entries kept); an agent that crashes mid-turn leaves its tool card failed (not spinning), one exit notice
 * and the transcript intact, and once it cannot start again a message sent to it waits in the queue (the
 * failed start said once); the walkthrough, opened only now, has the first turn and the selection commands
 * ticked; Add Agent → pi (ACP) installs pi-acp with pi, both pinned, and the queued message goes to it and is
 * answered. Each step is screenshotted (test-artifacts/newcomer-*.png).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { repoRoot } from '../support/paths';
import { until } from '../support/wait';
import { writePiConfig } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { pick, send, turnIdle, waitText } from './chatUi';
import { acceptDiff, agentMenu, fileWith, openFile } from './editorUi';
import { agentEntryIn, answerModal, CHROMIUM, CHROMIUM_ARGS, runCommand } from './runner';
import { frameWhere, settled } from './waits';

const SHOTS = path.join(repoRoot, 'test-artifacts');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `npm start` (scripts/start.sh) in its own process group; resolves once it printed its URL. */
async function npmStart(env: Record<string, string>): Promise<{ url: string; output: () => string; stop(): Promise<void> }> {
  let out = '';
  const child: ChildProcess = spawn('bash', ['scripts/start.sh'], { cwd: repoRoot, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid!, 'SIGINT');
    const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000).unref())]);
    if (!gone) process.kill(-child.pid!, 'SIGKILL');
  };
  try {
    await until(() => /Ctrl\+C stops it/.test(out) || child.exitCode !== null, { what: () => `npm start to print its URL:\n${out}`, timeoutMs: 240_000, intervalMs: 250 });
  } catch (error) {
    await stop();
    throw error;
  }
  const url = /Open:\s+(\S+)/.exec(out)?.[1];
  if (!url) {
    await stop();
    throw new Error(`npm start did not print a URL:\n${out}`);
  }
  return { url, output: () => out, stop };
}

async function chat(page: Page, what: string, timeoutMs = 90_000): Promise<Frame> {
  return frameWhere(page, () => !!document.querySelector('.conn-ready') && !!document.querySelector('.composer textarea'), what, timeoutMs);
}

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** Tabs of the chat, by id, in order. */
const tabIds = (frame: Frame) => frame.locator('[role="tab"]').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.tab));

/** The agent's state as the chat's connection badge says it (its tooltip). */
const connTitle = (frame: Frame) => frame.evaluate(() => document.querySelector('.conn')?.getAttribute('title') ?? '');

test('the first hour: npm start, the chat, a write through the dialog, a tab closed, selection commands, agents from User and Remote settings, a crash, an agent in error, the walkthrough, Add Agent → pi (ACP)', {
  timeout: 900_000,
}, async () => {
  fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'newcomer-'));
  const demo = path.join(scratch, 'demo');
  const ws = path.join(scratch, 'workspace');
  const broken = path.join(scratch, 'broken');
  const lifecycleLog = path.join(scratch, 'crashing-agent.log'); // the smoke agent writes "started <pid>" there
  // pi, once Add Agent installed it, reads its provider from PI_CODING_AGENT_DIR (code-server passes the
  // environment to the extension host and the agents it starts): this test's own scripted model. npm
  // installs pi-acp and pi from the cache setup filled.
  const piModel = await startScriptedModel({ workspace: ws });
  const piDir = path.join(scratch, 'pi');
  writePiConfig(piDir, piModel.url);
  const env = {
    PORT: String(await freePort()),
    AGENT_HOST_DEMO_DIR: demo,
    AGENT_HOST_DEMO_WORKSPACE: ws,
    AGENT_HOST_START_NO_BUILD: '1',
    PI_CODING_AGENT_DIR: piDir,
    PI_OFFLINE: '1',
    PI_SKIP_VERSION_CHECK: '1',
    npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'),
    npm_config_prefer_offline: 'true',
  };
  const { chromium } = await import('playwright-core');
  let browser: Browser | undefined;
  let started = await npmStart(env);
  try {
    // ---------------------------------------------------------------- 1. the first start
    assert.match(started.output(), /ready \d+ s after npm start/);
    const offered = Number(/(\d+) agent\(s\) in the picker/.exec(started.output())?.[1] ?? 0);
    assert.ok(offered >= 1, started.output());
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const shot = async (name: string) => {
      const file = path.join(SHOTS, `newcomer-${name}.png`);
      fs.mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: file });
      return file;
    };
    await page.goto(started.url);
    // Nobody clicks the activity bar: the first start opens the chat.
    let frame = await chat(page, 'the chat opened by itself on the first start');
    await shot('01-first-start');

    // ---------------------------------------------------------------- 2. greet
    await send(frame, 'Hello!');
    await waitText(frame, '.msg.agent', /\w/);
    await turnIdle(frame);
    await shot('02-greeting');

    // ---------------------------------------------------------------- 3. a write through the dialog
    const target = path.join(ws, 'hello.txt');
    await send(frame, `Please create hello.txt.\nSCENARIO: write ${JSON.stringify({ path: target, content: 'hi from a newcomer\n' })}`);
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 90_000 });
    await settled(dialog, 'the permission dialog');
    const title = (await dialog.locator('.dialog-message-text').first().textContent())?.trim() ?? '';
    assert.match(title, /wants to (edit|use a tool)/, `the dialog's question: "${title}"`);
    // While the dialog is up, the card says where to answer instead of offering the buttons again.
    await frame.locator('.entry.permission', { hasText: 'Answer in the dialog' }).waitFor({ timeout: 15_000 });
    assert.equal(await frame.locator('.entry.permission [data-action="answer-permission"]').count(), 0, 'the card repeats the dialog buttons');
    await shot('03-permission-dialog');
    await dialog
      .locator('.dialog-buttons .monaco-button', { hasText: /^Allow once/ })
      .first()
      .click();
    await fileWith(target, /^hi from a newcomer\n$/, 60_000);
    await turnIdle(frame);
    await shot('04-file-written');

    // ---------------------------------------------------------------- 3b. a second tab, closed in the background
    await runCommand(page, 'Atrium: New Chat Tab');
    await frame.locator('[data-testid="tab-t2"]').waitFor({ timeout: 15_000 });
    await frame.locator('[data-testid="tab-t1"]').click();
    await waitText(frame, '.msg.user', 'Hello!', 15_000);
    await frame.locator('[data-testid="tab-t2"]').hover(); // an inactive tab's × shows on hover
    await frame.locator('[data-testid="close-t2"]').click();
    await frame.waitForFunction(() => !document.querySelector('[data-testid="tab-t2"]'), undefined, { timeout: 15_000 });

    // ---------------------------------------------------------------- 4. explain, docstring, unit tests
    const shooter = { screenshot: (name: string) => shot(name) };
    const source = path.join(ws, 'src', 'textUtils.ts');
    const before = fs.readFileSync(source, 'utf8');
    await openFile(page, 'src/textUtils.ts');
    await agentMenu(page, shooter, 'export function wordCount', /^Explain$/, '05-agent-menu');
    frame = await chat(page, 'the chat after Explain');
    await waitText(frame, '.msg.user', /Explain/);
    await turnIdle(frame);
    await shot('06-explained');
    await agentMenu(page, shooter, 'export function truncate', 'Write Docstring');
    await acceptDiff(page, shooter, '07-docstring-diff');
    const documented = await fileWith(source, /@param max/, 30_000);
    assert.notEqual(documented, before, 'the docstring was not applied');
    await agentMenu(page, shooter, 'export function slugify', 'Generate Unit Tests');
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await rows.first().waitFor({ timeout: 90_000 });
    await shot('08-test-cases');
    await page.locator('.quick-input-widget .monaco-button', { hasText: /^OK$/ }).click();
    // A framework picker may follow (none is configured in the sample): take its first choice.
    const accept = page.locator('.editor-actions .action-label[aria-label^="Accept the Proposal"]').first();
    await until(
      async () => {
        if (await accept.isVisible()) return true;
        if (await page.locator('.quick-input-widget').isVisible()) await page.keyboard.press('Enter');
        return false;
      },
      { what: 'the proposed tests', timeoutMs: 90_000, intervalMs: 1000 },
    );
    await acceptDiff(page, shooter, '09-tests-diff');
    // The chat shows the proposed cases as a list one reads, beside the agent's JSON.
    await waitText(frame, '.entry.notice', /Proposed test cases for slugify/, 15_000);
    const testFile = path.join(ws, 'src', 'textUtils.test.ts');
    assert.match(await fileWith(testFile, /describe\('slugify'/, 30_000), /from '\.\/textUtils'/);

    // ---------------------------------------------------------------- 5. agents in User and Remote settings
    const machineFile = path.join(demo, 'user-data', 'Machine', 'settings.json');
    const userFile = path.join(demo, 'user-data', 'User', 'settings.json');
    const machine = readJson(machineFile);
    const demoEntries = machine['agentHost.agents'] as { name: string }[];
    const demoAgent = demoEntries[0]!;
    // The smoke agent: `crash: <title>` starts a tool call and dies; with $SMOKE_BROKEN present it cannot start.
    const crasher = {
      name: 'crashing agent',
      command: process.execPath,
      args: [path.join(repoRoot, 'out', 'test', 'vscode', 'fixtures', 'smokeAgent.js')],
      env: { SMOKE_BROKEN: broken, SMOKE_LIFECYCLE_LOG: lifecycleLog },
      // Sandboxed like every agent by default: its log is outside the workspace, so its folder is allowed.
      sandbox: { allowWrite: [scratch] },
    };
    fs.writeFileSync(machineFile, JSON.stringify({ ...machine, 'agentHost.agents': [...demoEntries, { ...demoAgent, name: 'my remote agent' }, crasher] }, null, 2));
    fs.writeFileSync(userFile, JSON.stringify({ ...readJson(userFile), 'agentHost.agents': [{ ...demoAgent, name: 'my user agent' }] }, null, 2));
    await started.stop();
    started = await npmStart(env);
    const kept = (readJson(machineFile)['agentHost.agents'] as { name: string }[]).map((a) => a.name);
    assert.ok(kept.includes('my remote agent') && kept.includes('crashing agent'), `npm start dropped agents from the Remote settings: ${kept.join(', ')}`);
    assert.equal(kept.filter((n) => demoEntries.some((d) => d.name === n)).length, demoEntries.length, 'a demo entry is missing');
    await page.goto(started.url);
    // The side bar shows the Explorer the selection commands left there: the chat is one click away.
    await page.locator('.activitybar [aria-label^="Atrium"]').first().click({ timeout: 60_000 });
    frame = await chat(page, 'the chat after restarting npm start', 120_000);
    const picker = frame.locator('[data-testid="agent"]');
    const options = await until(
      async () => {
        const o = await picker.locator('vscode-option').evaluateAll((els) => els.map((e) => `${e.textContent?.trim()} | ${e.getAttribute('description') ?? ''}`));
        return o.length >= 3 ? o : undefined;
      },
      { what: 'the agent picker', timeoutMs: 30_000 },
    );
    assert.ok(options.includes('my user agent | User settings'), `not in the picker as a User agent: ${options.join('; ')}`);
    assert.ok(options.includes('my remote agent | Remote settings'), `not in the picker as a Remote agent: ${options.join('; ')}`);
    assert.ok(
      options.some((o) => o.startsWith(`${demoAgent.name} |`)),
      `the demo agent is gone: ${options.join('; ')}`,
    );
    await picker.click();
    await shot('10-picker-user-and-remote');
    await page.keyboard.press('Escape');
    // The transcript came back with the page, and the tab closed in the background stayed closed.
    await waitText(frame, '.msg.user', 'Hello!', 30_000);
    assert.deepEqual(await tabIds(frame), ['t1'], 'the tab closed in the background came back');

    // ---------------------------------------------------------------- 6. a crash mid-turn, then an agent in error
    await pick(frame, 'agent', 'crashing agent');
    await until(() => fs.existsSync(lifecycleLog) && /^started /m.test(fs.readFileSync(lifecycleLog, 'utf8')), { what: 'the crashing agent to start', timeoutMs: 60_000, intervalMs: 200 });
    await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
    fs.writeFileSync(broken, ''); // the running agent is not touched; its restarts will fail
    await send(frame, 'crash: Run the build');
    const exited = frame.locator('.entry.notice.error', { hasText: 'Agent exited' });
    await exited.first().waitFor({ timeout: 60_000 });
    const card = frame.locator('.entry.tool.status-failed', { hasText: 'Run the build' });
    await card.waitFor({ timeout: 15_000 });
    assert.match((await card.textContent()) ?? '', /agent exited .*code 3/i, 'the card does not say why it failed');
    // Restarts fail (1 s, 2 s backoff) until the breaker says it is not started again.
    await until(async () => /not started again/.test(await connTitle(frame)), { what: 'the agent in error', timeoutMs: 60_000, intervalMs: 250 });
    assert.equal(await frame.locator('.entry.tool.status-in_progress, .entry.tool.status-pending').count(), 0, 'a tool card still spins after the crash');
    assert.equal(await exited.count(), 1, 'one notice per exit');
    // A message to the agent in error waits in the queue: the composer empties into it, and the start it
    // tries fails without a second notice.
    const crashes = async () => Number(/crashed (\d+) times/.exec(await connTitle(frame))?.[1] ?? 0);
    const crashesBefore = await crashes();
    const queuedText = 'The queued message reached pi.';
    await send(frame, `SCENARIO: answer ${JSON.stringify({ text: queuedText })}`);
    const queued = frame.locator('[data-testid="queued"]');
    await queued.filter({ hasText: queuedText }).waitFor({ timeout: 15_000 });
    assert.equal(await frame.locator('.composer textarea').inputValue(), '', 'the composer kept the text');
    await until(async () => (await crashes()) > crashesBefore, { what: 'the start the message tried', timeoutMs: 30_000, intervalMs: 250 });
    assert.equal(await frame.locator('.entry.notice.error', { hasText: 'not started again' }).count(), 1, 'the failed start is said more than once');
    assert.equal(await frame.locator('.msg.user', { hasText: queuedText }).count(), 0, 'the message shows as sent while nothing took it');
    // Everything before the crash is still there.
    for (const text of ['Hello!', 'Please create hello.txt.', 'crash: Run the build']) await waitText(frame, '.msg.user', text, 5_000);
    await shot('11-crash-and-queued');

    // ---------------------------------------------------------------- 7. the walkthrough, opened only now
    await runCommand(page, 'Atrium: Get Started');
    const walkthrough = page.locator('.gettingStartedContainer', { has: page.locator('.gettingStartedSlideDetails', { hasText: 'Get started with Atrium' }) });
    await walkthrough.waitFor({ timeout: 30_000 });
    const step = (id: string) => walkthrough.locator(`[data-done-step-id="agent-host.agent-host#getStarted#${id}"]`).first();
    // A first turn and a selection command, both done before the page ever opened (and before npm start restarted).
    for (const id of ['ask', 'selection']) {
      await until(async () => (await step(id).getAttribute('aria-checked')) === 'true', { what: `the step ${id} ticked`, timeoutMs: 15_000 });
    }
    assert.equal(await step('signIn').getAttribute('aria-checked'), 'false', 'Sign in is ticked though nobody signed in');
    await shot('12-walkthrough');
    await page.locator('.tabs-container .tab', { hasText: 'Welcome' }).locator('.tab-actions .action-label').click();
    await walkthrough.waitFor({ state: 'hidden', timeout: 10_000 });

    // ---------------------------------------------------------------- 8. Add Agent → pi (ACP) → a turn
    await runCommand(page, 'Atrium: Add Agent');
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'pi (ACP)' }).first();
    await row.waitFor({ timeout: 15_000 });
    assert.match((await row.textContent()) ?? '', /installs pi-acp@0\.0\.24 \+ @mariozechner\/pi-coding-agent@0\.73\.1 with npm/);
    await row.click();
    assert.match(await answerModal(page, 'Install'), /Install pi-acp@0\.0\.24 \+ @mariozechner\/pi-coding-agent@0\.73\.1 with npm/);
    const added = await until(() => agentEntryIn(demo, 'pi (ACP)'), { what: 'pi (ACP) in agentHost.agents', timeoutMs: 300_000, intervalMs: 500 });
    assert.equal(added.preset, 'pi-acp');
    const installed = added.args.map((a) => /^(.*[\\/]pi-acp[\\/]0\.0\.24)[\\/]/.exec(a)?.[1]).find(Boolean);
    assert.ok(installed, `the entry does not run a pinned pi-acp 0.0.24: ${added.command} ${added.args.join(' ')}`);
    const piPackage = path.join(installed, 'node_modules', '@mariozechner', 'pi-coding-agent');
    assert.equal(added.env.PI_ACP_PI_COMMAND, path.join(piPackage, 'dist', 'cli.js'));
    assert.equal(readJson(path.join(piPackage, 'package.json')).version, '0.73.1');
    await frame.waitForFunction(() => [...document.querySelectorAll('[data-testid="agent"] vscode-option')].some((o) => o.getAttribute('value') === 'pi (ACP)'), undefined, { timeout: 15_000 });
    await pick(frame, 'agent', 'pi (ACP)');
    // The message that waited in the queue goes to pi, which answers it.
    await waitText(frame, '.msg.agent', queuedText, 120_000);
    await turnIdle(frame);
    assert.equal(await queued.count(), 0, 'a message still waits in the queue');
    assert.equal(await frame.locator('.msg.user', { hasText: queuedText }).count(), 1, 'the queued message was sent more than once');
    await shot('13-pi-turn');
  } catch (error) {
    for (const p of browser?.contexts().flatMap((c) => c.pages()) ?? []) await p.screenshot({ path: path.join(SHOTS, 'newcomer-failed.png') }).catch(() => undefined);
    throw error;
  } finally {
    await browser?.close().catch(() => undefined);
    await started.stop();
    await piModel.close();
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});
