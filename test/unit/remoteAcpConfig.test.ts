/**
 * Remote ACP entries and the CLI's --url: a `url` with protocol acp (the default) is a remote agent whose
 * transport follows the scheme; wrong shapes are refused by name; the CLI takes the token only from
 * ACP_REMOTE_TOKEN. The cookie jar keeps a server's cookies and lets the caller's own win.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { isRemoteAcp } from '../../src/acp/remoteAcp';
import { parseAgentConfigs } from '../../src/session/agentConfig';
import { CookieJar } from '../../src/transport/cookies';
import { runCli } from '../support/cli';

test('an entry with a url and protocol acp is a remote ACP agent, by any of the four schemes', () => {
  for (const url of ['ws://h:1/acp', 'wss://h/acp', 'http://h:8080/acp', 'https://h/acp']) {
    const [agent] = parseAgentConfigs([{ name: 'r', url, tls: { ca: 'ca.pem' } }]);
    assert.deepEqual(agent, { name: 'r', command: url, url, protocol: 'acp', tls: { ca: 'ca.pem' } });
    assert.ok(isRemoteAcp(agent!));
  }
  assert.equal(isRemoteAcp(parseAgentConfigs([{ name: 'l', command: 'codex-acp' }])[0]!), false);
  assert.equal(isRemoteAcp(parseAgentConfigs([{ name: 's', url: 'ws://h/ws', protocol: 'agent-service' }])[0]!), false);
});

test('wrong remote entries are refused, saying what is wrong', () => {
  assert.throws(() => parseAgentConfigs([{ name: 'r', url: 'ftp://h/acp' }]), /"url" must start with ws:\/\/, wss:\/\/, http:\/\/ or https:\/\//);
  assert.throws(() => parseAgentConfigs([{ name: 'r', url: 'ws://h/acp', command: 'codex-acp' }]), /give "url" \(a remote agent\) or "command" \(a local one\), not both/);
  assert.throws(() => parseAgentConfigs([{ name: 'r', url: 'https://h/acp', tls: { fingerprint: 'AB:CD' } }]), /"tls.fingerprint" is for wss:\/\/ agents/);
  assert.throws(() => parseAgentConfigs([{ name: 's', url: 'http://h/ws', protocol: 'agent-service' }]), /"agent-service" agent needs a "url" starting with ws:\/\/ or wss:\/\//);
  assert.throws(() => parseAgentConfigs([{ name: 'p', url: 'ws://h/acp', protocol: 'rpc', command: 'pi' }]), /"url" is for a remote agent: protocol "acp" \(the default\) or "agent-service"/);
});

test("the cookie jar keeps what servers set and sends it back, the caller's own cookie winning", () => {
  const jar = new CookieJar();
  jar.store(
    new Headers([
      ['Set-Cookie', 'lb=backend-7; Path=/; HttpOnly'],
      ['Set-Cookie', 'zone=eu; Secure'],
    ]),
  );
  jar.storeRaw(['lb=backend-9; Path=/']);
  const headers = new Headers({ Cookie: 'zone=us' });
  jar.apply(headers);
  assert.equal(headers.get('Cookie'), 'lb=backend-9; zone=us');
  assert.equal(jar.header(), 'lb=backend-9; zone=eu');
});

test('CLI: --url takes ws(s) and http(s) for ACP, --protocol agent-service only ws(s); --fingerprint only with wss', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'remote-cli-'));
  try {
    const bad = await runCli(['--url', 'ftp://h/acp', 'hi'], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--url must start with ws:\/\/, wss:\/\/, http:\/\/ or https:\/\//);
    const service = await runCli(['--protocol', 'agent-service', '--url', 'http://h/ws', 'hi'], dir);
    assert.equal(service.code, 2);
    assert.match(service.stderr, /--protocol agent-service needs --url ws:\/\//);
    const pin = await runCli(['--url', 'https://h/acp', '--fingerprint', 'AB:CD', 'hi'], dir);
    assert.equal(pin.code, 2);
    assert.match(pin.stderr, /--fingerprint is for wss:\/\/ agents/);
    const rpc = await runCli(['--url', 'ws://h/acp', '--protocol', 'rpc', 'hi'], dir);
    assert.equal(rpc.code, 2);
    // Nothing listens there: the start fails (exit 3), naming the address, not a usage error.
    const away = await runCli(['--url', 'http://127.0.0.1:9/acp', '--state-dir', path.join(dir, 'state'), 'hi'], dir, { ...process.env, ACP_REMOTE_TOKEN: 'x' });
    assert.equal(away.code, 3, away.stderr);
    assert.match(away.stderr, /cannot reach http:\/\/127\.0\.0\.1:9\/acp/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
