/**
 * The agents' sandbox in the real chat (docs/sandbox.md): codex-acp (its own sandbox off) on the scripted model,
 * its entry naming no sandbox: the default, `workspace-write`. The header shows the mode, with what it allows in the tooltip. A shell
 * command writes in the workspace and outside it: the outside file is not written and the tool card says "Blocked by
 * the sandbox: write to …" with Allow…; Allow… asks in a modal naming the folder, keeps it in the user's
 * `agentHost.sandbox.allow`, and after a restart the same command writes there. Screenshots:
 * test-artifacts/sandbox-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle } from './chatUi';
import { withWorkbench, type WorkbenchInfo } from './runner';
import { answerModal, runCommand } from './workbenchActions';

test('the sandbox in the chat: the mode in the header, a blocked write on its tool card, Allow… then a restart lets it through', { timeout: 420_000 }, async () => {
  const codex = agentById('codex')!;
  assert.ok(codex.installed(), 'codex must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('sandbox');
  const outsideDir = path.join(scratch, 'outside');
  fs.mkdirSync(outsideDir);
  const outside = path.join(outsideDir, 'escape.txt');
  const inside = path.join(workspace, 'inside.txt');
  try {
    const spec = await codex.prepare({ scratch: path.join(scratch, 'codex'), modelUrl: model.url, workspace });
    const agents = [{ name: 'codex', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }];
    await withWorkbench(
      {
        workspace,
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'codex', 'agentHost.permissions.mode': 'inline', 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 380_000,
        failureShot: 'sandbox-failure',
      },
      (page, info) => steps(page, info),
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  /** One shell turn: allowed in the chat, run to its end. */
  async function shellTurn(chat: Frame): Promise<void> {
    const before = await chat.locator('.entry.tool').count();
    await send(chat, `Run it.\nSCENARIO: shell {"command": "echo kept > ${inside}; echo escaped > ${outside}"}`);
    const allow = chat.locator('.entry.permission [data-action="answer-permission"]', { hasText: /Allow once|Yes|Allow/ }).last();
    await allow.waitFor({ timeout: 90_000 });
    await allow.click();
    await turnIdle(chat, 90_000);
    await until(async () => ((await chat.locator('.entry.tool').count()) > before ? true : undefined), { what: 'the tool card', timeoutMs: 15_000 });
  }

  async function steps(page: Page, info: WorkbenchInfo): Promise<void> {
    const chat = await openChat(page);
    await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
    // The header: the mode, and what it allows in the tooltip.
    const badge = chat.locator('[data-testid="sandbox"][data-mode="workspace-write"]');
    await badge.waitFor({ timeout: 30_000 });
    assert.equal((await badge.textContent())?.trim(), 'workspace-write');
    assert.match((await badge.getAttribute('title')) ?? '', /^Sandbox: workspace-write: writes in the workspace, temp and its own folders; .*api\.openai\.com/);

    // A write outside the workspace: refused, and said on the card with Allow….
    await shellTurn(chat);
    assert.equal(fs.readFileSync(inside, 'utf8').trim(), 'kept');
    assert.ok(!fs.existsSync(outside), 'the file outside the workspace was written');
    const blocked = chat.locator('.entry.tool [data-testid="sandbox-blocked"]').last();
    await blocked.waitFor({ timeout: 15_000 });
    assert.equal(await blocked.locator('span:not(.codicon)').textContent(), `Blocked by the sandbox: write to ${outside}`);
    assert.equal(await blocked.locator('[data-action="sandbox-allow"]').textContent(), 'Allow…');
    await blocked.scrollIntoViewIfNeeded();
    await info.screenshot('sandbox-blocked');

    // Allow…: a modal names the folder; yes keeps it in the user's settings.
    await blocked.locator('[data-action="sandbox-allow"]').click();
    const asked = await answerModal(page, 'Allow');
    assert.match(asked, new RegExp(`Let "codex" write in ${outsideDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\?`));
    await until(
      async () => {
        for (const e of fs.readdirSync(info.scratch, { withFileTypes: true, recursive: true })) {
          if (!e.isFile() || e.name !== 'settings.json') continue;
          const body = fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
          const allow = (JSON.parse(body) as Record<string, { codex?: { allowWrite?: string[] } }>)['agentHost.sandbox.allow'];
          if (allow?.codex?.allowWrite?.includes(outsideDir)) return true;
        }
        return undefined;
      },
      { what: 'agentHost.sandbox.allow in the user settings', timeoutMs: 15_000 },
    );

    // After a restart the same command writes there.
    await runCommand(page, 'Atrium: Restart Agent');
    await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
    await shellTurn(chat);
    assert.equal(fs.readFileSync(outside, 'utf8').trim(), 'escaped');
    await info.screenshot('sandbox-allowed');
  }
});
