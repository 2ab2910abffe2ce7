/**
 * `node out/test/vscode/main.js [--no-ui] [--ui-only] [--ui-status-only]` — runs the mocha suite
 * (test/vscode/suite) inside code-server's extension host, then a Playwright check of the workbench
 * (test/vscode/uiCheck.ts: status bar item, a turn from the command palette with the real permission dialog;
 * screenshots in test-artifacts/), and exits non-zero when anything failed. Last line: `vscode: N passed, N failed`.
 *
 * Needs: scripts/setup-vscode.sh, `npm run build`. Env:
 *   AGENT_HOST_TEST_AGENT   JSON {name, command, args, env} of the agent to use (default: the fixture agent)
 *   AGENT_HOST_TEST_PROMPT  the prompt of both turns (default: "create a file named hello.txt / from-the-ui.txt";
 *                           the scripted model needs e.g. `SCENARIO: write {"path":"hello.txt","content":"hi"}`)
 *   AGENT_HOST_TEST_PERMISSION  regexp of the permission option the suite picks (default "allow")
 *   AGENT_HOST_TEST_GREP    only tests whose title matches
 *   AGENT_HOST_VSCODE_TIMEOUT_MS  hard limit per code-server run (default 300000)
 *   AGENT_HOST_KEEP_SCRATCH=1     keep code-server's scratch folder (logs) even on success
 *   AGENT_HOST_VSCODE_VERBOSE=1   print all browser console lines, not only the extension host's
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, runVsCodeTests } from './runner';
import { runHostUiCheck } from './hostUi';
import { runUiCheck } from './uiCheck';

const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts');
const SUMMARY = /^\[agent-host-vscode-tests\] (\d+) passed, (\d+) failed/m;

/** Workspaces of earlier runs (kept when they failed, for a look) go when the next run starts. */
function removeStaleWorkspaces(): void {
  const dir = path.join(REPO_ROOT, '.scratch/vscode-tests');
  if (!fs.existsSync(dir)) return;
  for (const name of fs.readdirSync(dir)) {
    const pid = Number(/-(\d+)$/.exec(name)?.[1]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = pid > 0;
    } catch {
      // not running
    }
    if (!alive) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

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
  for (const f of ['dist/extension.js', 'out/test/vscode/suite/index.js']) {
    if (!fs.existsSync(path.join(REPO_ROOT, f))) {
      console.error(`${f} is missing: run \`npm run build\` first`);
      return 2;
    }
  }
  removeStaleWorkspaces();
  const agent = agentFromEnv();
  const userSettings = { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name };
  const timeoutMs = Number(process.env.AGENT_HOST_VSCODE_TIMEOUT_MS ?? 300_000);
  let passed = 0;
  let failed = 0;

  if (!args.has('--ui-only')) {
    const workspace = freshWorkspace('suite');
    let output = '';
    const write = process.stdout.write.bind(process.stdout);
    // Tee stdout to find the suite's summary line (forwarded from the extension host).
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      output += chunk.toString();
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    const t0 = Date.now();
    let code: number;
    try {
      code = await runVsCodeTests({
        extensionPath: REPO_ROOT,
        testsPath: path.join(__dirname, 'suite/index.js'),
        workspace,
        env: { AGENT_HOST_TEST_AGENT: JSON.stringify(agent) },
        userSettings,
        timeoutMs,
        screenshotDir: ARTIFACTS,
        verbose: process.env.AGENT_HOST_VSCODE_VERBOSE === '1',
      });
    } finally {
      process.stdout.write = write;
    }
    const m = SUMMARY.exec(output);
    passed += Number(m?.[1] ?? 0);
    failed += Number(m?.[2] ?? 0);
    // Crashed, timed out or failed outside a test (e.g. a hook): count the run itself as one failure.
    if (code !== 0 && Number(m?.[2] ?? 0) === 0) failed += 1;
    console.log(`[vscode] suite exited ${code} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (code === 0) fs.rmSync(workspace, { recursive: true, force: true });
  }

  if (!args.has('--no-ui')) {
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
        verbose: process.env.AGENT_HOST_VSCODE_VERBOSE === '1',
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
  if (!args.has('--no-ui') && !args.has('--ui-status-only') && !process.env.AGENT_HOST_TEST_AGENT) {
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
