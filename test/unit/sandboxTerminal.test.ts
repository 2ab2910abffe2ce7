/**
 * A sandboxed agent's terminal commands (src/host/terminalService.ts with `sandbox`): they run through the sandbox
 * launcher (dist/sandbox.mjs, built by `npm run build`) with the agent's policy — a write in the workspace works, one
 * outside it is refused by the read-only filesystem, a credential folder reads as absent — and without it the same
 * command writes outside (so the check can fail). Needs bubblewrap and socat (scripts/setup.sh).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SandboxLaunch } from '../../src/core/agentProcess';
import { TerminalService } from '../../src/host/terminalService';
import { sandboxRuntimeSettings } from '../../src/session/sandboxPolicy';
import { repoRoot } from '../support/paths';

const LAUNCHER = path.join(repoRoot, 'dist', 'sandbox.mjs');

describe('terminal commands in the agent sandbox', () => {
  let root: string;
  let workspace: string;
  let outside: string;
  let home: string;
  let launch: SandboxLaunch;

  before(() => {
    assert.ok(fs.existsSync(LAUNCHER), 'dist/sandbox.mjs is missing: npm run build');
    // Not under the temp folder, which the sandbox lets agents write.
    fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
    root = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'sbx-term-'));
    workspace = path.join(root, 'workspace');
    outside = path.join(root, 'outside');
    home = path.join(root, 'home');
    for (const d of [workspace, outside, path.join(home, '.ssh'), path.join(workspace, '.vscode')]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh', 'id_test'), 'KEY');
    const settings = sandboxRuntimeSettings('workspace-write', undefined, { state: [], hosts: [] }, { cwd: workspace, env: { HOME: home }, userHome: home, tmpdir: os.tmpdir() });
    launch = { node: process.execPath, launcher: LAUNCHER, mode: 'workspace-write', settings };
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  async function run(sandbox: SandboxLaunch | undefined, line: string, env: Record<string, string> = {}): Promise<{ output: string; exitCode: number | null | undefined }> {
    const terminals = new TerminalService(() => [workspace], {}, { baseEnv: () => ({ PATH: process.env.PATH ?? '', HOME: home, ...env }), sandbox: () => sandbox });
    const { terminalId } = await terminals.create({ command: line });
    const exit = await terminals.waitForExit(terminalId);
    const { output } = await terminals.output(terminalId);
    await terminals.release(terminalId);
    return { output, exitCode: exit.exitCode };
  }

  test('sandboxed: the workspace write works, the outside one is refused, the key is not there', { timeout: 60_000 }, async () => {
    const r = await run(launch, `echo in > ${workspace}/a.txt; echo out > ${outside}/b.txt; cat ${home}/.ssh/id_test; echo '{}' > ${workspace}/.vscode/tasks.json; ls -A ${workspace}; echo done`);
    assert.equal(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8'), 'in\n');
    // The workspace's existing .vscode stays unwritable; no placeholder (an empty .mcp.json, .bashrc…) appears in it.
    assert.ok(!fs.existsSync(path.join(workspace, '.vscode', 'tasks.json')), 'the command wrote .vscode/tasks.json');
    assert.match(r.output, /tasks\.json: Read-only file system/);
    const listed = r.output.split('\n').filter((l) => /^[.\w-]+$/.test(l.trim()));
    for (const name of ['.mcp.json', '.bashrc', '.gitconfig', '.idea', '.claude']) assert.ok(!listed.includes(name), `${name} appeared in the workspace: ${listed.join(' ')}`);
    assert.deepEqual(fs.readdirSync(workspace).sort(), ['.vscode', 'a.txt']);
    assert.ok(!fs.existsSync(path.join(outside, 'b.txt')), 'the command wrote outside the workspace');
    assert.match(r.output, /b\.txt: Read-only file system/);
    assert.ok(!r.output.includes('KEY'), r.output);
    assert.match(r.output, /done/);
  });

  test('a temp folder too deep for a Unix socket path (the runtime puts its bridges there) still starts the sandbox', { timeout: 60_000 }, async () => {
    const deep = path.join(root, 'a-temp-folder-whose-path-is-long', 'enough-that-a-socket-in-it', 'would-pass-the-limit');
    fs.mkdirSync(deep, { recursive: true });
    assert.ok(Buffer.byteLength(path.join(deep, 'claude-socks-0123456789abcdef.sock')) > 107, 'the folder is not deep enough for this test');
    const r = await run(launch, `echo in-the-sandbox > ${workspace}/deep.txt; echo done`, { TMPDIR: deep });
    assert.equal(r.exitCode, 0, r.output);
    assert.equal(fs.readFileSync(path.join(workspace, 'deep.txt'), 'utf8'), 'in-the-sandbox\n');
  });

  test('unsandboxed: the same command writes outside and reads the key', { timeout: 60_000 }, async () => {
    const r = await run(undefined, `echo out > ${outside}/c.txt; cat ${home}/.ssh/id_test`);
    assert.equal(fs.readFileSync(path.join(outside, 'c.txt'), 'utf8'), 'out\n');
    assert.match(r.output, /KEY/);
    assert.equal(r.exitCode, 0);
  });
});
