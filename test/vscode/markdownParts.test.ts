/**
 * Long blocks streamed (webview-ui/src/streamed.ts, openBlock.ts, segments.ts) in headless Chromium: on a
 * corpus of real answers and adversarial ones — one paragraph of 4 MB, a 20,000-line fence, a fence that
 * never closes, a line of 1 MB — the streamed render ends exactly as the whole text renders (the layout
 * wrappers aside), and a long open block keeps its settled parts (the same nodes) while text streams onto it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withMarkdownPage } from './markdownPage';

interface Outcome {
  name: string;
  chars: number;
  chunks: number;
  same: boolean;
  firstDiff: string;
  parts: number;
  groups: number;
  kept: boolean;
  highlighted: number;
  wholeMs: number;
  streamMs: number;
}

test('long blocks stream exactly as the whole text renders, settled parts rendered once', { timeout: 600_000 }, async () => {
  await withMarkdownPage('<div id="whole" class="md"></div><div id="streamed" class="md"></div>', async (page) => {
    const outcomes = await page.evaluate((): Outcome[] => {
      const md = (
        window as unknown as {
          MD: { renderMarkdown(s: string): DocumentFragment; renderStreamed(b: HTMLElement, s: string, o: { complete?: boolean; appended?: boolean }): void; highlightAll(r: ParentNode): void };
        }
      ).MD;
      let seed = 7;
      const rnd = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const words = ['the', 'agent', 'reads', 'config', 'file', 'and', 'writes', 'result', 'then', 'checks', 'each', 'value', 'again'];
      const marks = ['`parseConfig()`', '**bold**', '_emphasis_', '[the docs](https://example.com/docs)', 'snake_case', 'www.example.com', '`a_b`', '~~old~~'];
      /** `n` characters of prose: words, some balanced markup, a line break every ~`line` characters (0: none). */
      const prose = (n: number, line: number, markup = 0.05) => {
        const out: string[] = ['Start'];
        let len = 5;
        let col = 0;
        while (len < n) {
          const w = rnd() < markup ? pick(marks) : pick(words);
          const sep = line && col > line ? '\n' : ' ';
          col = sep === '\n' ? 0 : col + w.length + 1;
          out.push(sep, w);
          len += w.length + 1;
        }
        return out.join('');
      };
      const codeLines = (n: number) => Array.from({ length: n }, (_, i) => `  const value${i} = compute(${i}, "text /* not a comment */"); // line ${i}`).join('\n');
      const answer = [
        '# Plan',
        '',
        'I read `src/app.ts` first. The config loader is in **one place**:',
        '',
        '1. parse the config',
        '2. validate it',
        '',
        '```ts',
        codeLines(40),
        '```',
        '',
        prose(30_000, 0, 0.08),
        '',
        '| file | change |',
        '|---|---|',
        '| a.ts | + 3 |',
        '',
        '```python',
        Array.from({ length: 600 }, (_, i) => `def f${i}(x):\n    """doc ${i}"""\n    return x * ${i}`).join('\n'),
        '```',
        '',
        'Done: see [the diff](https://example.com/diff).',
      ].join('\n');
      const docs: [string, string][] = [
        ['a real answer: plan, code, a long paragraph, a table', answer],
        ['one paragraph of 4 MB', prose(4_000_000, 0, 0)],
        ['a paragraph of 300 KB with markup and line breaks', prose(300_000, 90)],
        ['a 20,000-line fence', `Here it is:\n\n\`\`\`ts\n${codeLines(20_000)}\n\`\`\`\n\nThat is the file.`],
        ['a fence that never closes', `\`\`\`python\n${codeLines(3000)}\n`],
        ['a line of 1 MB in a fence', `\`\`\`\n${'x'.repeat(1_000_000)}\nshort\n\`\`\`\n\nafter`],
        ['a word of 300 KB (no space to cut at)', 'y'.repeat(300_000)],
        ['an emphasis never closed', `Start *open ${prose(100_000, 0, 0)}`],
        ['a paragraph that turns into a heading', `${prose(40_000, 80, 0)}\n===\n\nnext`],
        ['a paragraph a table interrupts', `${prose(30_000, 80, 0)}\n| a | b |\n|---|---|\n| 1 | 2 |\n`],
        ['a paragraph, a list, a fence closed by a longer run', `${prose(20_000, 0)}\n- item\n\n\`\`\`\`js\n${codeLines(300)}\n\`\`\`\`\`\ntext after`],
        ['a paragraph a heading ends, a message ending in a list item', `${prose(20_000, 70)}\n# Next\n${prose(10_000, 0)}\n* last item`],
      ];
      // The layout wrappers aside, the same elements; a render's private class nonce aside.
      const flat = (el: HTMLElement) => {
        const clone = el.cloneNode(true) as HTMLElement;
        for (const w of clone.querySelectorAll('.md-part, .md-tail')) w.replaceWith(...w.childNodes);
        return clone.innerHTML.replace(/ah-code-[0-9a-f]+-\d+/g, '');
      };
      const whole = document.getElementById('whole')!;
      const streamed = document.getElementById('streamed')!;
      const out: Outcome[] = [];
      for (const [name, doc] of docs) {
        const t0 = performance.now();
        whole.replaceChildren(md.renderMarkdown(doc));
        const wholeMs = performance.now() - t0;
        const w = flat(whole);
        // Big documents in ~150 batches (a frame's worth each), small ones in an odd size (the answer also in a small one).
        for (const size of doc.length > 200_000 ? [Math.ceil(doc.length / 150)] : name.startsWith('a real answer') ? [61, 997] : [997]) {
          streamed.replaceChildren();
          let first: Element | null = null;
          let chunks = 0;
          const t1 = performance.now();
          for (let i = 0; i < doc.length; i += size) {
            md.renderStreamed(streamed, doc.slice(0, i + size), { complete: false, appended: true });
            // Tracked from the second batch on: the first renders the text afresh, as a page of history does.
            if (i > 0) first ??= streamed.querySelector('.md-seg');
            chunks++;
          }
          // The message is whole: a code block left open is final.
          md.renderStreamed(streamed, doc, { complete: true, appended: true });
          const streamMs = performance.now() - t1;
          const s = flat(streamed);
          let at = 0;
          while (at < s.length && s[at] === w[at]) at++;
          out.push({
            name,
            chars: doc.length,
            chunks,
            same: s === w,
            firstDiff: s === w ? '' : `at ${at}: whole …${w.slice(Math.max(0, at - 60), at + 60)}… streamed …${s.slice(Math.max(0, at - 60), at + 60)}…`,
            parts: streamed.querySelectorAll('.md-seg').length,
            groups: streamed.querySelectorAll('.md-grp').length,
            kept: first === null || (first.isConnected && streamed.querySelector('.md-seg') === first),
            highlighted: (() => {
              if (doc.length > 2_000_000) return -1; // highlighting all of it is not what this checks
              md.highlightAll(whole);
              md.highlightAll(streamed);
              return flat(streamed) === flat(whole) ? streamed.querySelectorAll('[class^="hljs-"]').length : -2;
            })(),
            wholeMs: Math.round(wholeMs),
            streamMs: Math.round(streamMs),
          });
        }
      }
      return out;
    });
    if (process.env.MD_PARTS_TIMES) console.log(outcomes.map((o) => `${o.name}: whole ${o.wholeMs} ms, streamed ${o.streamMs} ms, ${o.parts} parts`).join('\n'));
    for (const o of outcomes) assert.ok(o.same, `${o.name} (${o.chars} chars in ${o.chunks} batches): the streamed render differs from the whole one ${o.firstDiff}`);
    // A paragraph that turns out to be a heading or a table's header is rendered afresh: its parts with it.
    const turns = ['a paragraph that turns into a heading', 'a paragraph a table interrupts'];
    for (const o of outcomes) if (!turns.includes(o.name)) assert.ok(o.kept, `${o.name}: its first settled part was rendered again`);
    const by = (name: string) => outcomes.find((o) => o.name === name)!;
    assert.ok(by('one paragraph of 4 MB').parts >= 1500, `4 MB paragraph in parts: ${by('one paragraph of 4 MB').parts}`);
    assert.ok(by('a 20,000-line fence').parts >= 400, `20,000-line fence in parts: ${by('a 20,000-line fence').parts}`);
    // Every part but the last in groups of 32 (what the browser checks each frame grows with the groups), streamed as rendered whole.
    for (const name of ['one paragraph of 4 MB', 'a 20,000-line fence']) assert.equal(by(name).groups, Math.ceil((by(name).parts - 1) / 32), `${name}: groups of 32 parts`);
    for (const o of outcomes) assert.notEqual(o.highlighted, -2, `${o.name}: highlighted, the streamed render differs from the whole one`);
    assert.ok(by('a 20,000-line fence').highlighted > 20_000, 'the long fence is highlighted, part by part');
    assert.ok(by('a fence that never closes').highlighted > 3000, 'the fence left open is highlighted once the message is whole');
    assert.ok(by('a real answer: plan, code, a long paragraph, a table').highlighted > 1000, "the answer's code is highlighted");
    assert.ok(by('a fence that never closes').parts >= 60, 'the unclosed fence in parts');
    assert.equal(by('a line of 1 MB in a fence').parts, 124, 'a 1 MB line: 123 plain pieces of 8,192 characters, and the short line after');
    assert.equal(by('an emphasis never closed').parts, 0, 'nothing settles after an emphasis that never closes');
    assert.equal(by('a paragraph that turns into a heading').parts, 0, 'a heading is no paragraph: no parts');
  });
});

test('a long code block is highlighted group by group, as each comes near the viewport', { timeout: 300_000 }, async () => {
  const html = '<div id="whole" class="md" style="height: 400px; overflow: auto"></div><div id="streamed" class="md" style="height: 400px; overflow: auto"></div>';
  await withMarkdownPage(html, async (page) => {
    const lit = (id: string) =>
      page.evaluate((id) => {
        const groups = [...document.querySelectorAll(`#${id} .md-grp`)];
        return { groups: groups.length, lit: groups.map((g) => g.querySelector('[class^="hljs-"]') !== null), waiting: document.querySelectorAll(`#${id} .md-hl`).length };
      }, id);
    await page.evaluate(() => {
      const md = (window as unknown as { MD: { renderMarkdown(s: string): DocumentFragment; renderStreamed(b: HTMLElement, s: string, o: { complete?: boolean; appended?: boolean }): void } }).MD;
      const doc = `\`\`\`ts\n${Array.from({ length: 20_000 }, (_, i) => `const value${i} = compute(${i}); // line ${i}`).join('\n')}\n\`\`\``;
      document.getElementById('whole')!.replaceChildren(md.renderMarkdown(doc));
      const streamed = document.getElementById('streamed')!;
      for (let i = 0; i < doc.length; i += 20_000) md.renderStreamed(streamed, doc.slice(0, i + 20_000), { complete: false, appended: true });
      md.renderStreamed(streamed, doc, { complete: true, appended: true });
    });
    for (const id of ['whole', 'streamed']) {
      // The first group is on screen: highlighted in idle time; the last one, 20,000 lines down, is not.
      await page.waitForFunction((id) => document.querySelector(`#${id} .md-grp [class^="hljs-"]`) !== null, id, { timeout: 30_000 });
      const top = await lit(id);
      assert.ok(top.groups >= 12, `${id}: ${top.groups} groups`);
      assert.ok(top.lit[0] && !top.lit.at(-1), `${id}: the first group highlighted, not the last: ${top.lit.join(' ')}`);
      assert.ok(top.waiting > 300, `${id}: parts far from the viewport still wait (${top.waiting})`);
      // Scrolled to a group half-way down: it is highlighted (as one); then to the end: the loose parts after the last group.
      const mid = Math.floor(top.groups / 2);
      await page.evaluate(([id, mid]) => document.querySelectorAll(`#${id} .md-grp`)[mid]!.scrollIntoView(), [id, mid] as const);
      await page.waitForFunction(([id, mid]) => document.querySelectorAll(`#${id} .md-grp`)[mid]!.querySelector('[class^="hljs-"]') !== null, [id, mid] as const, { timeout: 30_000 });
      await page.evaluate((id) => {
        const el = document.getElementById(id)!;
        el.scrollTop = el.scrollHeight;
      }, id);
      await page.waitForFunction((id) => [...document.querySelectorAll(`#${id} .md-seg`)].at(-1)?.querySelector('[class^="hljs-"]') !== null, id, { timeout: 30_000 });
      const end = await lit(id);
      assert.ok(end.lit[mid] && !end.lit[1] && end.waiting < top.waiting, `${id}: the group half-way down highlighted, not the second (${end.waiting} parts wait)`);
    }
  });
});
