/**
 * The sandbox policy (src/session/sandboxPolicy.ts, src/agents/sandbox.ts, src/session/sandboxBlocks.ts): what
 * each mode lets the agent write, the credential stores denied in both the agent's home and the user's, the
 * preset's state folders (XDG variables honoured) and model hosts, the entry's additions and its validation, a
 * remote agent never sandboxed here, and the writes read from tool output in the shell's, Node's and Python's words.
 */
import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { sandboxFor, withSandboxMode } from '../../src/agents/sandbox';
import { parseAgentConfigs } from '../../src/session/agentConfig';
import { outputTextOf, withBlocks, writeBlocksIn, MAX_BLOCKS } from '../../src/session/sandboxBlocks';
import { CREDENTIAL_PATHS, sandboxModeOf, sandboxRuntimeSettings, type SandboxContext, withMcpLoopback } from '../../src/session/sandboxPolicy';

const ctx: SandboxContext = {
  cwd: '/w/project',
  roots: ['/w/other'],
  env: { HOME: '/h/agent', TMPDIR: '/h/agent/tmp', XDG_DATA_HOME: '/x/data' },
  userHome: '/h/user',
  tmpdir: '/tmp',
};

describe('sandboxRuntimeSettings', () => {
  test('workspace-write: the workspace folders, temp and the state folders are writable; read-only leaves the workspace out', () => {
    const needs = { state: ['~/.codex', 'xdg-data:opencode', 'xdg-config:opencode', 'env:CODEX_HOME', 'env:UNSET'], hosts: ['api.openai.com'] };
    const ww = sandboxRuntimeSettings('workspace-write', undefined, needs, { ...ctx, env: { ...ctx.env, CODEX_HOME: '/c/home' } });
    for (const p of ['/w/project', '/w/other', '/tmp', '/h/agent/tmp', '/h/agent/.codex', '/x/data/opencode', '/h/agent/.config/opencode', '/c/home']) {
      assert.ok(ww.filesystem.allowWrite.includes(p), `${p} not writable: ${ww.filesystem.allowWrite.join(', ')}`);
    }
    assert.ok(!ww.filesystem.allowWrite.some((p) => p === '/h/agent' || p === '/h/user' || p === '/'), 'a home or the root is writable');
    const ro = sandboxRuntimeSettings('read-only', undefined, needs, ctx);
    assert.ok(!ro.filesystem.allowWrite.includes('/w/project') && !ro.filesystem.allowWrite.includes('/w/other'));
    assert.ok(ro.filesystem.allowWrite.includes('/h/agent/.codex'));
  });

  test('a state folder named on the command line (`arg:--flag`): after the flag or in --flag=…, relative to the folder', () => {
    const needs = { state: ['arg:--session-dir', 'arg:--data'], hosts: [] };
    const s = sandboxRuntimeSettings('workspace-write', undefined, needs, { ...ctx, cwd: '/w/project', args: ['--mode', 'rpc', '--session-dir', '/s/sessions', '--data=rel/data'] });
    assert.ok(s.filesystem.allowWrite.includes('/s/sessions'), s.filesystem.allowWrite.join(', '));
    assert.ok(s.filesystem.allowWrite.includes('/w/project/rel/data'), s.filesystem.allowWrite.join(', '));
    const none = sandboxRuntimeSettings('workspace-write', undefined, needs, { ...ctx, args: ['--session-dir'] });
    assert.ok(!none.filesystem.allowWrite.includes('/s/sessions'));
  });

  test('an agent with loopback of its own (OpenCode) gets the ports of its loopback HTTP/SSE MCP servers forwarded; others are left as they are', () => {
    const servers = [
      { name: 'docs', source: 'user', origin: 'x', type: 'http', url: 'http://127.0.0.1:4711/mcp' },
      { name: 'events', source: 'user', origin: 'x', type: 'sse', url: 'http://localhost:4712/sse' },
      { name: 'far', source: 'user', origin: 'x', type: 'http', url: 'https://mcp.example.com/mcp' },
      { name: 'local', source: 'user', origin: 'x', type: 'stdio', command: 'srv' },
    ] as Parameters<typeof withMcpLoopback>[1];
    const own = sandboxRuntimeSettings('workspace-write', { allowHosts: ['127.0.0.1:9000'] }, { state: [], hosts: [], ownLoopback: true }, ctx);
    const forwarded = withMcpLoopback({ settings: own }, servers).settings as typeof own;
    assert.deepEqual(forwarded.loopback.ports, [4711, 4712, 9000]);
    const proxied = sandboxRuntimeSettings('workspace-write', undefined, { state: [], hosts: [] }, ctx);
    const same = { settings: proxied };
    assert.equal(withMcpLoopback(same, servers), same);
  });

  test("credential stores are denied in the agent's home and the user's; the entry adds paths, folders and hosts", () => {
    const s = sandboxRuntimeSettings('workspace-write', { denyRead: ['~/secrets', '/etc/shadow'], allowWrite: ['~/notes'], allowHosts: ['example.com'] }, { state: [], hosts: ['api.x.com'] }, ctx);
    for (const home of ['/h/agent', '/h/user']) {
      for (const p of ['.ssh', '.aws', '.netrc', '.docker/config.json', 'secrets']) assert.ok(s.filesystem.denyRead.includes(path.join(home, p)), `${home}/${p} readable`);
    }
    assert.ok(s.filesystem.denyRead.includes('/etc/shadow'));
    assert.equal(s.filesystem.denyRead.filter((p) => p.startsWith('/h/user/')).length, CREDENTIAL_PATHS.length + 1);
    assert.ok(s.filesystem.allowWrite.includes('/h/agent/notes') && s.filesystem.allowWrite.includes('/h/user/notes'));
    assert.deepEqual(s.network.allowedDomains, ['127.0.0.1', 'localhost', '::1', 'api.x.com', 'example.com']);
  });

  test("loopback: through the proxy, or — for an agent with servers of its own there — direct, with the host's ports it needs forwarded", () => {
    const env = { ...ctx.env, OPENAI_BASE_URL: 'http://127.0.0.1:4100/v1', OTHER: 'see http://localhost:8080 and https://example.com:9', BAD: 'http://127.0.0.1:99999' };
    const proxied = sandboxRuntimeSettings('workspace-write', { allowHosts: ['localhost:11434', 'example.com:443'] }, { state: [], hosts: [] }, { ...ctx, env });
    assert.deepEqual(proxied.loopback, { direct: false, ports: [4100, 8080, 11434] });
    const own = sandboxRuntimeSettings('workspace-write', undefined, { state: [], hosts: [], ownLoopback: true }, ctx);
    assert.deepEqual(own.loopback, { direct: true, ports: [] });
  });

  test('the mode: the entry, else the fallback', () => {
    assert.equal(sandboxModeOf(undefined, 'workspace-write'), 'workspace-write');
    assert.equal(sandboxModeOf('off', 'workspace-write'), 'off');
    assert.equal(sandboxModeOf({ allowHosts: ['a'] }, 'read-only'), 'read-only');
    assert.equal(sandboxModeOf({ mode: 'off' }, 'workspace-write'), 'off');
  });
});

describe('sandboxFor', () => {
  const launcher = { node: '/n', launcher: '/l/sandbox.mjs' };
  test("a preset's needs and the launch; off and remote agents get none", () => {
    const [codex] = parseAgentConfigs([{ name: 'Codex', command: 'codex-acp', env: { HOME: '/h/c' }, sandbox: { allowHosts: ['extra.dev'] } }]);
    const choice = sandboxFor(codex!, { cwd: '/w', fallback: 'workspace-write', launcher, extra: { allowHosts: ['user.dev'] } });
    assert.equal(choice.mode, 'workspace-write');
    assert.equal(choice.launch?.launcher, '/l/sandbox.mjs');
    assert.ok(choice.settings?.filesystem.allowWrite.includes('/h/c/.codex'));
    for (const host of ['api.openai.com', 'extra.dev', 'user.dev']) assert.ok(choice.settings?.network.allowedDomains.includes(host), host);
    assert.match(choice.description, /^workspace-write: .*api\.openai\.com/);
    assert.equal(sandboxFor({ ...codex!, sandbox: 'off' }, { cwd: '/w', fallback: 'workspace-write', launcher }).launch, undefined);
    // A mode asked for by flag keeps the entry's additions.
    assert.deepEqual(withSandboxMode(codex!, 'read-only').sandbox, { allowHosts: ['extra.dev'], mode: 'read-only' });
    assert.equal(withSandboxMode({ ...codex!, sandbox: 'off' }, 'workspace-write').sandbox, 'workspace-write');
    const [remote] = parseAgentConfigs([{ name: 'R', url: 'wss://r.example/acp', sandbox: 'workspace-write' }]);
    assert.equal(sandboxFor(remote!, { cwd: '/w', fallback: 'workspace-write', launcher }).mode, 'off');
    assert.ok(os.homedir());
  });

  test("an entry's sandbox is checked: a mode or {mode, allowWrite, denyRead, allowHosts}", () => {
    assert.throws(() => parseAgentConfigs([{ name: 'a', command: 'a', sandbox: 'strict' }]), /"sandbox" must be one of workspace-write, read-only, off/);
    assert.throws(() => parseAgentConfigs([{ name: 'a', command: 'a', sandbox: { mode: 'x' } }]), /"sandbox.mode"/);
    assert.throws(() => parseAgentConfigs([{ name: 'a', command: 'a', sandbox: { allowHosts: 'example.com' } }]), /"sandbox.allowHosts" must be a list/);
    assert.deepEqual(parseAgentConfigs([{ name: 'a', command: 'a', sandbox: { mode: 'read-only', allowWrite: ['~/x'] } }])[0]?.sandbox, { mode: 'read-only', allowWrite: ['~/x'] });
  });
});

describe('writeBlocksIn', () => {
  test("the shell's, coreutils', Node's and Python's words for a refused write; each path once", () => {
    const out = [
      '/bin/bash: line 1: /home/u/.bashrc: Read-only file system',
      "touch: cannot touch '/etc/x': Read-only file system",
      "Error: EROFS: read-only file system, open '/opt/y.json'",
      "OSError: [Errno 30] Read-only file system: '/srv/z.txt'",
      '(eval):1: read-only file system: /var/w.txt',
      '/bin/bash: line 2: /home/u/.bashrc: Read-only file system',
    ].join('\n');
    assert.deepEqual(
      writeBlocksIn(out).map((b) => b.target),
      ['/home/u/.bashrc', '/etc/x', '/opt/y.json', '/srv/z.txt', '/var/w.txt'],
    );
    assert.deepEqual(writeBlocksIn('all fine: wrote out/a.txt'), []);
  });

  test('read from text content, raw output and terminal output; at most MAX_BLOCKS kept', () => {
    const text = outputTextOf({
      content: [{ type: 'content', content: { type: 'text', text: 'a: /a: Read-only file system' } }],
      rawOutput: { stderr: 'b: /b: Read-only file system' },
      meta: { terminal_output: { data: 'c: /c: Read-only file system' } },
    });
    assert.deepEqual(
      writeBlocksIn(text).map((b) => b.target),
      ['/a', '/b', '/c'],
    );
    const many = Array.from({ length: 20 }, (_, i) => ({ kind: 'write' as const, target: `/p${i}` }));
    assert.equal(withBlocks([], many).length, MAX_BLOCKS);
    assert.equal(withBlocks([{ kind: 'write', target: '/p0' }], many.slice(0, 2)).length, 2);
  });
});
