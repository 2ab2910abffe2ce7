/**
 * The extension inside a real VS Code (code-server + Chromium):
 * - the extension-host mocha suite (test/vscode/suite) through the standard harness, `vscode-test` with
 *   .vscode-test.mjs, on both code-servers: the newest we test, and the one whose VS Code is the minimum
 *   engines.vscode claims (so that minimum is tested; there without sessions.test.js, see .vscode-test.mjs).
 *   Nothing may fail, be pending or be skipped;
 * - the Playwright check of the workbench with a real agent (opencode) on the scripted model: a turn from the
 *   command palette through the real permission dialog, screenshots in test-artifacts/ (test/vscode/main.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot } from '../support/paths';
import { codeServerInstall } from './codeServers';

const AGENT_ID = process.env.AGENT_HOST_VSCODE_AGENT ?? 'opencode';
const VSCODE_TEST = path.join(repoRoot, 'node_modules/@vscode/test-cli/out/bin.mjs');

/** Runs a node script, echoing its output indented; resolves its exit code and output. */
function runNode(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (d: Buffer) => {
      out += d.toString();
      process.stdout.write(d.toString().replace(/^/gm, '    '));
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (c) => resolve({ code: c, out }));
  });
}

const majorMinor = (v: string) => v.split('.').slice(0, 2).join('.');
const engines = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { engines: { vscode: string } }).engines.vscode;

for (const [label, which] of [
  ['code-server', 'current'],
  ['code-server-min', 'min'],
] as const) {
  const cs = codeServerInstall(which);
  test(`vscode-test --label ${label}: the extension-host suite passes on code-server ${cs.version} (VS Code ${cs.vscodeVersion})`, { timeout: 600_000 }, async () => {
    assert.ok(fs.existsSync(cs.entry), `code-server (${which}) is not installed: run scripts/setup-vscode.sh`);
    if (which === 'min') {
      // The minimum we claim is the one we run: engines.vscode ^1.99.0 ↔ code-server-min's VS Code 1.99.x.
      assert.equal(majorMinor(cs.vscodeVersion), majorMinor(/\d+\.\d+\.\d+/.exec(engines)?.[0] ?? ''), `engines.vscode is ${engines}`);
    }
    const { code, out } = await runNode([VSCODE_TEST, '--label', label], { AGENT_HOST_TEST_NO_BUILD: '1' });
    assert.ok(out.includes(`code-server ${cs.version} (VS Code ${cs.vscodeVersion})`), 'the run did not say which code-server it ran on');
    const passing = /^\s*(\d+) passing/m.exec(out);
    assert.ok(passing, 'no "N passing" line from mocha');
    // The minimum runs the suite but its whole-turn and lifecycle files (.vscode-test.mjs): 19 tests, the current 33.
    const floor = which === 'min' ? 15 : 30;
    assert.ok(Number(passing[1]) >= floor, `only ${passing[1]} tests passed`);
    assert.doesNotMatch(out, /^\s*\d+ (failing|pending)/m);
    assert.equal(code, 0, 'vscode-test failed');
  });
}

test(`the workbench runs a whole turn with ${AGENT_ID} through the real permission dialog`, { timeout: 600_000 }, async () => {
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
    const { code, out } = await runNode([path.join(repoRoot, 'out/test/vscode/main.js')], {
      AGENT_HOST_TEST_AGENT: JSON.stringify(config),
      AGENT_HOST_TEST_PROMPT: prompt,
    });
    const summary = /^vscode: (\d+) passed, (\d+) failed$/m.exec(out);
    assert.ok(summary, 'no summary line from the VS Code run');
    assert.equal(summary[2], '0', 'the UI check failed');
    assert.equal(summary[1], '1', 'the UI check did not run');
    assert.equal(code, 0);
    // The scripted model really served the agent inside VS Code: it chose the write tool.
    assert.ok(
      model.requests.some((r) => r.decision.startsWith('tool:')),
      'the model was never asked for a tool call',
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
