/**
 * The extension inside a real VS Code (code-server + Chromium), with a real agent (opencode) against the
 * scripted model: the mocha suite in the extension host, then the Playwright check that clicks the real
 * permission dialog and takes screenshots (test-artifacts/). Runs test/vscode/main.ts as a child process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/model/scriptedModel';
import { repoRoot } from '../support/paths';

const AGENT_ID = process.env.AGENT_HOST_VSCODE_AGENT ?? 'opencode';

test(`the extension runs whole turns in a real VS Code with ${AGENT_ID}`, { timeout: 600_000 }, async () => {
  const agent = agentById(AGENT_ID);
  assert.ok(agent, `no agent ${AGENT_ID} in the catalog`);
  assert.ok(agent.installed(), `${AGENT_ID} is not installed: run scripts/setup-agents.sh`);
  const model = await startScriptedModel();
  const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'vscode-agent-'));
  try {
    const spec = await agent.prepare({ scratch, modelUrl: model.url, workspace: scratch });
    const config = { name: `${agent.id} (demo model)`, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
    // One line: the UI check types it into an input box.
    const prompt = `SCENARIO: write ${JSON.stringify({ path: 'hello.txt', content: 'Hello from a real agent in VS Code' })}`;
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(repoRoot, 'out/test/vscode/main.js')], {
        cwd: repoRoot,
        env: { ...process.env, AGENT_HOST_TEST_AGENT: JSON.stringify(config), AGENT_HOST_TEST_PROMPT: prompt },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const keep = (d: Buffer) => {
        out += d.toString();
        process.stdout.write(d.toString().replace(/^/gm, '    '));
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.on('close', (c) => resolve({ code: c, out }));
    });
    const summary = /^vscode: (\d+) passed, (\d+) failed$/m.exec(out);
    assert.ok(summary, 'no summary line from the VS Code run');
    assert.equal(summary[2], '0', 'VS Code tests failed');
    assert.ok(Number(summary[1]) >= 4, `expected at least 4 passing checks, got ${summary[1]}`);
    assert.equal(code, 0);
    // The scripted model really served the agent inside VS Code: it chose the write tool.
    assert.ok(model.requests.some((r) => r.decision.startsWith('tool:')), 'the model was never asked for a tool call');
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
