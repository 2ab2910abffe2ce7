/**
 * What the extension-host suite (test/vscode/suite) needs around it, set up by .vscode-test.mjs when
 * `vscode-test` loads it: the scripted model server (src/scriptedModel; it serves for as long as vscode-test runs),
 * opencode configured against it as the agent of the suite's whole-turn tests, and for each test
 * configuration a fresh copy of the sample workspace and a fresh user data folder whose User/settings.json
 * names that agent (plus settings that keep the workbench quiet and offline). The same for desktop VS Code
 * and for code-server (the launcher copies the settings to Machine/, see test/vscode/launcher.ts).
 *
 * Everything lives under .scratch/vscode-test/run-<pid>/ and goes when vscode-test exits 0; after a failure
 * it stays for a look, until the next run starts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { removeStaleRunFolders } from '../support/paths';
import { REPO_ROOT } from './codeServers';
import { QUIET_SETTINGS } from './runner';

export interface SuiteFolders {
  workspace: string;
  userDataDir: string;
  extensionsDir: string;
}

export interface SuiteSetup {
  /** Environment for the extension host (the suite reads the agent and the prompt from it). */
  env: Record<string, string>;
  /** Fresh folders for each configuration label. */
  folders: Record<string, SuiteFolders>;
  /** A short folder for TMPDIR (desktop runs: the suite counts the IDE tools' sockets in it). */
  tmp: string;
}

const BASE = path.join(REPO_ROOT, '.scratch', 'vscode-test');

export async function prepareSuite(labels: readonly string[]): Promise<SuiteSetup> {
  const agentFixture = agentById('opencode')!;
  if (!agentFixture.installed()) throw new Error('opencode is not installed: run scripts/setup-agents.sh (or npm run setup)');
  removeStaleRunFolders(BASE);
  const run = path.join(BASE, `run-${process.pid}`);
  fs.mkdirSync(run, { recursive: true });
  process.on('exit', (code) => {
    if (code === 0 && process.env.AGENT_HOST_KEEP_SCRATCH !== '1') fs.rmSync(run, { recursive: true, force: true });
    else process.stderr.write(`[vscode-test] scratch kept: ${path.relative(process.cwd(), run)}\n`);
  });

  const model = await startScriptedModel(); // serves until vscode-test exits (it always ends with process.exit)
  const agentDir = path.join(run, 'agent');
  fs.mkdirSync(agentDir);
  const spec = await agentFixture.prepare({ scratch: agentDir, modelUrl: model.url, workspace: agentDir });
  const agent = { name: 'opencode (demo model)', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
  const settings = { ...QUIET_SETTINGS, 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name };

  const folders: Record<string, SuiteFolders> = {};
  for (const label of labels) {
    const dir = path.join(run, label);
    const f: SuiteFolders = { workspace: path.join(dir, 'ws'), userDataDir: path.join(dir, 'user-data'), extensionsDir: path.join(dir, 'extensions') };
    fs.cpSync(path.join(REPO_ROOT, 'test/fixtures/sample-workspace'), f.workspace, { recursive: true });
    fs.mkdirSync(path.join(f.userDataDir, 'User'), { recursive: true });
    fs.writeFileSync(path.join(f.userDataDir, 'User', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
    fs.mkdirSync(f.extensionsDir, { recursive: true });
    folders[label] = f;
  }
  // Short (unix socket paths) and never kept.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-host-vst-'));
  process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
  // One line: the suite sends it as the prompt of its whole turn; the scripted model writes this file.
  const prompt = `SCENARIO: write ${JSON.stringify({ path: 'hello.txt', content: 'Hello from a real agent in VS Code' })}`;
  return { env: { AGENT_HOST_TEST_AGENT: JSON.stringify(agent), AGENT_HOST_TEST_PROMPT: prompt }, folders, tmp };
}
