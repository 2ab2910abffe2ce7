/**
 * The rules that cut a long paragraph into parts (webview-ui/src/segments.ts), against marked itself: on
 * generated paragraphs of prose and markup, a paragraph rendered part by part is exactly the paragraph
 * marked renders whole; a cut is refused where an emphasis, code span or link is still open; code parts
 * put back together are the code.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeParts, LONG_LINE, paragraphParts, plainLine, SEG_CHARS, settled } from '../../webview-ui/src/segments';

// marked ships as an ES module only; the page's renderer uses it with these options.
interface MarkedLike {
  lexer(src: string): { type: string; text?: string }[];
  parse(src: string): string;
  parseInline(src: string): string;
}
let marked: MarkedLike;
const inline = (s: string) => marked.parseInline(s);
test.before(async () => {
  const { Marked } = await import('marked');
  marked = new Marked({ gfm: true, breaks: false, async: false }) as unknown as MarkedLike;
});

test('a paragraph in parts renders exactly as marked renders it whole', () => {
  let seed = 11;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const words = ['word', 'lorem', 'ipsum', 'dolor', 'x'];
  const balanced = [
    '`code_x`',
    '*em*',
    '**b**',
    '[a](b)',
    'snake_case',
    'www.ex.com',
    'http://a.b/c',
    '![i](j)',
    'a@b.co',
    '&amp;',
    '&',
    '1.',
    '#',
    '~~s~~',
    '_u_',
    '  \nword',
    '\nword',
    '\n  word',
    "'",
    '"',
    '(',
    ')',
    '!',
    '>',
  ];
  const lone = ['*', '**', '_', '`', '``', '[', ']', '<b>', '<', '\\', '\\*', '~', '~~', '![', 'x]('];
  let cuts = 0;
  let paragraphs = 0;
  for (let n = 0; n < 200; n++) {
    const lonely = rnd() < 0.5 ? 0.0003 : 0.002;
    let t = 'Start';
    while (t.length < 3 * SEG_CHARS + rnd() * 6 * SEG_CHARS) {
      const r = rnd();
      if (r < lonely) t += pick(lone);
      else if (r < 0.1) t += `${rnd() < 0.9 ? ' ' : ''}${pick(balanced)}${rnd() < 0.9 ? ' ' : ''}`;
      else t += rnd() < 0.4 ? ' ' : pick(words);
    }
    const tokens = marked.lexer(t);
    if (tokens.length !== 1 || tokens[0]!.type !== 'paragraph') continue;
    const parts = paragraphParts(tokens[0]!.text ?? '', inline);
    if (!parts) continue;
    paragraphs++;
    cuts += parts.length - 1;
    assert.equal(`<p>${parts.join('')}</p>\n`, marked.parse(t), `paragraph ${n} in ${parts.length} parts`);
  }
  // The generator must have made the rule cut, often.
  assert.ok(paragraphs > 80 && cuts > 150, `${paragraphs} paragraphs cut ${cuts} times`);
});

test('a cut is refused while something could still close across it', () => {
  for (const open of ['*open ', '**open ', '`open ', '[open ', '<open ', '~~open ', '_open ']) assert.equal(settled(inline(`Start ${open}and more words `)), false, open);
  for (const closed of ['*em* ', '`code_x` ', '[a](b) ', 'snake_case ', '~~s~~ ', 'a & b > c ']) assert.equal(settled(inline(`Start ${closed}and more `)), true, closed);
  // Text after an unclosed emphasis is never cut: the paragraph stays one part.
  assert.equal(paragraphParts(`Start *open ${'word '.repeat(4 * SEG_CHARS)}`, inline), undefined);
  // A line that could start another block makes the paragraph one piece (it may not be one paragraph).
  for (const line of ['# h', '> q', '- item', '1. item', '```', '===', '---', '<div>', '| --- |']) assert.equal(plainLine(line, false), false, line);
  for (const line of ['plain words', '2024 was a year', 'a | b', '  indented text']) assert.equal(plainLine(line, false), true, line);
  assert.equal(plainLine('  indented', true), false, 'a first line indented is code');
});

test('code parts put back together are the code; a long line is cut every LONG_LINE characters, plain', () => {
  const long = 'x'.repeat(3 * LONG_LINE + 5);
  for (const text of ['', 'a', 'a\nb', `${'line\n'.repeat(500)}end`, `short\n${long}\nafter`, `${long}`, 'a\n\n\nb\n']) {
    const parts = codeParts(text);
    assert.equal(parts.map((p) => p.text).join(''), text);
  }
  const parts = codeParts(`short\n${long}\nafter`);
  assert.deepEqual(
    parts.map((p) => [p.text.length, p.plain]),
    [
      [6, false],
      [LONG_LINE, true],
      [LONG_LINE, true],
      [LONG_LINE, true],
      [6, true],
      [5, false],
    ],
  );
});
