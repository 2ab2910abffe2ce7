/**
 * The compatibility check's pure parts: the handshake read from frames, the claimed/absent capability rows,
 * frame evidence (masked token), and the three renderings plus the cross-agent doc (deterministic).
 */
import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { capabilityRows, handshakeOf, initializeResult, sessionNewResult } from '../../src/check/checkHandshake';
import { render, renderCompatDoc, stableText } from '../../src/check/checkReport';
import { CHECK_IDS, evidence, framesOf, result, type CompatReport, type TappedFrame } from '../../src/check/checkTypes';
import { registerSecret } from '../../src/core/log';

const INIT: TappedFrame[] = [
  { dir: 'out', msg: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } } },
  {
    dir: 'in',
    msg: {
      jsonrpc: '2.0',
      id: 0,
      result: {
        protocolVersion: 1,
        agentInfo: { name: 'demo', version: '1.2.3' },
        authMethods: [{ id: 'login', name: 'Log in', type: 'terminal' }],
        agentCapabilities: { loadSession: true, sessionCapabilities: { list: {}, fork: {} }, mcpCapabilities: { http: true }, promptCapabilities: { image: true } },
      },
    },
  },
];

function report(statuses: Partial<Record<string, CompatReport['checks'][number]['status']>>): CompatReport {
  return {
    agent: { name: 'demo', version: '1.2.3' },
    protocol: 'acp',
    protocolVersion: 1,
    checks: CHECK_IDS.map((id) => result(id, statuses[id] ?? 'verified', `${id} evidence`)),
  };
}

describe('compatibility check: status logic and rendering', () => {
  test('the handshake and initialize evidence come from the frames', () => {
    const h = handshakeOf(INIT, 'acp');
    assert.equal(h.protocolVersion, 1);
    assert.deepEqual(h.agent, { name: 'demo', version: '1.2.3' });
    assert.deepEqual(h.authMethods, [{ id: 'login', name: 'Log in', type: 'terminal' }]);
    const r = initializeResult(h, INIT);
    assert.equal(r.status, 'verified');
    assert.match(r.evidence.text, /protocolVersion 1; agent demo 1\.2\.3; auth methods: login \(terminal\); advertises: loadSession, session\/list, session\/fork, MCP http, prompt image/);
    assert.equal(r.evidence.frames.length, 2);
    assert.equal(initializeResult(handshakeOf([], 'acp'), [], new Error('boom')).status, 'failed');
  });

  test('capability rows are claimed when advertised, absent with the field otherwise', () => {
    const rows = capabilityRows('acp', handshakeOf(INIT, 'acp').capabilities, undefined);
    const by = Object.fromEntries(rows.map((r) => [r.id, r]));
    assert.equal(by['session.fork']!.status, 'claimed');
    assert.equal(by['mcp.http']!.status, 'claimed');
    assert.equal(by['mcp.sse']!.status, 'absent');
    assert.match(by['mcp.sse']!.evidence.text, /mcpCapabilities\.sse/);
    assert.equal(by['prompt.audio']!.status, 'absent');
    const rpc = capabilityRows('rpc', undefined, { image: true, embeddedContext: false });
    assert.equal(rpc.find((r) => r.id === 'mcp.http')!.status, 'absent');
  });

  test('session.new names the sign-in methods when it needed sign-in', () => {
    const r = sessionNewResult([], 'acp', new Error('auth'), ['login', 'api-key']);
    assert.equal(r.status, 'failed');
    assert.match(r.evidence.text, /needed sign-in \(-32000\); auth methods offered: login, api-key/);
    assert.equal(sessionNewResult([], 'acp').status, 'verified');
  });

  test('frame evidence pairs requests with their answers and masks registered secrets', () => {
    const token = 'f'.repeat(64);
    const forget = registerSecret(token);
    try {
      const frames: TappedFrame[] = [
        { dir: 'out', msg: { id: 1, method: 'session/new', params: { mcpServers: [{ env: [{ name: 'AGENT_HOST_IDE_TOKEN', value: token }] }] } } },
        { dir: 'in', msg: { id: 1, result: { sessionId: 's' } } },
        { dir: 'in', msg: { id: 1, method: 'session/request_permission', params: {} } },
      ];
      const picked = framesOf(frames, 'session/new');
      assert.equal(picked.length, 2);
      const e = evidence('x', picked);
      assert.ok(!e.frames.join('\n').includes(token.slice(0, 16)), 'token masked');
      assert.match(e.frames[1]!, /^← result #1/);
    } finally {
      forget();
    }
  });

  test('text, json and markdown renderings', () => {
    const r = report({ 'exit.stdinEof': 'failed', 'mcp.sse': 'absent' });
    assert.deepEqual(JSON.parse(render(r, 'json')), r);
    const text = render(r, 'text');
    assert.match(text, /^demo 1\.2\.3 — ACP protocol 1/);
    assert.match(text, /exit\.stdinEof\s+failed\s+exit\.stdinEof evidence/);
    const md = render(r, 'markdown');
    assert.match(md, /\| `exit.stdinEof` \| ❌ failed \| exit\.stdinEof evidence \|/);
    assert.match(md, /### `mcp.sse` — absent/);
  });

  test('the doc: one row per check, a column per agent, notes only for cells not verified, no run details', () => {
    const a = report({ 'exit.stdinEof': 'failed' });
    a.checks.find((c) => c.id === 'exit.stdinEof')!.evidence.text = `gone after 120 ms in ${path.join(os.tmpdir(), 'agent-host-check-x', 'ws')} for ses_abc123`;
    const doc = renderCompatDoc(
      [
        { id: 'a', label: 'A 1.0', report: a },
        { id: 'b', label: 'B 2.0', report: report({ 'mcp.http': 'claimed' }) },
      ],
      'Intro.',
    );
    assert.match(doc, /\| Check \| a \| b \|/);
    assert.match(doc, /\| `exit.stdinEof` \| ❌ \| ✅ \|/);
    assert.match(doc, /\| `mcp.http` \| ✅ \| ☑️ \|/);
    assert.equal(doc.split('\n').filter((l) => l.startsWith('| `')).length, CHECK_IDS.length);
    assert.match(doc, /### a\n\n- `exit.stdinEof` ❌ gone after <ms> in <tmp> for <id>/);
    assert.equal(stableText('0f0e8b6c-1d2e-4f3a-9b8c-7d6e5f4a3b2c'), '<id>');
    assert.equal(
      doc,
      renderCompatDoc(
        [
          { id: 'a', label: 'A 1.0', report: a },
          { id: 'b', label: 'B 2.0', report: report({ 'mcp.http': 'claimed' }) },
        ],
        'Intro.',
      ),
    );
  });
});
