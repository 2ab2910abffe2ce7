/**
 * A remote ACP agent in a real VS Code (code-server + Chromium): `agent-host serve` (dist/cli.js) puts a real
 * opencode on ws://127.0.0.1:PORT/acp, the scripted model behind it (through a small proxy that can hold one
 * answer). Driven like a user: the token typed once in the password box, a chat turn that writes a file through
 * the permission dialog, the agent picker marking the entry remote with its host, Explain on a selection, then
 * the gateway killed mid-turn — one "Connection lost" notice, the turn ended at once — and started again on the
 * same port: the session reattaches and the model's next request carries the first turn. No agent process of
 * the gateway is left afterwards. Screenshots: test-artifacts/remote-acp-*.png.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { cliPath, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle } from './chatUi';
import { agentMenu, openFile, selectLines } from './editorUi';
import { isAlive, processTree } from './procs';
import { runCommand, statusBarItem, withWorkbench, type WorkbenchInfo } from './runner';
import { settled } from './waits';

const TOKEN = 'remote-acp-vscode-token-3b8e';
const AGENT = 'remote opencode';
const WORD = 'KESTREL-6604';
const HOLD = 'HOLD-THIS-ANSWER-2291';

/** A port free now, kept for both gateways so the restarted one has the same URL. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Forwards every request to the model, except one whose body carries HOLD: held until the client gives up on it. */
async function holdingProxy(target: string): Promise<{ url: string; held: () => number; close(): Promise<void> }> {
  let held = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      // Only a request whose last message is the held prompt: later requests carry it in their history.
      const parsed = JSON.parse(body.toString() || '{}') as { messages?: unknown[]; input?: unknown[] };
      if (JSON.stringify((parsed.messages ?? parsed.input ?? []).at(-1) ?? '').includes(HOLD)) {
        held++;
        return;
      }
      const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    held: () => held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('a remote ACP agent through agent-host serve in a real VS Code: token, a turn, the picker, Explain, the gateway killed and back', { timeout: 300_000 }, async () => {
  const opencode = agentById('opencode')!;
  assert.ok(opencode.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const proxy = await holdingProxy(model.url);
  const { scratch, workspace: ws } = scratchWorkspace('vscode-remote-acp', 'selection');
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}/acp`;
  const spec = await opencode.prepare({ scratch: path.join(scratch, 'agent'), modelUrl: proxy.url, workspace: ws });
  /** Every process a gateway started (its agents and theirs), seen while it ran. */
  const agentPids = new Set<number>();
  const gateways: ChildProcess[] = [];

  async function serve(): Promise<ChildProcess> {
    const child = spawn(process.execPath, [cliPath, 'serve', '--listen', `127.0.0.1:${port}`, '--cwd', ws, '--', spec.command, ...spec.args], {
      env: { ...spec.env, ACP_REMOTE_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateways.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => process.stdout.write(`[serve] ${d.toString()}`));
    await until(() => out.includes(`127.0.0.1:${port}`), { what: () => `the gateway's URL on stdout (${out})`, timeoutMs: 15_000 });
    return child;
  }
  const noteAgents = (gateway: ChildProcess) => {
    for (const pid of processTree(gateway.pid!)) if (pid !== gateway.pid) agentPids.add(pid);
  };

  let ok = false;
  try {
    let gateway = await serve();
    await withWorkbench(
      {
        workspace: ws,
        userSettings: { 'agentHost.agents': [{ name: AGENT, url }], 'agentHost.defaultAgent': AGENT, 'agentHost.answerLanguage': 'en', 'editor.minimap.enabled': false },
        timeoutMs: 240_000,
        failureShot: 'remote-acp-failure',
      },
      (page, info) => steps(page, info),
    );
    ok = true;

    async function steps(page: Page, info: WorkbenchInfo): Promise<void> {
      await statusBarItem(page, 'agentHost.status', 60_000);

      // 1. The token: asked in a password box as the chat starts the agent, then a turn writes a file through the permission dialog.
      let chat = await openChat(page);
      const passwordBox = page.locator('.quick-input-widget', { has: page.locator('input[type="password"]') });
      await passwordBox.waitFor({ state: 'visible', timeout: 60_000 });
      assert.match((await passwordBox.textContent()) ?? '', /Token for the remote agent "remote opencode"/);
      await page.locator('.quick-input-widget input[type="password"]').pressSequentially(TOKEN);
      await info.screenshot('remote-acp-token-prompt');
      await page.keyboard.press('Enter');
      await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
      noteAgents(gateway);
      assert.ok(agentPids.size > 0, 'the gateway started no agent');
      const target = path.join(ws, 'remote-hello.txt');
      await send(chat, `The code word is ${WORD}.\nSCENARIO: write ${JSON.stringify({ path: 'remote-hello.txt', content: 'Written through the gateway' })}`);
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 60_000 });
      await settled(dialog, 'the permission dialog');
      await dialog
        .locator('.dialog-buttons .monaco-button', { hasText: /^Allow once$/i })
        .first()
        .click();
      await turnIdle(chat, 60_000);
      assert.equal(fs.readFileSync(target, 'utf8'), 'Written through the gateway');

      // 2. The agent picker marks the entry remote, with its host.
      await runCommand(page, 'Atrium: Select Agent');
      const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: AGENT });
      await row.waitFor({ timeout: 15_000 });
      assert.match((await row.innerText()).replace(/\s+/g, ' '), new RegExp(`remote on 127\\.0\\.0\\.1:${port} · ACP · ws://127\\.0\\.0\\.1:${port}/acp`));
      await info.screenshot('remote-acp-picker');
      await page.keyboard.press('Escape');

      // 3. Explain on a selection goes through the remote agent: the answer shows in the chat.
      await openFile(page, 'src/cart.ts');
      await selectLines(page, 3, 7);
      await agentMenu(page, info, 'export function sumPrices', /^Explain$/);
      chat = await openChat(page);
      await chat.locator('.msg.user .user-text', { hasText: 'Explain: sumPrices in cart.ts' }).waitFor({ timeout: 30_000 });
      await chat.locator('.msg.agent', { hasText: 'What it does' }).waitFor({ timeout: 60_000 });
      await turnIdle(chat, 30_000);
      await info.screenshot('remote-acp-explain');

      // 4. The gateway killed while the model holds its answer: one notice, the turn over at once, nothing pending.
      const noticesBefore = await chat.locator('.entry.notice').count();
      await send(chat, `${HOLD}\nSCENARIO: answer {"text": "never seen"}`);
      await until(() => proxy.held() > 0, { what: 'the held request at the model', timeoutMs: 60_000 });
      noteAgents(gateway);
      const t0 = Date.now();
      gateway.kill('SIGTERM');
      await turnIdle(chat, 5_000);
      const endedMs = Date.now() - t0;
      assert.ok(endedMs < 5_000, `the turn ended ${endedMs} ms after the gateway went`);
      assert.equal(await chat.locator('[data-testid="stop"]:not([hidden])').count(), 0, 'the Stop button still shows');
      gateway = await serve();
      await chat.locator('.entry.notice', { hasText: 'Connection lost' }).waitFor({ timeout: 15_000 });
      await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
      // One message says the drop; the other is the reattached session's own line (resumed or loaded); the
      // divider a new connection's session opens with ("Continued with …") is no message.
      const notices = (await chat.locator('.entry.notice').allInnerTexts())
        .slice(noticesBefore)
        .map((n) => n.trim())
        .filter((n) => !/^Continued with/.test(n));
      assert.equal(notices.filter((n) => /Connection lost/.test(n)).length, 1, `notices after the drop: ${JSON.stringify(notices)}`);
      assert.match(notices[0] ?? '', /^Connection lost\s+Agent connection closed: 1001 the gateway stopped/);
      assert.deepEqual(
        notices.slice(1).map((n) => /^Session (resumed|loaded)\b/.test(n)),
        [true],
        `notices after the drop: ${JSON.stringify(notices)}`,
      );
      await info.screenshot('remote-acp-dropped');

      // 5. Reattached: the next turn's model request carries the first turn's code word.
      const seen = model.requests.length;
      await send(chat, 'What was the code word?\nSCENARIO: answer {"text": "it was given"}');
      await chat.locator('.msg.agent', { hasText: 'it was given' }).waitFor({ timeout: 60_000 });
      await turnIdle(chat, 30_000);
      noteAgents(gateway);
      assert.ok(
        model.requests.slice(seen).some((r) => JSON.stringify(r.body).includes(WORD)),
        'the model did not see the first turn again: the session was not reattached',
      );
      await info.screenshot('remote-acp-reattached');
    }
  } finally {
    for (const g of gateways) if (g.exitCode === null && g.signalCode === null) g.kill('SIGTERM');
    await Promise.all(gateways.map((g) => (g.exitCode === null && g.signalCode === null ? new Promise((r) => g.once('exit', r)) : undefined)));
    await proxy.close();
    await model.close();
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
  // 6. No agent process of either gateway is left.
  await until(() => [...agentPids].every((pid) => !isAlive(pid)), { what: () => `the gateway's agents to end (${[...agentPids].filter(isAlive).join(', ')})`, timeoutMs: 10_000 });
});
