/**
 * Per-agent defaults, a warm new session and the cached pickers, in a real VS Code (code-server +
 * Chromium) with opencode on the scripted model: a mode picked in the header is remembered for the agent;
 * "New session" opens the next session on the SAME process (no new spawn) and applies the remembered mode
 * (the model's next request carries opencode's plan-mode instructions); after Stop, Start shows the
 * agent's last pickers, with the remembered mode, while it is still starting.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { openChat, pick, pickerShows, send, turnIdle, waitText } from './chatUi';
import { agentHostLog, runCommand, withWorkbench } from './runner';

/**
 * Pids of live processes whose command line starts with `command` and whose environment has HOME=`home`: this
 * test's own agents only, so opencode run by a suite beside this one (scripts/test.sh) is not counted.
 */
function pidsOf(command: string, home: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').startsWith(command)) continue;
      if (!fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`HOME=${home}`)) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z') found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found.sort((a, b) => a - b);
}

test('per-agent defaults, a warm new session and cached pickers in the real VS Code (opencode)', { timeout: 420_000 }, async () => {
  const opencode = agentById('opencode')!;
  assert.ok(opencode.installed(), 'opencode must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('defaults');
  try {
    const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [{ name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false }],
          'agentHost.defaultAgent': 'opencode',
          'agentHost.sessions.stateDir': path.join(scratch, 'state'),
        },
        timeoutMs: 380_000,
      },
      async (page, info) => {
        const frame = await openChat(page);
        // Warm start: the agent is ready without a prompt.
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const first = pidsOf(oc.command, oc.env.HOME!);
        assert.equal(first.length, 1, `one opencode process after the chat opened, found ${first.length}`);
        // opencode offers its modes as a config option of category "mode" (config-mode), or as ACP modes.
        const picker = frame.locator('[data-testid="mode"], [data-category="mode"]').first();
        await picker.waitFor({ timeout: 30_000 });
        const mode = await picker.evaluate((el) => ({ id: el.getAttribute('data-testid')!, values: [...el.querySelectorAll('vscode-option')].map((o) => o.getAttribute('value') ?? '') }));
        assert.ok(mode.values.includes('plan') && mode.values.includes('build'), `opencode offers build and plan, got ${mode.values.join(', ')}`);
        await pickerShows(frame, mode.id, 'build');
        await pick(frame, mode.id, 'plan');

        // New session: same process, and the remembered mode applied to it.
        await send(frame, `DEFAULTS-ONE\nSCENARIO: answer ${JSON.stringify({ text: 'First session done.' })}`);
        await waitText(frame, '.msg.agent', 'First session done.');
        await turnIdle(frame);
        await runCommand(page, 'Atrium: New Chat Session');
        await frame.waitForFunction(() => document.querySelectorAll('.entries > .entry').length === 0, undefined, { timeout: 30_000 });
        await frame.locator('.conn-ready').waitFor({ timeout: 60_000 });
        await pickerShows(frame, mode.id, 'plan');
        assert.deepEqual(pidsOf(oc.command, oc.env.HOME!), first, 'New session started another opencode process instead of using the running one');
        await send(frame, `DEFAULTS-TWO\nSCENARIO: answer ${JSON.stringify({ text: 'Second session done.' })}`);
        await waitText(frame, '.msg.agent', 'Second session done.');
        await turnIdle(frame);
        const body = model.requests.map((r) => JSON.stringify(r.body)).find((b) => b.includes('DEFAULTS-TWO'));
        assert.ok(body, 'the second prompt never reached the model');
        assert.match(body, /plan mode/i, 'the new session did not run in the remembered plan mode');
        assert.ok(!body.includes('DEFAULTS-ONE'), 'the new session carried the first session');
        assert.match(agentHostLog(info.scratch), /defaults applied to the new session: (mode plan|config mode=plan)/);

        // Cached pickers: while the agent starts again, its last pickers (with the remembered mode) show.
        await runCommand(page, 'Atrium: Stop Agent');
        await frame.locator('.conn-stopped').waitFor({ timeout: 30_000 });
        await runCommand(page, 'Atrium: Start Agent');
        await frame.waitForFunction(
          (id) => !!document.querySelector('.conn-starting') && (document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null)?.dataset.current === 'plan',
          mode.id,
          { timeout: 30_000 },
        );
        await page.screenshot({ path: path.join(repoRoot, 'test-artifacts', 'defaults-cached-pickers.png') });
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
      },
    );
  } finally {
    await model.close();
  }
});
