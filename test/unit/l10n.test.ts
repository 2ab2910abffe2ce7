/**
 * Every user-facing string is translated: the English bundle is exactly what `@vscode/l10n-dev export`
 * finds in src/ today (`npm run l10n` regenerates it), the Chinese bundle and package.nls.zh-cn.json have
 * every key, non-empty, with the same placeholders.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { NOTICE_TEXTS } from '../../src/session/notices';
import { repoRoot, scratchDir } from '../support/paths';

const read = (rel: string) => JSON.parse(fs.readFileSync(path.join(repoRoot, rel), 'utf8')) as Record<string, string>;
const placeholders = (s: string) =>
  [...s.matchAll(/\{(\d+)\}/g)]
    .map((m) => m[1])
    .sort()
    .join(',');

test('l10n: the English bundle is what the extractor finds in src/ now', () => {
  const out = scratchDir('l10n');
  execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/@vscode/l10n-dev/dist/cli.js'), 'export', '-o', out, path.join(repoRoot, 'src')], { stdio: 'pipe' });
  const fresh = JSON.parse(fs.readFileSync(path.join(out, 'bundle.l10n.json'), 'utf8')) as Record<string, string>;
  const committed = read('l10n/bundle.l10n.json');
  assert.deepEqual(Object.keys(committed).sort(), Object.keys(fresh).sort(), 'l10n/bundle.l10n.json is stale: run npm run l10n, then translate the new strings');
  assert.ok(Object.keys(fresh).length > 200);
});

test('l10n: every string has a Chinese translation with the same placeholders', () => {
  for (const [en, zh] of [
    ['l10n/bundle.l10n.json', 'l10n/bundle.l10n.zh-cn.json'],
    ['package.nls.json', 'package.nls.zh-cn.json'],
  ] as const) {
    const source = read(en);
    const target = read(zh);
    const missing = Object.keys(source).filter((k) => !target[k]?.trim());
    assert.deepEqual(missing, [], `${zh} lacks translations`);
    const extra = Object.keys(target).filter((k) => !(k in source));
    assert.deepEqual(extra, [], `${zh} has keys no longer used`);
    for (const [k, v] of Object.entries(source)) {
      assert.equal(placeholders(target[k]!), placeholders(en.startsWith('l10n') ? k : v), `${zh}: placeholders of "${k}"`);
    }
  }
});

/** Every file under `dir` (relative to the repo) with its text. */
function sources(dir: string): { file: string; text: string }[] {
  return fs
    .readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: path.join(dir, f), text: fs.readFileSync(path.join(repoRoot, dir, f), 'utf8') }));
}

test('l10n: a notice built outside src/views says its title from the notice catalog, never as English text', () => {
  const worded: string[] = [];
  for (const { file, text } of sources('src')) {
    if (file.startsWith(`src${path.sep}views${path.sep}`)) continue;
    // `.notice(severity, 'Title'…`, or a notice entity written out with a title of its own.
    for (const m of text.matchAll(/\.notice\(\s*[^,]*,\s*(['"`][^'"`]*)/g)) worded.push(`${file}: notice(…, ${m[1]}`);
    for (const m of text.matchAll(/kind: 'notice'[^}]*?title: (['"`][^'"`]+)/g)) worded.push(`${file}: title ${m[1]}`);
  }
  assert.deepEqual(worded, [], 'word these through src/session/notices.ts (a phrase), so the editor shows them in the person language');
});

test('l10n: the notice catalog is in both bundles, and the editor table words each key with the catalog text', () => {
  const en = read('l10n/bundle.l10n.json');
  const zh = read('l10n/bundle.l10n.zh-cn.json');
  const table = fs.readFileSync(path.join(repoRoot, 'src/manager/noticeTexts.ts'), 'utf8');
  const literals = new Map([...table.matchAll(/^\s+(\w+): \(a?\) => vscode\.l10n\.t\((['"])(.*?)\2[,)]/gm)].map((m) => [m[1], m[3]!.replace(/\\'/g, "'")]));
  for (const [key, text] of Object.entries(NOTICE_TEXTS)) {
    assert.ok(en[text], `l10n/bundle.l10n.json lacks the notice "${text}"`);
    assert.ok(zh[text]?.trim(), `l10n/bundle.l10n.zh-cn.json lacks the notice "${text}"`);
    assert.equal(literals.get(key), text, `src/manager/noticeTexts.ts words ${key} otherwise than the catalog`);
  }
  assert.equal(literals.size, Object.keys(NOTICE_TEXTS).length);
});
