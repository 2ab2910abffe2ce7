/**
 * An agent's grouped config option in the chat header (ACP select options in named groups): the picker lists each
 * group's label (not choosable) above its choices, in the agent's order; its twelve choices are searchable; a choice
 * picked by typing reaches the agent (session/set_config_option), whose next answer names it. No real agent we test
 * groups its options, so the smoke agent offers them (SMOKE_GROUPED_MODELS). Screenshot:
 * test-artifacts/header-groups-open.png (the open list with its group labels).
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, pickerShows, send, waitText } from './chatUi';
import { withWorkbench } from './runner';

test('grouped config options: group labels above their choices, searchable, the pick reaches the agent', { timeout: 180_000 }, async () => {
  const { scratch, workspace } = scratchWorkspace('header-groups');
  const agent = {
    name: 'smoke-agent',
    command: process.execPath,
    args: [path.join(repoRoot, 'out/test/vscode/fixtures/smokeAgent.js')],
    env: { SMOKE_GROUPED_MODELS: '1' },
  };
  await withWorkbench(
    { workspace, userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name, 'agentHost.sessions.stateDir': path.join(scratch, 'state') }, timeoutMs: 150_000 },
    async (page, info) => {
      const chat = await openChat(page);
      await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
      const picker = chat.locator('[data-testid="config-model"]');
      await picker.waitFor({ timeout: 30_000 });
      // The options in order: each group's label (disabled), then its choices.
      const options = await picker.locator('vscode-option').evaluateAll((els) => els.map((e) => `${e.hasAttribute('disabled') ? '# ' : ''}${e.textContent?.trim()}`));
      assert.deepEqual(options, ['# Swift', ...[1, 2, 3, 4, 5, 6].map((n) => `Swift model ${n}`), '# Deep', ...[1, 2, 3, 4, 5, 6].map((n) => `Deep model ${n}`)]);
      assert.equal(await picker.evaluate((el) => (el as HTMLElement & { combobox: boolean }).combobox), true, 'twelve choices are searchable');
      // The open list shows the labels as rows that cannot be chosen.
      const input = picker.locator('.combobox-input');
      await input.click();
      const rows = picker.locator('li.option');
      await until(async () => ((await rows.count()) === 14 ? true : undefined), { what: 'the open list (12 choices, 2 labels)', timeoutMs: 10_000 });
      assert.deepEqual(
        (await picker.locator('li.option.disabled').allTextContents()).map((t) => t.trim()),
        ['Swift', 'Deep'],
      );
      await info.screenshot('header-groups-open');
      // Typing filters across groups; the one row left is clicked.
      await input.fill('deep model 4');
      await until(async () => ((await rows.count()) === 1 ? true : undefined), { what: 'one row for "deep model 4"', timeoutMs: 10_000 });
      await rows.first().click();
      await pickerShows(chat, 'config-model', 'deep-4');
      await send(chat, 'say: which model answers?');
      await waitText(chat, '.msg.agent', 'Heard: which model answers? (model deep-4)', 30_000);
    },
  );
});
