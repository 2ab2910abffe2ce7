// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${input:…} is mcp.json's own syntax, written into the file as text.
/**
 * The user's own MCP servers reaching real agents in the real VS Code (code-server + Chromium), on the scripted
 * model. The workspace's `.vscode/mcp.json` configures `tickets` (a stdio server, test/fixtures/ticketMcpServer.ts);
 * the user's `agentHost.mcpServers` adds `docs` (the same server over Streamable HTTP, in the test's process).
 * 1. Restricted Mode: no agent runs and the workspace's server never starts (its log stays empty, nothing asked).
 * 2. Trusted: the first session asks in a modal with the exact command line; allowed, opencode gets both servers
 *    (the header says 2) and calls each: the servers log the calls, the model is given their answers.
 * 3. codex, whose entry takes only `tickets` (`"mcpServers": ["tickets"]`), calls it.
 * 4. pi-acp takes no http servers: the chat names `docs` as not passed, and its `session/new` frame in the
 *    traffic view carries `tickets` and not `docs`.
 * 5. The workspace's server changes (another environment): the next session asks again; refused, opencode gets
 *    only `docs`. Screenshots: test-artifacts/mcp-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { startTicketHttpServer, ticketAnswer } from '../fixtures/ticketMcpServer';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { chatFrame, pick, send, turnIdle } from './chatUi';
import { answerModal, runCommand, statusBarItem, withWorkbench, type WorkbenchInfo } from './runner';
import { frameWhere } from './waits';

const ticketServer = path.join(repoRoot, 'out', 'test', 'fixtures', 'ticketMcpServer.js');

/** The calls a ticket server logged (one JSON object a line). */
function calls(log: string): { transport: string; tool: string; args: { id?: string }; source: string }[] {
  return fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

/** The workspace's .vscode/mcp.json with `tickets`, its source `source` (an `${input:…}` the file declares, or text). */
function writeWorkspaceMcp(workspace: string, log: string, source: string): void {
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  const inputs = [{ type: 'promptString', id: 'ticketSource', description: 'Where the tickets come from', password: true }];
  const config = { inputs, servers: { tickets: { type: 'stdio', command: process.execPath, args: [ticketServer], env: { TICKET_LOG: log, TICKET_SOURCE: source } } } };
  fs.writeFileSync(path.join(workspace, '.vscode', 'mcp.json'), `// the workspace's MCP servers\n${JSON.stringify(config, null, 2)}\n`);
}

test("the user's MCP servers: workspace servers only when trusted and allowed, passed by what each agent takes, called by opencode and codex", { timeout: 420_000 }, async () => {
  const [opencode, codex, piAcp] = [agentById('opencode')!, agentById('codex')!, agentById('pi-acp')!];
  assert.ok(opencode.installed() && codex.installed() && piAcp.installed(), 'opencode, codex and pi-acp must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('mcp-servers');
  const log = path.join(scratch, 'tickets.log');
  const http = await startTicketHttpServer(log, 'http');
  writeWorkspaceMcp(workspace, log, '${input:ticketSource}');
  try {
    const prepared = await Promise.all([opencode, codex, piAcp].map((a) => a.prepare({ scratch: path.join(scratch, a.id), modelUrl: model.url, workspace })));
    const [oc, cx, pa] = prepared as [(typeof prepared)[0], (typeof prepared)[0], (typeof prepared)[0]];
    // The stdio ticket server runs in its agent's sandbox (the default) and logs outside the workspace: that folder is
    // allowed in the entries, as docs/sandbox.md tells a user whose MCP server writes elsewhere.
    const sandbox = { allowWrite: [scratch] };
    const agents = [
      { name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false, sandbox },
      { name: 'codex', command: cx.command, args: cx.args, env: cx.env, inheritEnv: false, mcpServers: ['tickets'], sandbox },
      { name: 'pi-acp', command: pa.command, args: pa.args, env: pa.env, inheritEnv: false, sandbox },
    ];
    await withWorkbench(
      {
        workspace,
        workspaceTrust: true,
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'opencode', 'agentHost.mcpServers': { docs: { type: 'http', url: http.url } } },
        timeoutMs: 380_000,
        failureShot: 'mcp-failure',
      },
      (page, info) => steps(page, info, { model, log, workspace, httpRequests: http.requests }),
    );
  } finally {
    await http.close();
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

async function steps(page: Page, info: WorkbenchInfo, { model, log, workspace, httpRequests }: { model: ScriptedModel; log: string; workspace: string; httpRequests: string[] }): Promise<void> {
  // 1. Restricted Mode: nothing runs, nothing is asked.
  await statusBarItem(page, 'agentHost.status', 60_000);
  await page.waitForFunction(() => /Restricted Mode/.test(document.querySelector('.statusbar-item[id$=".agentHost.status"]')?.textContent ?? ''), undefined, { timeout: 30_000 });
  await page.locator('.activitybar [aria-label^="Atrium"]').first().click();
  const restricted = await frameWhere(page, () => document.body?.dataset.view === 'restricted', 'the Restricted Mode page', 60_000);
  assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'a dialog asked in Restricted Mode');
  assert.deepEqual(calls(log), [], 'a server ran in Restricted Mode');
  assert.deepEqual(httpRequests, [], 'the http server was reached in Restricted Mode');

  // 2. Trusted: the workspace's server is asked about with its command line; allowed, opencode gets both.
  await restricted.locator('[data-testid="manage-trust"]').click();
  const trustButton = page
    .locator('.workspace-trust-editor .workspace-trust-buttons-row .monaco-button')
    .filter({ hasText: /^Trust/ })
    .first();
  await trustButton.waitFor({ state: 'visible', timeout: 30_000 });
  await trustButton.click();
  await page.locator('.monaco-dialog-box').waitFor({ state: 'visible', timeout: 60_000 });
  await info.screenshot('mcp-allow-modal');
  const asked = await answerModal(page, 'Allow');
  assert.match(asked, /This workspace configures the MCP server "tickets"/);
  assert.ok(asked.includes(`TICKET_LOG=${log}`) && asked.includes("TICKET_SOURCE='${input:ticketSource}'") && asked.includes(ticketServer), `the modal's command line: ${asked}`);
  assert.ok(asked.includes(`From ${path.join(workspace, '.vscode', 'mcp.json')}.`), `the modal names the file: ${asked}`);
  // Its ${input:ticketSource}: asked once in a password box (the value then kept in the secret storage).
  const box = page.locator('.quick-input-widget');
  await box.locator('.quick-input-message', { hasText: 'Where the tickets come from' }).waitFor({ timeout: 30_000 });
  assert.equal(await box.locator('input[type="password"]').count(), 1, 'the input is not a password box');
  await info.screenshot('mcp-input');
  await box.locator('input').fill('workspace');
  await page.keyboard.press('Enter');
  await box.waitFor({ state: 'hidden', timeout: 10_000 });
  // The trust editor (a modal editor in newer VS Code) goes: Escape closes it.
  await page.keyboard.press('Escape');
  await page.locator('.workspace-trust-editor').waitFor({ state: 'hidden', timeout: 10_000 });
  const chat = await chatFrame(page, 60_000);
  await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
  await serversInHeader(chat, ['tickets (stdio)', 'docs (http)']);
  await info.screenshot('mcp-header');
  await callTicket(page, chat, model, 'tickets_lookup', 'T-42', 'workspace', log, 'stdio');
  await callTicket(page, chat, model, 'docs_lookup', 'T-43', 'http', log, 'http');

  // 3. codex takes only `tickets` (its entry's mcpServers).
  await pick(chat, 'agent', 'codex');
  await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
  await serversInHeader(chat, ['tickets (stdio)']);
  await callTicket(page, chat, model, 'lookup_ticket', 'T-44', 'workspace', log, 'stdio');

  // 4. pi-acp takes no http: `docs` is named as not passed; its session/new carries tickets only.
  await pick(chat, 'agent', 'pi-acp');
  await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
  await chat.locator('.entry.notice', { hasText: 'docs (http) not passed: this agent takes only stdio servers' }).waitFor({ timeout: 30_000 });
  await serversInHeader(chat, ['tickets (stdio)']);
  await info.screenshot('mcp-not-passed');
  await runCommand(page, 'Atrium: Show Agent Traffic');
  const traffic = await frameWhere(page, () => !!document.getElementById('rows') && !!document.getElementById('counters'), 'the traffic view');
  await traffic.locator('#filter').fill('session/new');
  const newSession = await until(
    async () => {
      const rows = await traffic.locator('#rows tr:not([hidden])').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
      // The tab's traffic: the last session/new is pi-acp's (opencode's and codex's came before).
      return rows.filter((r) => r[1] === '→' && r[4] === 'session/new' && /"name":"tickets"/.test(r[7] ?? '')).at(-1);
    },
    { what: "pi-acp's session/new in the traffic view", timeoutMs: 15_000 },
  );
  assert.ok(newSession[7]?.includes('"name":"tickets"'), `session/new: ${newSession[7]}`);
  assert.ok(!newSession[7]?.includes('docs'), `session/new passed docs to pi-acp: ${newSession[7]}`);
  await runCommand(page, 'View: Close All Editors');

  // 5. The workspace's server changes: asked again; refused, opencode gets only docs and tickets never starts.
  writeWorkspaceMcp(workspace, log, 'workspace-changed');
  const before = calls(log).length;
  await chat.locator('[data-testid="agent"]').evaluate((el) => {
    // (not pick(): the agent's start waits for the modal, so the picker shows opencode only after it is answered)
    (el as HTMLElement & { value: string }).value = 'opencode';
    el.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await page.locator('.monaco-dialog-box').waitFor({ state: 'visible', timeout: 60_000 });
  await info.screenshot('mcp-changed-modal');
  const again = await answerModal(page, "Don't Allow");
  assert.match(again, /The MCP server "tickets" of this workspace changed/);
  assert.match(again, /TICKET_SOURCE=workspace-changed/);
  await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
  await serversInHeader(chat, ['docs (http)']);
  assert.equal(calls(log).length, before, 'the refused server was called');
}

/** The header's MCP servers, by their tooltip. */
async function serversInHeader(chat: Frame, expected: string[]): Promise<void> {
  const el = chat.locator('[data-testid="mcp-servers"]');
  await until(async () => ((await el.getAttribute('title').catch(() => null)) === `MCP servers: ${expected.join(', ')}` ? true : undefined), {
    what: `the header's MCP servers: ${expected.join(', ')}`,
    timeoutMs: 30_000,
  }).catch(async (error: Error) => assert.fail(`${error.message}; the header says ${await el.getAttribute('title').catch(() => 'nothing')}`));
  assert.equal(((await el.textContent()) ?? '').trim(), String(expected.length));
}

/**
 * One turn in which the agent calls the ticket tool matching `tool` (allowed once when the agent asks: codex does for
 * MCP tools): the server logged it, the model was given its answer.
 */
async function callTicket(page: Page, chat: Frame, model: ScriptedModel, tool: string, id: string, source: string, log: string, transport: string): Promise<void> {
  const from = model.requests.length;
  const logged = calls(log).length;
  await send(chat, `SCENARIO: tool ${JSON.stringify({ name: tool, args: { id } })}`);
  const dialog = page.locator('.monaco-dialog-box');
  await until(
    async () => {
      if (await dialog.isVisible()) {
        await dialog
          .locator('.dialog-buttons .monaco-button', { hasText: /^Allow once/ })
          .first()
          .click();
        await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
      }
      return model.requests.slice(from).some((r) => r.toolResult !== undefined) || undefined;
    },
    { what: `the model's request after ${tool}`, timeoutMs: 90_000 },
  );
  await turnIdle(chat);
  const given = model.requests.slice(from).flatMap((r) => (r.toolResult === undefined ? [] : [r.toolResult]));
  assert.ok(
    given.some((t) => t.includes(ticketAnswer(id, source))),
    `the model was not given the ticket: ${given.join(' | ').slice(0, 400)}`,
  );
  assert.deepEqual(
    calls(log)
      .slice(logged)
      .map((c) => [c.transport, c.tool, c.args.id, c.source]),
    [[transport, 'lookup_ticket', id, source]],
  );
}
