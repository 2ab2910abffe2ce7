/**
 * What the host opens on an agent's word (src/host/openTargets.ts, which the views call before the OS opener):
 * the URLs of url-mode elicitations.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { elicitationUrl } from '../../src/host/openTargets';

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
