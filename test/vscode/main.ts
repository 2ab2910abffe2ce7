/**
 * `node out/test/vscode/main.js [--ui-status-only]` — the Playwright checks of the workbench in code-server
 * (test/vscode/uiCheck.ts: status bar item, a turn from the command palette with the real permission dialog;
 * test/vscode/hostUi.ts: the permission modal and the write review; screenshots in test-artifacts/), and exits
 * non-zero when one failed. Last line: `vscode: N passed, N failed`. (The extension-host mocha suite runs
 * through `vscode-test`: .vscode-test.mjs.)
 *
 * Needs: scripts/setup-vscode.sh, `npm run build`. Env:
 *   AGENT_HOST_TEST_AGENT   JSON {name, command, args, env} of the agent to use (default: the fixture agent)
 *   AGENT_HOST_TEST_PROMPT  the prompt of the turn (default: "create a file named from-the-ui.txt"; the
 *                           scripted model needs e.g. `SCENARIO: write {"path":"hello.txt","content":"hi"}`)
 *   AGENT_HOST_VSCODE_TIMEOUT_MS  hard limit per code-server run (default 300000)
 *   AGENT_HOST_KEEP_SCRATCH=1     keep code-server's scratch folder (logs) even on success
 *   AGENT_HOST_VSCODE_VERBOSE=1   print all browser console lines
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeStaleRunFolders } from '../support/paths';
import { REPO_ROOT } from './runner';
import { runHostUiCheck } from './hostUi';
import { runUiCheck } from './uiCheck';

const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts');

function freshWorkspace(name: string): string {
  const src = path.join(REPO_ROOT, 'test/fixtures/sample-workspace');
  const dst = path.join(REPO_ROOT, '.scratch/vscode-tests', `${name}-${process.pid}`);
  fs.rmSync(dst, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  if (fs.existsSync(src)) fs.cpSync(src, dst, { recursive: true });
  else fs.mkdirSync(dst, { recursive: true });
  return dst;
}

function agentFromEnv(): { name: string; command: string; args: string[]; env: Record<string, string> } {
  if (process.env.AGENT_HOST_TEST_AGENT) return JSON.parse(process.env.AGENT_HOST_TEST_AGENT);
  return {
    name: 'smoke-agent',
    command: process.execPath,
    args: [path.join(__dirname, 'fixtures/smokeAgent.js')],
    env: {},
  };
}

async function main(): Promise<number> {
  const args = new Set(process.argv.slice(2));
  for (const f of ['dist/extension.js', 'out/test/vscode/fixtures/smokeAgent.js']) {
    if (!fs.existsSync(path.join(REPO_ROOT, f))) {
      console.error(`${f} is missing: run \`npm run build\` first`);
      return 2;
    }
  }
  removeStaleRunFolders(path.join(REPO_ROOT, '.scratch/vscode-tests'));
  const agent = agentFromEnv();
  const userSettings = { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name };
  const timeoutMs = Number(process.env.AGENT_HOST_VSCODE_TIMEOUT_MS ?? 300_000);
  let passed = 0;
  let failed = 0;

  {
    const workspace = freshWorkspace('ui');
    const t0 = Date.now();
    try {
      const shots = await runUiCheck({
        extensionPath: REPO_ROOT,
        workspace,
        userSettings,
        env: { AGENT_HOST_TEST_AGENT: JSON.stringify(agent) },
        timeoutMs,
        screenshotDir: ARTIFACTS,
        agentName: agent.name,
        prompt: process.env.AGENT_HOST_TEST_PROMPT ?? 'Create a file named from-the-ui.txt containing a short greeting.',
        statusBarOnly: args.has('--ui-status-only'),
      });
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      console.log(`[vscode] UI check passed in ${secs} s; screenshots: ${shots.map((s) => path.relative(REPO_ROOT, s)).join(', ')}`);
      passed += 1;
      fs.rmSync(workspace, { recursive: true, force: true });
    } catch (error) {
      console.log(`[vscode] UI check FAILED: ${(error as Error).message} (screenshots in ${path.relative(REPO_ROOT, ARTIFACTS)}/)`);
      failed += 1;
    }
  }

  // Host services through the UI (permission modal, diff review); needs an agent that writes through fs/*.
  if (!args.has('--ui-status-only') && !process.env.AGENT_HOST_TEST_AGENT) {
    const workspace = freshWorkspace('host-ui');
    try {
      const shots = await runHostUiCheck({ extensionPath: REPO_ROOT, workspace, userSettings, timeoutMs, screenshotDir: ARTIFACTS });
      console.log(`[vscode] host UI check passed; screenshots: ${shots.map((s) => path.relative(REPO_ROOT, s)).join(', ')}`);
      passed += 1;
      fs.rmSync(workspace, { recursive: true, force: true });
    } catch (error) {
      console.log(`[vscode] host UI check FAILED: ${(error as Error).message}`);
      failed += 1;
    }
  }

  console.log(`vscode: ${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
