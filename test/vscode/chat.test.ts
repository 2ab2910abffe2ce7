/**
 * The sidebar chat in a real VS Code with a real agent (opencode) against the scripted model; see chatUi.ts
 * for the flows and what each asserts. Screenshots: test-artifacts/chat-*-{light,dark}.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { longAgentConfig } from './chatLong';
import { runChatUi } from './chatUi';

const AGENT_ID = process.env.AGENT_HOST_VSCODE_AGENT ?? 'opencode';

test(`the chat view runs whole turns in a real VS Code with ${AGENT_ID}`, { timeout: 600_000 }, async () => {
  const agent = agentById(AGENT_ID);
  assert.ok(agent, `no agent ${AGENT_ID} in the catalog`);
  assert.ok(agent.installed(), `${AGENT_ID} is not installed: run scripts/setup-agents.sh`);
  for (const f of ['dist/extension.js', 'dist/webview/chat.js']) assert.ok(fs.existsSync(path.join(repoRoot, f)), `${f} is missing: npm run build`);
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('chat-ui');
  let ok = false;
  try {
    const spec = await agent.prepare({ scratch: path.join(scratch, 'agent'), modelUrl: model.url, workspace });
    const config = { name: `${agent.id} (demo model)`, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
    const long = longAgentConfig('long transcript (fixture)');
    const result = await runChatUi({
      workspace,
      modelRequests: () => model.requests,
      longAgent: long.name,
      userSettings: { 'agentHost.agents': [config, long], 'agentHost.defaultAgent': config.name, 'workbench.colorTheme': 'Default Light Modern' },
      timeoutMs: 480_000,
    });
    assert.ok(result.steps.some((s) => s.startsWith('hostile markdown inert')));
    assert.ok(result.steps.some((s) => s.startsWith('stop left a trace')));
    assert.ok(result.steps.some((s) => s.startsWith('turn stopped; queued message sent')));
    assert.ok(result.steps.some((s) => s.startsWith('window reload restored')));
    assert.ok(
      result.steps.some((s) => s.startsWith('after the reload:')),
      'the session was not reattached after the reload',
    );
    assert.ok(result.steps.some((s) => s.startsWith('code block Insert at cursor and Copy')));
    assert.ok(result.steps.some((s) => s.startsWith('slash menu:')));
    assert.ok(result.steps.some((s) => s.startsWith('@ mention:')));
    assert.ok(result.steps.some((s) => /^mode|^config-/.test(s) && s.includes('the next turn ran in')));
    assert.ok(result.steps.some((s) => s.startsWith('long transcript:')));
    assert.ok(result.screenshots.length >= 16, `expected screenshots in both themes, got ${result.screenshots.length}`);
    assert.ok(
      model.requests.some((r) => r.decision.startsWith('tool:')),
      'the model was never asked for a tool call',
    );
    ok = true;
  } finally {
    await model.close();
    if (ok) fs.rmSync(scratch, { recursive: true, force: true });
  }
});
