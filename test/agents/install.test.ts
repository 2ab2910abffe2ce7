/**
 * One click, end to end: `agent-host install` through the built CLI (dist/cli.js) from a test registry with
 * npx entries for the pinned codex-acp and claude-agent-acp (versions scripts/setup-agents.sh put in the npm
 * cache), into a temporary storage; then one real turn with each installed agent through the CLI against
 * the scripted model, asserting the file written on disk. The environment comes from the catalog's
 * `prepare()`; only the command and args are the installed ones.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';
import { agentById } from './catalog';

const SCRATCH_ROOT = path.join(repoRoot, '.scratch', 'install');
const requireAll = process.env.AGENT_HOST_REQUIRE_AGENTS === '1';
const only = (process.env.AGENTS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

/** Registry entries (npx) for the catalog's pinned agents; `command` picks what to run from the install. */
const CASES = [
  {
    fixture: 'codex',
    entry: { id: 'codex-acp', name: 'Codex (registry test)', version: '0.16.0', description: 'codex-acp pinned', distribution: { npx: { package: '@zed-industries/codex-acp@0.16.0' } } },
    // The npm launcher (bin/codex-acp.js) orphans the native process when killed (catalog note): run the
    // native binary npm installed beside it.
    command: (dir: string) => ({ command: path.join(dir, 'node_modules', '@zed-industries', 'codex-acp-linux-x64', 'bin', 'codex-acp'), args: [] as string[] }),
    launcher: 'node_modules/@zed-industries/codex-acp/bin/codex-acp.js',
  },
  {
    fixture: 'claude',
    entry: {
      id: 'claude-agent-acp',
      name: 'Claude (registry test)',
      version: '0.23.1',
      description: 'claude-agent-acp pinned',
      distribution: { npx: { package: '@zed-industries/claude-agent-acp@0.23.1' } },
    },
    command: undefined,
    launcher: 'node_modules/@zed-industries/claude-agent-acp/dist/index.js',
  },
].filter((c) => only.length === 0 || only.includes(c.fixture));

fs.mkdirSync(SCRATCH_ROOT, { recursive: true });
const scratch = fs.mkdtempSync(path.join(SCRATCH_ROOT, 'run-'));
const storage = path.join(scratch, 'storage');
const registryFile = path.join(scratch, 'registry.json');
fs.writeFileSync(registryFile, JSON.stringify({ version: '1.0.0', agents: CASES.map((c) => c.entry), extensions: [] }, null, 2));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

type Installed = { id: string; version: string; kind: string; dir: string; already: boolean; config: { name: string; command: string; args: string[]; env: Record<string, string> } };

describe('install from the ACP registry, then a real turn (CLI)', { concurrency: false }, () => {
  for (const c of CASES) {
    const agent = agentById(c.fixture)!;
    // The npm cache holds the pinned version only where setup-agents.sh installed it.
    const skip = agent.installed() || requireAll ? false : `${agent.id} not installed (its version is not in the npm cache): run scripts/setup-agents.sh`;

    test(`${c.entry.id} ${c.entry.version}: agent-host install → the config runs a turn that writes a file`, { skip, timeout: 240_000 }, async () => {
      assert.ok(agent.installed(), `${agent.id} is not installed: run scripts/setup-agents.sh`);
      const installedRun = await runCli(['install', c.entry.id, '--registry', registryFile, '--storage', storage, '--format', 'json'], scratch);
      assert.equal(installedRun.code, 0, installedRun.stderr);
      const result = JSON.parse(installedRun.stdout) as Installed;
      const dir = path.join(storage, c.entry.id, c.entry.version);
      assert.equal(result.dir, dir);
      assert.equal(result.kind, 'npx');
      assert.equal(result.already, false);
      assert.match(installedRun.stderr, /\[npm\] npm install @zed-industries\//);
      // npm's bin is a .js file: run with this Node.
      assert.deepEqual(result.config, { name: c.entry.name, command: process.execPath, args: [path.join(dir, c.launcher)], env: {} });
      const record = JSON.parse(fs.readFileSync(path.join(dir, 'install.json'), 'utf8')) as { sha256s: Record<string, string> };
      assert.match(record.sha256s[c.launcher] ?? '', /^[0-9a-f]{64}$/);

      const again = await runCli(['install', c.entry.id, '--registry', registryFile, '--storage', storage, '--format', 'json'], scratch);
      assert.equal(again.code, 0, again.stderr);
      assert.equal((JSON.parse(again.stdout) as Installed).already, true);
      assert.doesNotMatch(again.stderr, /npm install/);

      // One real turn through the CLI with the installed agent.
      const model = await startScriptedModel();
      try {
        const turn = fs.mkdtempSync(path.join(scratch, `${agent.id}-`));
        const workspace = path.join(turn, 'workspace');
        fs.mkdirSync(workspace);
        const spec = await agent.prepare({ scratch: turn, modelUrl: model.url, workspace });
        const run = c.command?.(dir) ?? { command: result.config.command, args: result.config.args };
        assert.ok(fs.existsSync(run.command), `${run.command} is in the install`);
        assert.ok(run.command.startsWith(storage) || run.args.some((a) => a.startsWith(storage)), 'runs what was installed, not the catalog copy');
        const cfgFile = path.join(turn, 'agents.json');
        fs.writeFileSync(cfgFile, JSON.stringify([{ name: result.config.name, command: run.command, args: run.args, env: { ...spec.env, ...result.config.env }, inheritEnv: false }]));
        const target = path.join(workspace, 'hello.txt');
        const content = `hello from the installed ${c.entry.id}\n`;
        const prompt = `Please do what the scenario says.\nSCENARIO: write ${JSON.stringify({ path: target, content })}`;
        const r = await runCli(['--config', cfgFile, '--approve-all', '--format', 'json', '--cwd', workspace, prompt], workspace);
        assert.equal(r.code, 0, `${r.stderr}\n${r.stdout.slice(-2000)}`);
        assert.equal(fs.readFileSync(target, 'utf8'), content);
        assert.ok(model.requests.length > 0, 'the scripted model was asked');
      } finally {
        await model.close();
      }
    });
  }

  // A native npm bin is run through npm's own link, so the command says `opencode`, not the package's
  // `bin/opencode.exe` (opencode-ai names its binary so on every platform).
  const opencode = agentById('opencode')!;
  const ocVersion = opencode.versions['opencode-ai']!;
  const ocSkip = opencode.installed() || requireAll ? false : 'opencode not installed: run scripts/setup-agents.sh';
  if (only.length === 0 || only.includes('opencode'))
    test(`opencode-ai ${ocVersion}: installed as .bin/opencode (no .exe on Linux), and it runs`, { skip: ocSkip, timeout: 240_000 }, async () => {
      const ocStorage = path.join(scratch, 'oc-storage');
      const reg = path.join(scratch, 'oc-registry.json');
      const entry = {
        id: 'opencode',
        name: 'OpenCode (registry test)',
        version: ocVersion,
        description: 'opencode pinned',
        distribution: { npx: { package: `opencode-ai@${ocVersion}`, args: ['acp'] } },
      };
      fs.writeFileSync(reg, JSON.stringify({ version: '1.0.0', agents: [entry], extensions: [] }));
      const r = await runCli(['install', 'opencode', '--registry', reg, '--storage', ocStorage, '--format', 'json'], scratch);
      assert.equal(r.code, 0, r.stderr);
      const result = JSON.parse(r.stdout) as Installed;
      assert.equal(result.config.command, path.join(ocStorage, 'opencode', ocVersion, 'node_modules', '.bin', 'opencode'));
      assert.deepEqual(result.config.args, ['acp']);
      const { execFileSync } = await import('node:child_process');
      assert.match(execFileSync(result.config.command, ['--version'], { encoding: 'utf8', env: { ...process.env, OPENCODE_DISABLE_AUTOUPDATE: '1' } }), new RegExp(ocVersion.replaceAll('.', '\\.')));
      fs.rmSync(ocStorage, { recursive: true, force: true });
    });

  if (CASES.length)
    test('installed lists what was installed; uninstall removes it', async () => {
      const listed = await runCli(['installed', '--storage', storage, '--format', 'json'], scratch);
      assert.equal(listed.code, 0, listed.stderr);
      const rows = (JSON.parse(listed.stdout) as { id: string; version: string }[]).map((r) => `${r.id}@${r.version}`);
      const expected = CASES.filter((c) => agentById(c.fixture)!.installed() || requireAll)
        .map((c) => `${c.entry.id}@${c.entry.version}`)
        .sort();
      assert.deepEqual(rows, expected);
      for (const id of expected) {
        const [name, version] = id.split('@');
        const removed = await runCli(['uninstall', name!, '--version', version!, '--storage', storage], scratch);
        assert.equal(removed.code, 0, removed.stderr);
        assert.equal(fs.existsSync(path.join(storage, name!, version!)), false);
      }
      const none = await runCli(['uninstall', 'codex-acp', '--storage', storage], scratch);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /codex-acp is not installed in /);
    });
});
