/**
 * The agents' sandbox through the headless CLI (dist/cli.js, docs/sandbox.md), with codex-acp on the scripted model
 * and codex's own sandbox off (`danger-full-access`): one shell command writes outside the workspace, writes inside
 * it, reads a planted `~/.ssh/id_test` and fetches from a server on this machine's own non-loopback address.
 * - `--sandbox workspace-write`: the outside file does not exist afterwards, the inside one does, the
 *   key's text never reaches the model, the server gets no request, and the CLI says both blocks — as `sandbox`
 *   events with `--format json`, on stderr in text — while the model on 127.0.0.1 answers every request.
 * - `--sandbox read-only`: even the workspace write is refused.
 * - No flag: the default, `workspace-write` — the outside write is blocked and said.
 * - `--sandbox off`: the same command writes outside, reads the key and reaches the server (so the checks above can
 *   fail).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';
import { agentById } from './catalog';

const required = process.env.AGENT_HOST_REQUIRE_AGENTS === '1';
const SCRATCH_ROOT = path.join(repoRoot, '.scratch', 'sandbox');
const SECRET = 'BEGIN-TEST-KEY-7f3a';

/** An address of this machine that is not loopback (the sandbox allows loopback, not the rest). */
function ownAddress(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

const codex = agentById('codex')!;
describe('the sandbox around codex-acp (its own sandbox off), through the CLI', { skip: codex.installed() || required ? false : 'codex not installed', concurrency: false }, () => {
  let model: ScriptedModel;
  let scratch: string;
  let workspace: string;
  let agentsFile: string;
  let outside: string;
  let inside: string;
  let server: http.Server;
  let serverUrl: string;
  let serverHits = 0;

  before(async () => {
    assert.ok(codex.installed(), 'codex is not installed: run scripts/setup-agents.sh');
    const address = ownAddress();
    assert.ok(address, 'this machine has no non-loopback IPv4 address to serve the blocked host on');
    server = http.createServer((_req, res) => {
      serverHits++;
      res.end('SERVER-REACHED');
    });
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    serverUrl = `http://${address}:${(server.address() as AddressInfo).port}/`;
    model = await startScriptedModel();
    fs.mkdirSync(SCRATCH_ROOT, { recursive: true });
    scratch = fs.mkdtempSync(path.join(SCRATCH_ROOT, 'codex-'));
    workspace = path.join(scratch, 'workspace');
    fs.mkdirSync(workspace);
    fs.mkdirSync(path.join(scratch, 'outside'));
    outside = path.join(scratch, 'outside', 'escape.txt');
    inside = path.join(workspace, 'inside.txt');
    const spec = await codex.prepare({ scratch, modelUrl: model.url, workspace });
    fs.mkdirSync(path.join(spec.env.HOME!, '.ssh'), { recursive: true });
    fs.writeFileSync(path.join(spec.env.HOME!, '.ssh', 'id_test'), `${SECRET}\n`);
    agentsFile = path.join(scratch, 'agents.json');
    fs.writeFileSync(agentsFile, JSON.stringify([{ name: 'codex', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }]));
  });
  after(async () => {
    await model?.close();
    await new Promise((resolve) => server?.close(resolve));
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  async function run(...flags: string[]) {
    for (const f of [outside, inside]) fs.rmSync(f, { force: true });
    serverHits = 0;
    const home = path.join(scratch, 'home');
    const command = [`echo escaped > ${outside}`, `echo kept > ${inside}`, `cat ${home}/.ssh/id_test`, `curl -sS -m 10 ${serverUrl} || echo FETCH-FAILED`].join('; ');
    const first = model.requests.length;
    const r = await runCli(
      [
        '--config',
        agentsFile,
        '--agent',
        'codex',
        '--cwd',
        workspace,
        '--state-dir',
        path.join(scratch, 'state'),
        '--approve-all',
        ...flags,
        `Run it.\nSCENARIO: shell {"command": ${JSON.stringify(command)}}`,
      ],
      workspace,
    );
    const requests = model.requests.slice(first);
    const toolResults = requests.map((q) => q.toolResult ?? '').join('\n');
    return { ...r, requests, toolResults };
  }

  const events = (stdout: string) =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; block?: { kind: string; target: string }; toolCallId?: string; outcome?: string });

  test('workspace-write: the write outside and the fetch are blocked and said; the workspace write and the model work', { timeout: 240_000 }, async () => {
    const r = await run('--sandbox', 'workspace-write', '--format', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.requests.length >= 2, `the model on 127.0.0.1 was asked ${r.requests.length} time(s)`);
    assert.ok(!fs.existsSync(outside), 'the file outside the workspace was written');
    assert.equal(fs.readFileSync(inside, 'utf8').trim(), 'kept');
    assert.match(r.toolResults, /escape\.txt: Read-only file system/);
    assert.ok(!r.toolResults.includes(SECRET), 'the planted key reached the model');
    assert.equal(serverHits, 0, 'the server on the non-loopback address was reached');
    assert.match(r.toolResults, /FETCH-FAILED|blocked/);
    const said = events(r.stdout).filter((e) => e.type === 'sandbox');
    assert.ok(
      said.some((e) => e.block?.kind === 'write' && e.block.target === outside && e.toolCallId),
      `no sandbox event for the write: ${JSON.stringify(said)}`,
    );
    const host = new URL(serverUrl).host;
    assert.ok(
      said.some((e) => e.block?.kind === 'network' && e.block.target === host),
      `no sandbox event for ${host}: ${JSON.stringify(said)}`,
    );
  });

  test('text, with the mode named: each block on stderr', { timeout: 240_000 }, async () => {
    const r = await run('--sandbox', 'workspace-write');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!fs.existsSync(outside), 'the file outside the workspace was written');
    assert.ok(r.stderr.includes(`agent-host: blocked by the sandbox: write to ${outside}`), `${r.stderr}\n--- the model was given ---\n${r.toolResults}`);
    assert.ok(r.stderr.includes(`agent-host: blocked by the sandbox: network to ${new URL(serverUrl).host}`), r.stderr);
  });

  test('--sandbox read-only: the workspace write is refused too', { timeout: 240_000 }, async () => {
    const r = await run('--sandbox', 'read-only', '--format', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!fs.existsSync(inside) && !fs.existsSync(outside), 'a file was written under read-only');
    assert.match(r.toolResults, /inside\.txt: Read-only file system/);
  });

  test('no --sandbox: the default is workspace-write, the outside write is blocked and said', { timeout: 240_000 }, async () => {
    const r = await run('--format', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!fs.existsSync(outside), 'the file outside the workspace was written');
    assert.equal(fs.readFileSync(inside, 'utf8').trim(), 'kept');
    assert.ok(!r.toolResults.includes(SECRET), 'the planted key reached the model');
    assert.ok(
      events(r.stdout).some((e) => e.type === 'sandbox' && e.block?.kind === 'write' && e.block.target === outside),
      'no sandbox event for the write',
    );
  });

  test('--sandbox off: the same command writes outside, reads the key and reaches the server', { timeout: 240_000 }, async () => {
    const r = await run('--sandbox', 'off', '--format', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(outside, 'utf8').trim(), 'escaped');
    assert.ok(r.toolResults.includes(SECRET), 'unsandboxed, the key should have been read');
    assert.equal(serverHits, 1);
    assert.ok(!events(r.stdout).some((e) => e.type === 'sandbox'), 'a sandbox event without the sandbox');
  });

  test('--sandbox with a wrong mode is a usage error', async () => {
    const r = await runCli(['--config', agentsFile, '--agent', 'codex', '--sandbox', 'strict', 'hi'], workspace);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--sandbox must be one of workspace-write, read-only, off/);
  });
});
