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
