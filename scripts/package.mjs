// `npm run package [-- --out <file.vsix>]`: the .vsix of the production build. It runs vscode:prepublish
// (type check, then esbuild --production: minified, no source maps), copies what may ship (SHIPPED) into a
// staging folder and runs vsce there, where .vscodeignore lets only the bundle and its assets in. (vsce run
// in the repository walks every file before it ignores any: .tools and .scratch made that a minute.)
// Then the package is checked: it must hold exactly EXPECTED, stay under LIMIT bytes and carry the short README
// (its Marketplace page; the rest is in docs/) — otherwise it is deleted and the command fails.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT = 3_000_000;
/** The README is the user's page; test/unit/docs.test.ts holds README.md to the same limit. */
const README_MAX_LINES = 200;

/** Every entry of the .vsix (vsce adds the manifest files and renames README, CHANGELOG and LICENSE). */
const EXPECTED = [
  '[Content_Types].xml',
  'extension.vsixmanifest',
  'extension/LICENSE.txt',
  'extension/changelog.md',
  'extension/readme.md',
  'extension/package.json',
  'extension/package.nls.json',
  'extension/package.nls.zh-cn.json',
  'extension/dist/cli.js',
  'extension/dist/extension.js',
  'extension/dist/ideBridge.js',
  'extension/dist/sandbox.mjs',
  'extension/dist/webview/chat.js',
  'extension/dist/webview/chat-style.css',
  'extension/dist/webview/codicon.css',
  'extension/dist/webview/codicon.ttf',
  'extension/l10n/bundle.l10n.json',
  'extension/l10n/bundle.l10n.zh-cn.json',
  'extension/media/agent-host.svg',
  'extension/media/icon.png',
  'extension/media/walkthrough/ask.svg',
  'extension/media/walkthrough/chooseAgent.svg',
  'extension/media/walkthrough/selection.svg',
  'extension/media/walkthrough/signIn.svg',
  'extension/resources/acp-registry/registry.json',
];

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const outArg = process.argv.indexOf('--out');
const out = path.resolve(outArg > 0 ? process.argv[outArg + 1] : path.join(ROOT, `${pkg.name}-${pkg.version}.vsix`));

/** What is copied to the staging folder (.vscodeignore then narrows dist/ to the bundles). */
const SHIPPED = ['.vscodeignore', 'package.json', 'package.nls.json', 'package.nls.zh-cn.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'dist', 'media', 'l10n', 'resources'];

// No stdin: a question fails the run instead of waiting forever.
const prepublish = spawnSync('npm', ['run', '--silent', 'vscode:prepublish'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
if (prepublish.status !== 0) fail(`npm run vscode:prepublish failed (${prepublish.status ?? prepublish.signal})`);
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-host-package-'));
let run;
try {
  for (const name of SHIPPED) fs.cpSync(path.join(ROOT, name), path.join(stage, name), { recursive: true });
  // Built above: vsce must not build again in a folder without the sources.
  const manifest = JSON.parse(fs.readFileSync(path.join(stage, 'package.json'), 'utf8'));
  delete manifest.scripts['vscode:prepublish'];
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const vsce = path.join(ROOT, 'node_modules/@vscode/vsce/vsce');
  run = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--out', out], { cwd: stage, stdio: ['ignore', 'inherit', 'inherit'] });
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
if (run.status !== 0) fail(`vsce package failed (${run.status ?? run.signal})`);

const zip = fs.readFileSync(out);
const entries = zipEntries(zip);
const names = entries.map((e) => e.name);
const extra = names.filter((n) => !EXPECTED.includes(n));
const missing = EXPECTED.filter((n) => !names.includes(n));
if (extra.length || missing.length) {
  fail(`the package does not hold exactly the expected files${extra.length ? `\n  not expected: ${extra.join(', ')}` : ''}${missing.length ? `\n  missing: ${missing.join(', ')}` : ''}`);
}
const maps = names.filter((n) => n.endsWith('.map'));
if (maps.length) fail(`source maps in the package: ${maps.join(', ')}`);
const size = fs.statSync(out).size;
if (size > LIMIT) fail(`the package is ${size} bytes, over the limit of ${LIMIT}`);
const readme = entryText(
  zip,
  entries.find((e) => e.name === 'extension/readme.md'),
);
const readmeLines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
if (readmeLines > README_MAX_LINES) fail(`the packaged readme.md has ${readmeLines} lines, over ${README_MAX_LINES}: it is the Marketplace page, the rest goes to docs/`);
if (!/^npm start /m.test(readme) || !/^npm test /m.test(readme)) fail('the packaged readme.md does not show `npm start` and `npm test`');

const unpacked = entries.reduce((sum, e) => sum + e.size, 0);
const shown = path.relative(process.cwd(), out).startsWith('..') ? out : path.relative(process.cwd(), out);
console.log(`[package] ${shown}: ${(size / 1e6).toFixed(2)} MB (limit ${LIMIT / 1e6} MB), ${entries.length} files, ${(unpacked / 1e6).toFixed(2)} MB unpacked`);

function fail(message) {
  fs.rmSync(out, { force: true });
  console.error(`[package] FAIL: ${message}`);
  process.exit(1);
}

/** Names, uncompressed sizes and where the data is, from a zip's central directory (a .vsix is a zip; no dependency needed). */
function zipEntries(buf) {
  let end = buf.length - 22;
  while (end >= 0 && buf.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error('not a zip file: no end of central directory');
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const list = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`bad central directory entry at ${at}`);
    const nameLength = buf.readUInt16LE(at + 28);
    const skip = nameLength + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
    list.push({
      name: buf.toString('utf8', at + 46, at + 46 + nameLength),
      size: buf.readUInt32LE(at + 24),
      method: buf.readUInt16LE(at + 10),
      compressed: buf.readUInt32LE(at + 20),
      offset: buf.readUInt32LE(at + 42),
    });
    at += 46 + skip;
  }
  return list;
}

/** One entry's text: stored (0) or deflated (8), the only methods vsce writes. */
function entryText(buf, entry) {
  const start = entry.offset + 30 + buf.readUInt16LE(entry.offset + 26) + buf.readUInt16LE(entry.offset + 28);
  const data = buf.subarray(start, start + entry.compressed);
  return (entry.method === 8 ? inflateRawSync(data) : data).toString('utf8');
}
