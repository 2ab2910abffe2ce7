/**
 * Secrets in logs (src/core/log.ts redact/logText): the IDE tools' bearer token rides in session/new's
 * mcpServers env and must never show in the trace of the ACP client; other secret-looking keys are masked too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it, test } from 'node:test';
import { AcpSession } from '../../src/acp/acpSession';
import { logText, redact, redactingLogger, registerSecret, streamLogger, traces } from '../../src/core/log';
import { createToolEndpoint, ENV_TOKEN } from '../../src/mcp/toolEndpoint';
import { RpcConnection } from '../../src/rpc/rpcConnection';
import { policyDecider } from '../../src/session/permissions';
import { hostileAgent, repoRoot, scratchDir } from '../support/paths';

/** Every 12-character piece of `secret`: none may appear in a log. */
function pieces(secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 12 <= secret.length; i += 4) out.push(secret.slice(i, i + 12));
  return out;
}

describe('log redaction', () => {
  it('a traced session/new never shows the IDE tools token, though the agent receives it', { timeout: 30_000 }, async () => {
    const endpoint = createToolEndpoint({ definitions: () => [], call: async () => ({ content: [] }) });
    const dir = scratchDir('redact');
    try {
      await endpoint.ready;
      const frames = path.join(dir, 'frames.ndjson');
      const lines: string[] = [];
      const logger = streamLogger((l) => lines.push(l), 'trace');
      const otherSecret = `ghp_${randomBytes(16).toString('hex')}`;
      const env = [...Object.entries(endpoint.bridgeEnv()).map(([name, value]) => ({ name, value })), { name: 'GITHUB_TOKEN', value: otherSecret }];
      const session = await AcpSession.start(
        { name: 'hostile', command: process.execPath, args: [hostileAgent, 'normal'], env: { HOSTILE_LOG: frames } },
        {
          logger,
          cwd: dir,
          decidePermission: policyDecider('deny-all'),
          ideTools: { tools: { definitions: () => [], call: async () => ({ content: [] }) }, mcpServer: async () => ({ name: 'ide', command: process.execPath, args: ['bridge.js'], env }) },
        },
      );
      await session.shutdown();
      // The agent got the real token (so it was in the traced params)...
      assert.ok(existsSync(frames));
      const received = readFileSync(frames, 'utf8');
      assert.ok(received.includes(endpoint.token), 'the agent did not receive the token: the test proves nothing');
      // ...the trace shows session/new with its env, masked...
      const log = lines.join('');
      const sent = lines.find((l) => l.includes("[trace] rpc Sending request 'session/new"));
      assert.ok(sent, `no trace of session/new:\n${log.slice(0, 2000)}`);
      assert.match(sent, /"name":"AGENT_HOST_IDE_TOKEN","value":"\*\*\*"/);
      assert.match(sent, /"name":"GITHUB_TOKEN","value":"\*\*\*"/);
      // ...and no piece of either secret appears anywhere in the log.
      for (const secret of [endpoint.token, otherSecret]) {
        for (const p of pieces(secret)) assert.ok(!log.includes(p), `a piece of a secret is in the log: ${p}`);
      }
    } finally {
      await endpoint.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an RPC command with a secret field is traced masked', { timeout: 30_000 }, async () => {
    const lines: string[] = [];
    const logger = streamLogger((l) => lines.push(l), 'trace');
    const fake = path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js');
    const conn = RpcConnection.spawn({ command: process.execPath, args: [fake, 'upstream'], cwd: repoRoot }, { logger, commandTimeoutMs: 5000 });
    try {
      const key = `sk-${randomBytes(12).toString('hex')}`;
      await conn.send({ type: 'get_state', apiKey: key, headers: { Authorization: `Bearer ${key}` } });
      const line = lines.find((l) => l.includes('rpc → ') && l.includes('get_state'));
      assert.ok(line, 'the command was not traced');
      assert.match(line, /"apiKey":"\*\*\*"/);
      assert.ok(!lines.join('').includes(key));
    } finally {
      await conn.shutdown();
    }
  });

  it('redact: registered values, secret keys in JSON, env entries, NAME=value, authorization; plain text untouched', () => {
    const secret = randomBytes(32).toString('hex');
    const forget = registerSecret(secret);
    try {
      assert.equal(redact(`token is ${secret}.`), 'token is ***.');
      assert.equal(redact('{"ANTHROPIC_API_KEY":"sk-ant-1","model":"m"}'), '{"ANTHROPIC_API_KEY":"***","model":"m"}');
      assert.equal(redact('{"value":"abc\\"def","name":"MY_SECRET"}'), '{"value":"***","name":"MY_SECRET"}');
      assert.equal(redact('{"name":"DB_PASSWORD", "value": "hunter2"}'), '{"name":"DB_PASSWORD", "value": "***"}');
      assert.equal(redact('"{\\"name\\":\\"X_TOKEN\\",\\"value\\":\\"abc\\"}"'), '"{\\"name\\":\\"X_TOKEN\\",\\"value\\":\\"***\\"}"');
      assert.equal(redact('env OPENAI_API_KEY=sk-1 node x.js'), 'env OPENAI_API_KEY=*** node x.js');
      assert.equal(redact('authorization: Bearer abc.def'), 'authorization: ***');
      const plain = '{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}';
      assert.equal(redact(plain), plain);
      // A line cut inside the token: the start of it is masked too.
      const cutLine = logText(`${'x'.repeat(1590)}${secret}`, 400);
      assert.ok(!cutLine.includes(secret.slice(0, 8)));
      const cutValue = logText(`{"AGENT_HOST_IDE_TOKEN":"${'y'.repeat(600)}"}`, 400);
      assert.ok(!cutValue.includes('yyyy'), cutValue);
    } finally {
      forget();
    }
    assert.equal(redact(`token is ${secret}.`), `token is ${secret}.`, 'a forgotten value is shown again');
  });

  it('the IDE endpoint forgets its token when it closes', async () => {
    const endpoint = createToolEndpoint({ definitions: () => [], call: async () => ({ content: [] }) });
    await endpoint.ready;
    assert.equal(redact(`x ${endpoint.token} y`), 'x *** y');
    await endpoint.close();
    assert.equal(redact(`x ${endpoint.token} y`), `x ${endpoint.token} y`);
    assert.equal(ENV_TOKEN, 'AGENT_HOST_IDE_TOKEN');
  });

  it('traces() tells whether trace lines are shown (no redaction work otherwise)', () => {
    assert.equal(traces(streamLogger(() => undefined, 'trace')), true);
    assert.equal(traces(streamLogger(() => undefined, 'debug')), false);
    assert.equal(traces({ ...streamLogger(() => undefined), logLevel: 1 }), true); // vscode.LogLevel.Trace
    assert.equal(traces({ ...streamLogger(() => undefined), logLevel: 3 }), false); // vscode.LogLevel.Info
  });
});

test('every level is redacted for what adapters log (an agent echoing its key on stderr)', () => {
  const lines: string[] = [];
  const logger = redactingLogger(streamLogger((l) => lines.push(l), 'info'));
  logger.info('[agent stderr] starting with ANTHROPIC_API_KEY=sk-ant-abcdef123456 and {"apiKey": "sk-xyz-987654321"}');
  logger.error(new Error('auth failed: authorization: Bearer abc.def.ghi'));
  const text = lines.join('');
  assert.ok(!text.includes('sk-ant-abcdef123456') && !text.includes('sk-xyz-987654321') && !text.includes('abc.def.ghi'), text);
  assert.match(text, /ANTHROPIC_API_KEY=\*\*\*/);
  assert.equal(traces(redactingLogger(streamLogger(() => undefined, 'info'))), false, 'the wrapped level is kept');
});

test('RPC traces follow the log level: off while the log does not show traces, on after the level changes', { timeout: 30_000 }, async () => {
  const dir = scratchDir('trace-level');
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  // A LogOutputChannel's shape: a numeric level (vscode.LogLevel: Trace 1, Info 3) and a change event.
  const channel = {
    ...streamLogger((l) => lines.push(l), 'trace'),
    logLevel: 3,
    onDidChangeLogLevel: (listener: () => void) => {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
  };
  const logger = redactingLogger(channel);
  const session = await AcpSession.start({ name: 'hostile', command: process.execPath, args: [hostileAgent, 'answer'] }, { logger, cwd: dir, decidePermission: policyDecider('deny-all') });
  try {
    assert.ok(!lines.some((l) => l.includes('] rpc ')), 'traced while the level was Info');
    channel.logLevel = 1;
    for (const l of listeners) l();
    await new Promise((r) => setTimeout(r, 50));
    await session.prompt([{ type: 'text', text: 'ANSWER {"text": "traced now"}' }]);
    assert.ok(
      lines.some((l) => l.includes("rpc Sending request 'session/prompt")),
      `no trace after switching to Trace:\n${lines.join('').slice(0, 1500)}`,
    );
  } finally {
    await session.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(listeners.size, 0, 'the level listener outlived the agent');
});
