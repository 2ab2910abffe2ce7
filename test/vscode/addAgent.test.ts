/**
 * "Agent Host: Add Agent…" in a real VS Code (code-server + Chromium): browse an ACP registry (a local
 * registry file with codex-acp 0.16.0 as an npx entry whose env points it at the scripted model), install it
 * pinned into the configured storage (a real `npm install`), find the entry in the user's settings (with the
 * codex preset's approval policy added), pick it, and run a real turn with it in the chat; then "Check Agent
 * Compatibility…" on it shows the report (real turns against the scripted model) as a Markdown preview.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/model/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, pick, send, turnIdle, waitText } from './chatUi';
import { runCommand, withWorkbench } from './runner';

/** Every settings.json under `dir` that mentions `text`, parsed. */
function settingsWith(dir: string, text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name !== 'settings.json') continue;
    const body = fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
    if (body.includes(text)) out.push(JSON.parse(body) as Record<string, unknown>);
  }
  return out;
}

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
        await runCommand(page, 'Agent Host: Add Agent');
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
        type Added = { name: string; command: string; args: string[]; env: Record<string, string>; preset?: string };
        const added = await until(
          () =>
            settingsWith(info.scratch, 'Codex CLI')
              .flatMap((s) => (s['agentHost.agents'] as Added[] | undefined) ?? [])
              .find((a) => a?.name === 'Codex CLI'),
          { what: 'the installed agent in agentHost.agents', timeoutMs: 300_000, intervalMs: 500 },
        );
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
        await runCommand(page, 'Agent Host: Check Agent Compatibility');
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
