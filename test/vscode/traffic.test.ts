/**
 * "Atrium: Show Agent Traffic" in a real VS Code (code-server + Chromium) with opencode on the scripted
 * model: a live turn shows in the view (session/new, session/prompt with its duration, session/update in
 * both directions, the stderr lines), the filter narrows it, and a fake API key given to the agent in `env`
 * — and typed into the prompt — never appears in the view or in the Atrium log.
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
