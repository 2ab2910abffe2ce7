/**
 * The first hour, as a newcomer lives it (issue 16): `npm start` itself (scripts/start.sh, with its state in a
 * scratch folder) and a fresh browser on its URL. The chat opens by itself on the first start; a greeting is
 * answered; a file is written through the permission dialog (the chat's card says to answer there); Explain,
 * Write Docstring and Generate Unit Tests run on the sample's TypeScript; an agent added in the User settings
 * and one in the Remote settings are both in the picker after `npm start` is restarted (each named with its
 * source, the demo entries kept); an agent that crashes mid-turn leaves one notice and the transcript intact.
 * Each step is screenshotted (test-artifacts/newcomer-*.png).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { repoRoot } from '../support/paths';
import { until } from '../support/wait';
import { pick, send, turnIdle, waitText } from './chatUi';
import { acceptDiff, agentMenu, fileWith, openFile } from './editorUi';
import { CHROMIUM, CHROMIUM_ARGS } from './runner';
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

test('the first hour: npm start, the chat, a write through the dialog, selection commands, agents from User and Remote settings, a crash', { timeout: 900_000 }, async () => {
  fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'newcomer-'));
  const demo = path.join(scratch, 'demo');
  const ws = path.join(scratch, 'workspace');
  const env = { PORT: String(await freePort()), AGENT_HOST_DEMO_DIR: demo, AGENT_HOST_DEMO_WORKSPACE: ws, AGENT_HOST_START_NO_BUILD: '1' };
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
    const crasher = { name: 'crashing agent', command: process.execPath, args: [path.join(repoRoot, 'out', 'test', 'fixtures', 'faultAgent.js'), 'crash-mid-turn'] };
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
    // The transcript came back with the page.
    await waitText(frame, '.msg.user', 'Hello!', 30_000);

    // ---------------------------------------------------------------- 6. a crash
    await pick(frame, 'agent', 'crashing agent');
    await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
    await send(frame, 'Do something, please.');
    await waitText(frame, '.entry.notice', /exited/i, 60_000);
    await turnIdle(frame, 30_000);
    const notices = await frame.locator('.entry.notice', { hasText: /exited/i }).count();
    assert.equal(notices, 1, 'one notice per exit');
    // Everything before the crash is still there.
    for (const text of ['Hello!', 'Please create hello.txt.', 'Do something, please.']) await waitText(frame, '.msg.user', text, 5_000);
    await waitText(frame, '.msg.agent', 'Working on it…', 5_000);
    await shot('11-crash');
  } catch (error) {
    for (const p of browser?.contexts().flatMap((c) => c.pages()) ?? []) await p.screenshot({ path: path.join(SHOTS, 'newcomer-failed.png') }).catch(() => undefined);
    throw error;
  } finally {
    await browser?.close().catch(() => undefined);
    await started.stop();
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});
