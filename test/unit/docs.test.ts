/**
 * The README is the short page a user reads (also the .vsix's Marketplace page); the rest lives in docs/ and
 * CONTRIBUTING.md. Checked here: the README's length and its two commands, that every doc is reachable from it
 * by a relative link, and that every relative link and image in the docs points at a file and heading that exist.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/paths';

/** The README's limit; scripts/package.mjs holds the packaged readme to the same. */
const README_MAX_LINES = 200;

const read = (rel: string): string => fs.readFileSync(path.join(repoRoot, rel), 'utf8');
const readme = read('README.md');
const docs = [
  'CONTRIBUTING.md',
  ...fs
    .readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(markdown: string): Set<string> {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Link and image targets outside code blocks and code spans. */
function links(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

test(`README.md has at most ${README_MAX_LINES} lines and the two commands of a fresh machine`, () => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines, over ${README_MAX_LINES}: move the detail to docs/`);
  const blocks = [...readme.matchAll(/^```bash\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  for (const command of ['npm start', 'npm test']) {
    assert.ok(
      blocks.some((b) => b.split('\n').some((l) => l.startsWith(`${command} `))),
      `README.md shows \`${command}\` as a command`,
    );
  }
  assert.match(readme, /PORT=\d+ npm start/, 'README.md says how to pick another port');
  assert.match(read('.ci/run'), /^npm test$/m, ".ci/run runs the README's test command");
});

test('every doc is linked from README.md, by a relative link', () => {
  const targets = new Set(links(readme).map((l) => l.split('#')[0]));
  const unlinked = docs.filter((d) => !targets.has(d));
  assert.deepEqual(unlinked, [], `not linked from README.md: ${unlinked.join(', ')}`);
  const absolute = links(readme).filter((l) => /^https?:\/\/[^)]*\/(docs\/[^)]*|CONTRIBUTING)\.md/.test(l));
  assert.deepEqual(absolute, [], 'links to the docs must be relative (vsce rewrites them for the Marketplace page)');
});

test('every relative link and image in README.md, CONTRIBUTING.md and docs/ points at a file and heading that exist', () => {
  const broken: string[] = [];
  for (const file of ['README.md', ...docs]) {
    const markdown = read(file);
    for (const link of links(markdown)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [target = '', anchor] = link.split('#');
      const resolved = target ? path.join(path.dirname(file), target) : file;
      if (!fs.existsSync(path.join(repoRoot, resolved))) {
        broken.push(`${file}: ${link} (no ${resolved})`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor)) broken.push(`${file}: ${link} (no heading #${anchor} in ${resolved})`);
    }
  }
  assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
});
