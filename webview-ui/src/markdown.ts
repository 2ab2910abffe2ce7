/**
 * Agent output is untrusted. Markdown goes through marked with our renderer, then DOMPurify; the CSP is the
 * last wall.
 * - Raw HTML the agent writes (block or inline) is shown as text, never rendered: only what markdown syntax
 *   produces reaches the page, and DOMPurify keeps exactly that allowlist (MARKDOWN_TAGS, MARKDOWN_ATTRS: no
 *   `hidden`, no `style`, no `img`, no forms, frames or scripts; `javascript:`/`data:` links lose their href).
 *   Markdown images become a placeholder link with an image icon and the alt text (nothing is fetched); a link that loses its href is plain text; task-list
 *   boxes become ☐/☑.
 * - Code blocks are highlighted with highlight.js (a few languages). The code of each block comes from the
 *   markdown SOURCE (the token marked produced), kept on the `<pre>` as `codeText` and marked with a per-render
 *   nonce the agent cannot forge; only such blocks get action buttons (added as DOM after sanitizing, so nothing
 *   the agent wrote can pose as one), and only when their visible text is exactly that code.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

for (const [name, lang] of Object.entries({ bash, css, diff, go, java, javascript, json, markdown, python, rust, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['md'], { languageName: 'markdown' });

export const SHELL_LANGS = new Set(['bash', 'sh', 'shell', 'zsh', 'console', 'powershell', 'ps1', 'cmd', 'bat', 'fish']);

const marked = new Marked({ gfm: true, breaks: false, async: false });

/** A `<pre>` produced by our code renderer: the block's code as the markdown source has it. */
export type CodePre = HTMLPreElement & { codeText?: string };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function highlight(code: string, lang: string | undefined): string {
  const l = lang?.toLowerCase();
  try {
    if (l && hljs.getLanguage(l)) return hljs.highlight(code, { language: l, ignoreIllegals: true }).value;
    if (!l && code.length < 4000) return hljs.highlightAuto(code).value;
  } catch {
    // fall through to plain text
  }
  return escapeHtml(code);
}

/** The code blocks of the render in progress, and the class that names them (renderMarkdown is synchronous). */
let blocks: { marker: string; codes: string[] } | undefined;

marked.use({
  renderer: {
    code({ text, lang }) {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const classes = ['hljs', ...(language ? [`language-${escapeHtml(language)}`] : [])];
      if (blocks) classes.push(`${blocks.marker}${blocks.codes.push(text) - 1}`);
      return `<pre><code class="${classes.join(' ')}">${highlight(text, language || undefined)}</code></pre>\n`;
    },
    // Raw HTML is the agent's text, not markup.
    html({ text, block }: { text: string; block?: boolean }) {
      return block ? `<p>${escapeHtml(text.trim())}</p>\n` : escapeHtml(text);
    },
    // Nothing is fetched for an image: it becomes a small placeholder — an image icon and its alt text —
    // linking to it (never a broken-image icon).
    image({ href, text }) {
      // Its classes carry this render's nonce: the agent's own class attributes are dropped below, ours kept.
      const mark = blocks?.marker ?? 'none-';
      return `<a class="${mark}image" href="${escapeHtml(href)}" title="${escapeHtml(href)}"><span class="${mark}image-icon"></span>${escapeHtml(text || href)}</a>`;
    },
    checkbox({ checked }) {
      return checked ? '☑ ' : '☐ ';
    },
  },
});

const SAFE_HREF = /^(https?:|mailto:|file:|#|\/|\.{0,2}\/|[\w.-]+(\/|\.\w+))/i;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') ?? '';
    if (!SAFE_HREF.test(href) || /^\s*(javascript|vbscript|data):/i.test(href)) node.removeAttribute('href');
    node.setAttribute('rel', 'noopener noreferrer');
    node.removeAttribute('target');
  }
});

/** Everything our markdown renderer produces, and nothing else, survives sanitizing. */
export const MARKDOWN_TAGS = [
  'p',
  'br',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'span',
  'a',
  'ul',
  'ol',
  'li',
  'blockquote',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
];
export const MARKDOWN_ATTRS = ['href', 'title', 'class', 'start', 'align'];

// Set once: a config passed to each sanitize() call is parsed again on every call (a cost per message).
DOMPurify.setConfig({
  ALLOWED_TAGS: [...MARKDOWN_TAGS],
  ALLOWED_ATTR: [...MARKDOWN_ATTRS],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
});

function nonce(): string {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Markdown → a sanitized fragment; only highlight.js and `language-*` classes are kept. Each code block's
 * `<pre>` carries its source code as `codeText` (see CodePre).
 */
export function renderMarkdown(src: string): DocumentFragment {
  const render = { marker: `ah-code-${nonce()}-`, codes: [] as string[] };
  blocks = render;
  let html: string;
  try {
    html = marked.parse(src) as string;
  } finally {
    blocks = undefined;
  }
  const frag = DOMPurify.sanitize(html) as unknown as DocumentFragment;
  for (const code of frag.querySelectorAll('pre > code[class]')) {
    const mark = [...code.classList].find((c) => c.startsWith(render.marker));
    const text = mark === undefined ? undefined : render.codes[Number(mark.slice(render.marker.length))];
    if (text !== undefined) (code.parentElement as CodePre).codeText = text;
  }
  // A link whose href was refused (javascript:, data:, …) is no link: its text stays, as plain text.
  for (const a of frag.querySelectorAll('a:not([href])')) a.replaceWith(...a.childNodes);
  // Our renderer's classes survive; the agent's own class attributes do not.
  const ours: Record<string, string[]> = { [`${render.marker}image`]: ['md-image'], [`${render.marker}image-icon`]: ['codicon', 'codicon-file-media'] };
  for (const el of frag.querySelectorAll('[class]')) {
    const kept = [...el.classList].flatMap((c) => ours[c] ?? (c === 'hljs' || c.startsWith('hljs-') || c.startsWith('language-') ? [c] : []));
    el.className = kept.join(' ');
    if (!kept.length) el.removeAttribute('class');
  }
  return frag;
}

/** What a streamed body shows: the source rendered so far, and where its settled blocks end. */
interface Streamed {
  src: string;
  stable: number;
  tail: HTMLElement;
}
const streamed = new WeakMap<HTMLElement, Streamed>();

/**
 * Renders `src` into `body` — incrementally when `src` extends what `body` shows (a streamed message): the
 * settled blocks (everything before the last block boundary) are rendered once and kept, only the open end
 * is rendered again, so a batch costs its own length, not the message's. The same text again renders
 * nothing; anything else renders afresh, in one piece.
 * `decorate` runs on each newly rendered part (code-block actions).
 */
export function renderStreamed(body: HTMLElement, src: string, decorate?: (part: HTMLElement) => void): void {
  const st = streamed.get(body);
  if (st && st.src === src && st.tail.parentElement === body) return; // unchanged: nothing to render
  if (!st || !src.startsWith(st.src) || st.tail.parentElement !== body) {
    // Afresh: one render of the whole text (a page of the transcript loads many messages); it is split into
    // settled parts only when text is streamed onto it.
    const tail = document.createElement('div');
    tail.className = 'md-tail';
    tail.append(renderMarkdown(src));
    decorate?.(tail);
    body.replaceChildren(tail);
    streamed.set(body, { src, stable: 0, tail });
    return;
  }
  const boundary = blockBoundary(src, st.stable);
  if (boundary > st.stable) {
    const part = document.createElement('div');
    part.className = 'md-part';
    part.append(renderMarkdown(src.slice(st.stable, boundary)));
    decorate?.(part);
    body.insertBefore(part, st.tail);
    st.stable = boundary;
  }
  st.tail.replaceChildren(renderMarkdown(src.slice(boundary)));
  decorate?.(st.tail);
  st.src = src;
}

/**
 * The last block boundary in `src` at or after `from` (itself a boundary, outside any code fence): the start
 * of a line that begins at column 0 after a blank line, outside fenced code, and is not a list item (which
 * would continue a list above), read on whole lines only. Everything before it is settled: a later chunk
 * cannot change how it renders.
 */
export function blockBoundary(src: string, from: number): number {
  let best = from;
  let fence: string | undefined;
  let prevBlank = false;
  let pos = from;
  for (;;) {
    const nl = src.indexOf('\n', pos);
    // The last line may still grow ("3" becomes "3. item"): only whole lines are read.
    if (nl < 0) break;
    const line = src.slice(pos, nl);
    if (fence === undefined) {
      // A list item after a blank line continues its list (a loose list): never a boundary.
      if (prevBlank && /^\S/.test(line) && !/^(?:[-+*]|\d{1,9}[.)])(?:\s|$)/.test(line)) best = pos;
      const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (open) fence = open[1];
      prevBlank = !open && line.trim() === '';
    } else {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length) fence = undefined;
      prevBlank = false;
    }
    pos = nl + 1;
  }
  return best;
}
