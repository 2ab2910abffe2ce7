/**
 * "Atrium: Show Agent Traffic" in a real VS Code (code-server + Chromium) with opencode on the scripted
 * model: a live turn shows in the view (session/new, session/prompt with its duration, session/update in
 * both directions, the stderr lines), the filter narrows it, and a fake API key given to the agent in `env`
 * — and typed into the prompt — never appears in the view or in the Atrium log. With the smoke agent (a fault
 * fixture: no real agent crashes or goes deaf on demand), a request that times out and a crash mid-turn raise
 * the view's "timed out" and "restarts" counters.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { agentHostLog, runCommand, withWorkbench } from './runner';
import { repoRoot } from '../support/paths';
import { frameWhere } from './waits';

const FAKE_KEY = 'sk-traffic-FAKE-0123456789abcdef';

/** The traffic panel's frame (the webview whose page has the traffic table). */
function trafficFrame(page: Page): Promise<Frame> {
  return frameWhere(page, () => !!document.getElementById('rows') && !!document.getElementById('counters'), 'the traffic view');
}

test('the traffic view shows a live turn of opencode, filters it, and never shows a secret', { timeout: 300_000 }, async () => {
  const opencode = agentById('opencode')!;
  assert.ok(opencode.installed(), 'opencode must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('traffic');
  try {
    const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [{ name: 'opencode', command: oc.command, args: oc.args, env: { ...oc.env, EXAMPLE_SERVICE_API_KEY: FAKE_KEY }, inheritEnv: false }],
          'agentHost.defaultAgent': 'opencode',
          'agentHost.sessions.stateDir': path.join(scratch, 'state'),
        },
        timeoutMs: 260_000,
      },
      async (page, info) => {
        const chat = await openChat(page);
        await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await runCommand(page, 'Atrium: Show Agent Traffic');
        const view = await trafficFrame(page);
        // What happened before the view opened is there (the ring), then the live turn streams in.
        await view.waitForFunction(() => [...document.querySelectorAll('#rows td.m')].some((td) => td.textContent === 'session/new'), undefined, { timeout: 15_000 });
        await send(chat, `TRAFFIC-TURN key ${FAKE_KEY}\nSCENARIO: answer ${JSON.stringify({ text: 'Traffic answered.' })}`);
        await waitText(chat, '.msg.agent', 'Traffic answered.');
        await turnIdle(chat);
        await view.waitForFunction(
          () => [...document.querySelectorAll('#rows tr')].some((tr) => tr.querySelector('td.m')?.textContent === 'session/prompt' && /\d+ ms/.test(tr.querySelector('td.ms')?.textContent ?? '')),
          undefined,
          { timeout: 15_000 },
        );
        const rows = await view.locator('#rows tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
        const methods = new Set(rows.map((r) => r[4]));
        for (const m of ['initialize', 'session/new', 'session/prompt', 'session/update']) assert.ok(methods.has(m), `the view shows ${m} (saw ${[...methods].join(', ')})`);
        assert.ok(
          rows.some((r) => r[1] === '→' && r[4] === 'session/prompt' && r[2] === 'request'),
          'the prompt going out',
        );
        assert.ok(
          rows.some((r) => r[1] === '←' && r[4] === 'session/prompt' && r[2] === 'response' && /ms$/.test(r[5]!)),
          "the prompt's answer with its duration",
        );
        assert.ok(
          rows.some((r) => r[4] === 'session/prompt' && r[7]!.includes('TRAFFIC-TURN')),
          'the prompt text is in the view',
        );
        const whole = await view.evaluate(() => document.body.innerText);
        assert.ok(!whole.includes(FAKE_KEY), 'the fake API key shows in the traffic view');
        assert.match(whole, /TRAFFIC-TURN key \*\*\*/);
        assert.match((await view.locator('#counters').textContent()) ?? '', /0 requests timed out · 0 restarts · 0 permission dialogs timed out · 0 lines dropped/);
        // The filter narrows the rows to what matches.
        await view.locator('#filter').fill('session/prompt');
        const shown = await view.locator('#rows tr:not([hidden]) td.m').allTextContents();
        assert.ok(shown.length >= 2 && shown.every((m) => m === 'session/prompt'), `filtered rows: ${shown.join(', ')}`);
        await info.screenshot('traffic-view');
        await view.locator('#filter').fill('');
        assert.ok(!agentHostLog(info.scratch).includes(FAKE_KEY), 'the fake API key is in the Atrium log');
      },
    );
  } finally {
    await model.close();
  }
});

test('the traffic view counts a request that timed out and a restart after a crash (smoke agent)', { timeout: 240_000 }, async () => {
  const { scratch, workspace } = scratchWorkspace('traffic-counters');
  // The agent's sessions offer modes but never answer session/set_mode: the default mode, applied at each start, times out after 1 s.
  const agent = {
    name: 'smoke-agent',
    command: process.execPath,
    args: [path.join(repoRoot, 'out/test/vscode/fixtures/smokeAgent.js')],
    env: { SMOKE_DEAF_MODE: '1' },
    defaults: { mode: 'code' },
  };
  await withWorkbench(
    {
      workspace,
      userSettings: {
        'agentHost.agents': [agent],
        'agentHost.defaultAgent': agent.name,
        'agentHost.requestTimeoutSeconds': 1,
        'agentHost.sessions.stateDir': path.join(scratch, 'state'),
      },
      timeoutMs: 200_000,
    },
    async (page, info) => {
      const chat = await openChat(page);
      await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
      await runCommand(page, 'Atrium: Show Agent Traffic');
      const view = await trafficFrame(page);
      const countersLine = async () => (await view.locator('#counters').textContent()) ?? '';
      const counted = (what: string) =>
        view
          .waitForFunction((re) => new RegExp(re).test(document.getElementById('counters')?.textContent ?? ''), what, { timeout: 30_000 })
          .catch(async () => assert.fail(`the counters never showed "${what}": ${await countersLine()}`));
      await counted(' 1 requests timed out');
      assert.match(await countersLine(), /· 0 restarts ·/, 'a restart counted before any crash');
      // A second request unanswered while the agent is still marked unresponsive counts too (requests, not spells).
      await chat.locator('[data-testid="mode"]').evaluate((el) => {
        (el as HTMLElement & { value: string }).value = 'code';
        el.dispatchEvent(new Event('change', { bubbles: true }));
      });
      await counted(' 2 requests timed out');
      await send(chat, 'crash: Run the build');
      await counted('[1-9]\\d* restarts');
      // The agent is back (restarted, a new session, whose default mode timed out once more): a turn is answered.
      await send(chat, 'say: after the crash');
      await waitText(chat, '.msg.agent', 'Heard: after the crash', 60_000);
      // (The new session's set_mode times out 1 s after it was sent: the turn may be answered before.)
      await counted(' 3 requests timed out');
      const line = (await view.locator('#counters').textContent()) ?? '';
      assert.match(line, /^smoke-agent · 3 requests timed out · 1 restarts · 0 permission dialogs timed out · 0 lines dropped$/);
      const whole = await view.evaluate(() => document.body.innerText);
      assert.match(whole, /timed out: no answer to session\/set_mode in 1000 ms/, 'the timeout is in the view as a note');
      assert.match(whole, /panic: the smoke agent crashed mid-turn/, "the crash's stderr is in the view");
      await info.screenshot('traffic-counters');
    },
  );
});
