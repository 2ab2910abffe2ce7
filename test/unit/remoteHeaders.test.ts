// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} and ${env:…} are the settings' own syntax, tested here as text.
/**
 * A remote entry's extra headers: a secret is never written in settings (credential-named headers must be a
 * ${secret:…} or ${env:…} reference), headers the transport sets are not overridable, references are looked
 * up at the start, and the headers reach the server on the WebSocket upgrade of both remote protocols and in
 * the CLI (${env:…} only).
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { WebSocketServer } from 'ws';
import { connectRemote } from '../../src/acp/remoteAcp';
import { silentLogger } from '../../src/core/log';
import { parseAgentConfigs } from '../../src/session/agentConfig';
import { resolveHeaders, validHeaders } from '../../src/session/remoteHeaders';
import { AgentServiceServer } from '../support/agentServiceServer';
import { runCli } from '../support/cli';

test('headers in settings: text, or a reference for anything that carries a credential', () => {
  assert.deepEqual(validHeaders({ 'X-Org': 'acme', 'X-Team-Token': '${secret:team}', 'Proxy-Authorization': '${env:PROXY_AUTH}' }, 'a'), {
    'X-Org': 'acme',
    'X-Team-Token': '${secret:team}',
    'Proxy-Authorization': '${env:PROXY_AUTH}',
  });
  assert.throws(() => validHeaders({ 'X-Team-Token': 'abc123' }, 'a'), /carries a credential: write \$\{secret:NAME\}/);
  assert.throws(() => validHeaders({ Cookie: 'sid=1' }, 'a'), /carries a credential/);
  assert.throws(() => validHeaders({ Authorization: '${secret:t}' }, 'a'), /set by Atrium itself/);
  assert.throws(() => validHeaders({ 'X-Api-Key': '${env:K}' }, 'a'), /set by Atrium itself/);
  assert.throws(() => validHeaders({ 'X-Org': 'a\r\nX-Evil: 1' }, 'a'), /line break/);
  assert.throws(() => validHeaders({ 'X-Org': 'pre-${env:A}' }, 'a'), /whole/);
  assert.throws(() => validHeaders({ 'Bad Name': 'x' }, 'a'), /not a header name/);
  // Through the entry parser, for both remote kinds; a local agent's entry keeps no headers.
  const [acp, service] = parseAgentConfigs([
    { name: 'r', url: 'wss://h/acp', headers: { 'X-Org': 'acme' } },
    { name: 's', protocol: 'agent-service', url: 'ws://h/ws', headers: { 'X-Org': 'acme' } },
  ]);
  assert.deepEqual(acp?.headers, { 'X-Org': 'acme' });
  assert.deepEqual(service?.headers, { 'X-Org': 'acme' });
  assert.throws(() => parseAgentConfigs([{ name: 'r', url: 'wss://h/acp', headers: { 'X-Secret': 'plain' } }]), /agents\[0\]: header "X-Secret" carries a credential/);
});

test('references are looked up at the start; one that finds nothing fails it by name', async () => {
  const asked: string[] = [];
  const lookup = {
    secret: async (n: string) => {
      asked.push(n);
      return n === 'team' ? 's3cret' : undefined;
    },
    env: (n: string) => ({ ORG: 'acme' })[n],
  };
  assert.deepEqual(await resolveHeaders({ 'X-Org': '${env:ORG}', 'X-Team-Token': '${secret:team}', 'X-Plain': 'p' }, lookup), { 'X-Org': 'acme', 'X-Team-Token': 's3cret', 'X-Plain': 'p' });
  assert.deepEqual(asked, ['team']);
  await assert.rejects(resolveHeaders({ 'X-Other-Token': '${secret:other}' }, lookup), /Header "X-Other-Token" needs the secret "other", which is not set/);
  await assert.rejects(resolveHeaders({ 'X-Org': '${env:NOPE}' }, lookup), /the environment variable NOPE/);
});

test('the headers reach the server with the token, which they cannot replace', async () => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const seen = new Promise<IncomingHttpHeaders>((resolve) =>
    wss.once('connection', (socket, req) => {
      resolve(req.headers);
      socket.close();
    }),
  );
  const url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}/acp`;
  try {
    const transport = await connectRemote({ name: 'r', command: url, url }, { logger: silentLogger, cwd: os.tmpdir(), apiKey: 'tok', headers: { 'X-Org': 'acme', 'X-Team-Token': 's3cret' } });
    const headers = await seen;
    assert.equal(headers['x-org'], 'acme');
    assert.equal(headers['x-team-token'], 's3cret');
    assert.equal(headers.authorization, 'Bearer tok');
    await transport.close();
  } finally {
    wss.close();
  }
});

test('the CLI sends ${env:…} headers to an agent service and refuses ${secret:…} ones', async () => {
  const server = await AgentServiceServer.start({});
  const dir = mkdtempSync(path.join(os.tmpdir(), 'remote-headers-'));
  try {
    const seen: IncomingHttpHeaders[] = [];
    server.on('upgrade-headers', (h: IncomingHttpHeaders) => seen.push(h));
    const config = path.join(dir, 'agents.json');
    writeFileSync(config, JSON.stringify([{ name: 'svc', protocol: 'agent-service', url: server.url, headers: { 'X-Org': '${env:TEAM_ORG}' } }]));
    const env = { ...process.env, AGENT_SERVICE_API_KEY: 'simpletest2025_h', TEAM_ORG: 'acme' };
    const run = await runCli(['--config', config, 'hello'], dir, env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(seen[0]?.['x-org'], 'acme');
    const missing = await runCli(['--config', config, 'hello'], dir, { ...env, TEAM_ORG: '' });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /header "X-Org" needs the environment variable TEAM_ORG/);
    writeFileSync(config, JSON.stringify([{ name: 'svc', protocol: 'agent-service', url: server.url, headers: { 'X-Team-Token': '${secret:team}' } }]));
    const secret = await runCli(['--config', config, 'hello'], dir, env);
    assert.equal(secret.code, 2);
    assert.match(secret.stderr, /names the editor's secret "team": the CLI reads \$\{env:NAME\} references only/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
