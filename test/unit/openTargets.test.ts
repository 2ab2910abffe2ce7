/**
 * What the host opens on an agent's word (src/host/openTargets.ts, which the views call before the OS opener):
 * pi's "Export the session as HTML" through the real RPC session with the fake agent (test/fixtures/rpcFakeAgent.ts)
 * answering hostile paths — another folder, another extension, a symlink leading out, a missing file — and the
 * URLs of url-mode elicitations.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { startAgentSession } from '../../src/adapters/factory';
import type { Logger } from '../../src/core/log';
import { elicitationUrl, exportSessionHtml } from '../../src/host/openTargets';
import type { AgentSession } from '../../src/session/agentSession';
import { policyDecider } from '../../src/session/permissions';
import { repoRoot, scratchDir } from '../support/paths';

const fake = path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js');
const quiet: Logger = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const root = scratchDir('open-targets');
const live: AgentSession[] = [];
after(async () => {
  for (const s of live) await s.shutdown();
  fs.rmSync(root, { recursive: true, force: true });
});

/** An RPC session with the fake agent, its export_html answering as `plan` says (see rpcFakeAgent.ts), or honestly. */
async function agent(plan?: Record<string, unknown>): Promise<AgentSession> {
  const env = plan ? { FAKE_EXPORT: JSON.stringify(plan) } : {};
  const s = await startAgentSession(
    { name: 'fake', command: process.execPath, args: [fake, 'upstream'], protocol: 'rpc', env },
    { logger: quiet, cwd: repoRoot, decidePermission: policyDecider('deny-all') },
  );
  live.push(s);
  return s;
}

describe('Export the session as HTML: only the .html file asked for is opened', () => {
  it('an honest agent: the file it wrote where asked, in a fresh folder of ours', async () => {
    const base = fs.mkdtempSync(path.join(root, 'base-'));
    const s = await agent();
    const r = await exportSessionHtml(s.commands!, base);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.file, fs.realpathSync(r.requested));
    assert.equal(path.dirname(path.dirname(r.requested)), base);
    assert.match(path.basename(path.dirname(r.requested)), /^agent-host-export-/);
    assert.match(fs.readFileSync(r.file, 'utf8'), /exported session/);
    const again = await exportSessionHtml(s.commands!, base);
    assert.notEqual(path.dirname(again.requested), path.dirname(r.requested), 'each export has a folder of its own');
  });

  const elsewhere = fs.mkdtempSync(path.join(root, 'elsewhere-'));
  const desktop = path.join(elsewhere, 'run.desktop');
  const outsideHtml = path.join(elsewhere, 'evil.html');
  const cases: [string, Record<string, unknown>, RegExp, string?][] = [
    ['a .desktop file in another folder', { write: [desktop], answer: desktop }, /^the file it answered is not in the export folder$/],
    ['an .html file in another folder', { write: [outsideHtml], answer: outsideHtml }, /^the file it answered is not in the export folder$/],
    ['a .desktop file in the export folder', { write: ['{out}.desktop'], answer: '{out}.desktop' }, /^the file it answered is not an \.html file$/],
    [
      'the path asked for, a symlink leading out',
      { write: [outsideHtml], symlink: { path: '{out}', target: outsideHtml }, answer: '{out}' },
      /^the file it answered leads out of the export folder$/,
      outsideHtml,
    ],
    [
      'the path asked for, a symlink to a .desktop file beside it',
      { write: ['{out}.desktop'], symlink: { path: '{out}', target: '{out}.desktop' }, answer: '{out}' },
      /^the file it answered is not an \.html file$/,
    ],
    ['a file it never wrote', { answer: '{out}' }, /^the file it answered does not exist$/],
    ['a relative path', { write: ['{out}'], answer: 'session.html' }, /^its answer is a relative path$/],
    ['no path at all', { write: ['{out}'], answer: 42 }, /^its answer is not a file path$/],
  ];
  for (const [what, plan, reason, real] of cases) {
    it(`refused: ${what}`, async () => {
      const s = await agent(plan);
      const r = await exportSessionHtml(s.commands!, root);
      assert.equal(r.ok, false, `opened ${JSON.stringify(r)}`);
      if (r.ok) return;
      assert.match(r.reason, reason);
      assert.equal(r.real, real ? fs.realpathSync(real) : r.real, 'the real path is given when a symlink leads elsewhere');
      assert.deepEqual(r.answer, typeof plan.answer === 'string' ? plan.answer.replaceAll('{out}', r.requested) : plan.answer, 'the answer is kept for the log');
    });
  }
});

describe('elicitation URLs: only http(s) pages, shown whole', () => {
  it('file:, vscode:, javascript:, command: and data: URLs, a user name before the host and non-URLs are refused, saying why', () => {
    const refused: [string, RegExp][] = [
      ['file:///etc/passwd', /only https and http pages are opened, and this is a file: URL/],
      ['vscode://vscode.git/clone?url=https://evil.example/x', /this is a vscode: URL/],
      ['javascript:alert(1)', /this is a javascript: URL/],
      ['command:workbench.action.terminal.new', /this is a command: URL/],
      ['data:text/html,<script>1</script>', /this is a data: URL/],
      ['https://accounts.example.com@evil.example/login', /a URL with a user name or password before its host is not opened/],
      ['[Sign in](command:workbench.action.terminal.new)', /^it is not a URL$/],
      ['', /^it is not a URL$/],
    ];
    for (const [url, reason] of refused) {
      const r = elicitationUrl(url);
      assert.equal(r.ok, false, `${url} was let through`);
      if (!r.ok) assert.match(r.reason, reason, url);
    }
  });

  it('an https or http URL is opened as shown: the whole URL and its host', () => {
    assert.deepEqual(elicitationUrl('https://auth.example.com/device?code=ABCD-1234#step2'), { ok: true, url: 'https://auth.example.com/device?code=ABCD-1234#step2', host: 'auth.example.com' });
    assert.deepEqual(elicitationUrl('http://localhost:8123/callback'), { ok: true, url: 'http://localhost:8123/callback', host: 'localhost:8123' });
    // What is shown is what is opened: the parsed form (an IDN host as punycode, so a look-alike shows).
    assert.deepEqual(elicitationUrl('https://exаmple.com/'), { ok: true, url: 'https://xn--exmple-4nf.com/', host: 'xn--exmple-4nf.com' });
  });
});
