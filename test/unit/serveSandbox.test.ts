/**
 * `agent-host serve` and the sandbox (src/gateway/serve.ts, docs/sandbox.md): where the sandbox cannot be set up it
 * starts nothing and says why (exit 3) unless --no-sandbox is given; `--sandbox` takes only a sandboxed mode, and
 * not together with `--no-sandbox` (usage errors through dist/cli.js).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runServe } from '../../src/gateway/serve';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

test('serve refuses to start agents unsandboxed where the sandbox cannot be set up', async () => {
  const errors: string[] = [];
  const code = await runServe({
    agent: { name: 'cli', command: 'true' },
    cwd: repoRoot,
    sandbox: 'workspace-write',
    launcher: { node: process.execPath, launcher: '/nonexistent/sandbox.mjs' },
    listen: { host: '127.0.0.1', port: 0, loopback: true },
    limits: { maxConnections: 1, maxMessageBytes: 1024, idleTimeoutMs: 1000 },
    logger: quiet as never,
    env: { ACP_REMOTE_TOKEN: 'serve-sandbox-test-token' },
    out: () => undefined,
    err: (line) => errors.push(line),
  });
  assert.equal(code, 3);
  assert.match(errors.join('\n'), /serve: the sandbox is not available here \(.+\); serve starts no agent unsandboxed unless --no-sandbox is given/);
});

test('serve: --sandbox takes workspace-write or read-only, not with --no-sandbox', async () => {
  const env = { ...process.env, ACP_REMOTE_TOKEN: 't' };
  const off = await runCli(['serve', '--listen', '127.0.0.1:0', '--sandbox', 'off', '--command', 'true'], repoRoot, env);
  assert.equal(off.code, 2);
  assert.match(off.stderr, /--sandbox must be workspace-write or read-only \(--no-sandbox for none\)/);
  const both = await runCli(['serve', '--listen', '127.0.0.1:0', '--sandbox', 'read-only', '--no-sandbox', '--command', 'true'], repoRoot, env);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /give --sandbox MODE or --no-sandbox, not both/);
});
