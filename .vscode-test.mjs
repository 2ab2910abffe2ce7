// @ts-check
/**
 * `npx vscode-test` (@vscode/test-cli): the extension-host mocha suite (test/vscode/suite) in a real VS Code.
 *
 * Offline (default): on two code-server versions (scripts/setup-vscode.sh installs both under .tools/) —
 *   code-server      the newest code-server we test (VS Code 1.139.1)
 *   code-server-min  the one whose VS Code is the minimum in package.json engines.vscode (1.99.3)
 * through scripts/vscode-test-launcher.sh, a stand-in for the desktop executable (useInstallation.fromPath).
 *
 * Online, AGENT_HOST_VSCODE_DESKTOP=1: on desktop VS Code downloaded by @vscode/test-electron instead —
 *   desktop-stable   the newest stable
 *   desktop-min      the minimum in engines.vscode
 *
 * One configuration: `npx vscode-test --label code-server-min`. Builds first (npm run build) unless
 * AGENT_HOST_TEST_NO_BUILD=1; the scripted model, opencode and fresh folders: test/vscode/harness.ts.
 */
import { defineConfig } from '@vscode/test-cli';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const desktop = process.env.AGENT_HOST_VSCODE_DESKTOP === '1';

if (process.env.AGENT_HOST_TEST_NO_BUILD !== '1') {
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    const e = /** @type {{ stdout?: Buffer, stderr?: Buffer }} */ (error);
    throw new Error(`npm run build failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** The lowest version engines.vscode allows (`^1.99.0` → 1.99.0). */
const minimum = /\d+\.\d+\.\d+/.exec(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines.vscode)?.[0];

const labels = desktop ? ['desktop-stable', 'desktop-min'] : ['code-server', 'code-server-min'];
const { prepareSuite } = require('./out/test/vscode/harness.js');
/** @type {import('./test/vscode/harness').SuiteSetup} */
const setup = await prepareSuite(labels);

/** The suite's compiled test files but `names`. @param {string[]} names */
function suiteFilesBut(names) {
  const dir = 'out/test/vscode/suite';
  return readdirSync(path.join(root, dir))
    .filter((f) => f.endsWith('.test.js') && !names.includes(f))
    .map((f) => `${dir}/${f}`);
}

/**
 * The minimum VS Code runs every file but sessions.test.js and hostAgents.test.js: crash, restart, reattach,
 * the crash breaker and whole turns of real agents are the agent lifecycle and the protocol (src/manager,
 * src/acp), which use no VS Code API the newest version does not also run; they take half of the suite's time,
 * and the whole suite must fit in CI's 30 minutes.
 * @param {string} label
 */
function base(label) {
  const f = setup.folders[label];
  const minimumOnly = label.endsWith('-min');
  return {
    label,
    // extension.test.js first: it checks what activation alone does, before any other test starts an agent.
    files: ['out/test/vscode/suite/extension.test.js', ...(minimumOnly ? suiteFilesBut(['sessions.test.js', 'hostAgents.test.js']) : ['out/test/vscode/suite/*.test.js'])],
    workspaceFolder: f.workspace,
    launchArgs: [`--user-data-dir=${f.userDataDir}`, `--extensions-dir=${f.extensionsDir}`],
    mocha: {
      ui: /** @type {const} */ ('bdd'),
      timeout: Number(process.env.AGENT_HOST_TEST_TIMEOUT_MS ?? 120_000),
      // Under npm test nothing may be skipped or left out: a pending or .only test fails the run.
      forbidPending: true,
      forbidOnly: true,
    },
  };
}

export default defineConfig(
  desktop
    ? [
        { ...base('desktop-stable'), version: 'stable', env: { ...setup.env, TMPDIR: setup.tmp } },
        { ...base('desktop-min'), version: minimum, env: { ...setup.env, TMPDIR: setup.tmp } },
      ]
    : [
        {
          ...base('code-server'),
          useInstallation: { fromPath: path.join(root, 'scripts/vscode-test-launcher.sh') },
          env: { ...setup.env, AGENT_HOST_CODE_SERVER: 'current' },
        },
        {
          ...base('code-server-min'),
          useInstallation: { fromPath: path.join(root, 'scripts/vscode-test-launcher.sh') },
          env: { ...setup.env, AGENT_HOST_CODE_SERVER: 'min' },
        },
      ],
);
