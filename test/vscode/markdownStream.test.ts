/**
 * The chat page's streamed markdown (webview-ui/src/markdown.ts `renderStreamed`) in headless Chromium: a
 * message streamed in chunks of every size renders exactly as the whole text rendered at once (the settled
 * blocks are rendered once and kept, only the open end again), and streaming a long message costs what was
 * streamed, not the message's length (the settled part is never rendered again).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withMarkdownPage } from './markdownPage';

const SAMPLE = [
  '# Plan',
  '',
  'First I read `src/app.ts`, then:',
  '',
  '1. parse the config',
  '2. validate it',
  '',
  '3. write the result (a loose list: the blank line above must not split it)',
  '',
  '- a bullet',
  '  with a lazy line',
  '',
  '  and an indented paragraph of the same item',
  '',
  '```ts',
  'function greet(name: string): string {',
  '',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source in the streamed markdown, not a template
  '  return `hi ${name}`;',
  '}',
  '```',
  '',
  '> a quote',
  '> on two lines',
  '',
  '| a | b |',
  '|---|---|',
  '| 1 | 2 |',
  '',
  '~~~~',
  '```not a close',
  '',
  '~~~~',
  '',
  'Raw <b>html</b> stays text, **bold** and _em_ work.',
  '',
  '    indented code',
  '',
  '    more of it',
  '',
  'The end.',
].join('\n');

test('streamed markdown renders exactly as the whole text, and only the open end is rendered again', { timeout: 120_000 }, async () => {
  await withMarkdownPage('<div id="whole" class="md"></div><div id="streamed" class="md"></div>', async (page) => {
    const result = await page.evaluate((sample) => {
      const md = (window as unknown as { MD: { renderMarkdown(s: string): DocumentFragment; renderStreamed(b: HTMLElement, s: string): void } }).MD;
      // Wrappers aside, the same elements: the parts only group settled blocks.
      const flat = (el: HTMLElement) => {
        const clone = el.cloneNode(true) as HTMLElement;
        for (const w of clone.querySelectorAll('.md-part, .md-tail')) w.replaceWith(...w.childNodes);
        return clone.innerHTML.replace(/ah-code-[0-9a-f]+-\d+/g, '');
      };
      const whole = document.getElementById('whole')!;
      whole.append(md.renderMarkdown(sample));
      const out: { size: number; same: boolean; parts: number }[] = [];
      for (const size of [1, 2, 3, 7, 16, 61, 500]) {
        const el = document.getElementById('streamed')!;
        el.replaceChildren();
        for (let i = 0; i < sample.length; i += size) md.renderStreamed(el, sample.slice(0, i + size));
        out.push({ size, same: flat(el) === flat(whole), parts: el.querySelectorAll(':scope > .md-part').length });
      }
      // Cost: a 400-paragraph message streamed 20 characters at a time; the first paragraph's element,
      // once settled, is the same node at the end (never rendered again), and the open end stays small.
      const el = document.getElementById('streamed')!;
      el.replaceChildren();
      const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} with some **words** in it.`).join('\n\n');
      let first: Element | null = null;
      let maxTail = 0;
      for (let i = 0; i < long.length; i += 20) {
        md.renderStreamed(el, long.slice(0, i + 20));
        first ??= el.querySelector(':scope > .md-part p');
        maxTail = Math.max(maxTail, el.querySelector(':scope > .md-tail')!.textContent!.length);
      }
      const kept = first !== null && el.querySelector(':scope > .md-part p') === first && first.isConnected;
      return { out, kept, maxTail, paragraphs: el.querySelectorAll('p').length, whole: flat(whole).length };
    }, SAMPLE);
    for (const r of result.out) assert.ok(r.same, `chunks of ${r.size}: the streamed render differs from the whole one`);
    // Streamed finely, the settled blocks are several parts rendered once each.
    assert.ok(
      result.out.filter((r) => r.size <= 61).every((r) => r.parts >= 5),
      `settled parts kept: ${result.out.map((r) => r.parts).join(', ')}`,
    );
    assert.ok(result.whole > 500, 'the sample rendered');
    assert.ok(result.kept, 'a settled paragraph was rendered again');
    assert.equal(result.paragraphs, 400);
    assert.ok(result.maxTail < 100, `the open end grew to ${result.maxTail} characters`);
  });
});

test('block boundaries: after a blank line at column 0, never inside a fence or before a list item', { timeout: 60_000 }, async () => {
  await withMarkdownPage('', async (page) => {
    const cases: [string, number, number, string][] = [
      ['para one\n\npara two\n', 0, 10, 'a paragraph after a blank line'],
      ['para one\n\npara', 0, 0, 'a partial last line may still become a list item: not yet'],
      ['para one\n\n3\n', 0, 10, 'a whole line that is no list item'],
      ['```\ncode\n\nmore\n', 0, 0, 'inside an open fence nothing is settled'],
      ['```\ncode\n\n```\n\nafter\n', 0, 15, 'after the fence closed'],
      ['1. a\n\n2. b\n', 0, 0, 'a list item continues the list'],
      ['- a\n\n  indented\n', 0, 0, 'an indented line continues the item'],
      ['x\n\ny\n\nz\n', 3, 6, 'from a boundary on'],
    ];
    const got = await page.evaluate((cs) => cs.map(([src, from]) => (window as unknown as { MD: { blockBoundary(s: string, f: number): number } }).MD.blockBoundary(src, from)), cases);
    for (const [k, [, , want, what]] of cases.entries()) assert.equal(got[k], want, what);
  });
});

test('refused links are plain text, images are links to them (nothing fetched), raw HTML is text', { timeout: 60_000 }, async () => {
  await withMarkdownPage('<div id="out" class="md"></div>', async (page) => {
    const got = await page.evaluate(() => {
      const md = (window as unknown as { MD: { renderMarkdown(s: string): DocumentFragment } }).MD;
      const el = document.getElementById('out')!;
      el.append(
        md.renderMarkdown('[dead](javascript:alert(1)) and [data](data:text/html,x) and [ok](https://example.com/a) ![logo](https://example.com/logo.png) <img src="https://example.com/x.png">'),
      );
      return {
        links: [...el.querySelectorAll('a')].map((a) => `${a.textContent ?? ''}→${a.getAttribute('href') ?? '(none)'}`),
        imgs: el.querySelectorAll('img').length,
        text: el.textContent ?? '',
      };
    });
    assert.deepEqual(got.links, ['ok→https://example.com/a', 'logo→https://example.com/logo.png'], 'only links with a kept href are links');
    assert.equal(got.imgs, 0, 'no image element: nothing is fetched');
    assert.equal(got.text.trim(), 'dead and data and ok logo <img src="https://example.com/x.png">', 'dead links keep their text; raw HTML is text');
  });
});

test('a code block highlighted while the message was whole, then streamed onto, shows its code once', { timeout: 60_000 }, async () => {
  await withMarkdownPage('<div id="out" class="md"></div>', async (page) => {
    const got = await page.evaluate(() => {
      const md = (
        window as unknown as {
          MD: { renderStreamed(b: HTMLElement, s: string, o: { complete?: boolean; appended?: boolean }): void; highlightAll(r: ParentNode): void };
        }
      ).MD;
      const el = document.getElementById('out')!;
      const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `const value${from + i} = compute(${from + i}); // line\n`).join('');
      // Over 1 KiB, so rendered as an open block; one part (under 50 lines), left open.
      const first = `\`\`\`ts\n${lines(0, 40)}`;
      md.renderStreamed(el, first, { complete: true });
      md.highlightAll(el);
      const highlighted = el.querySelectorAll('[class^="hljs-"]').length;
      md.renderStreamed(el, first + lines(40, 5), { complete: true, appended: true });
      return { highlighted, text: el.querySelector('code')?.textContent ?? '', want: lines(0, 45).replace(/\n$/, '') };
    });
    assert.ok(got.highlighted > 40, 'the open block was highlighted once the message was whole');
    assert.equal(got.text, got.want, 'the code shows once, with the lines streamed after');
  });
});
