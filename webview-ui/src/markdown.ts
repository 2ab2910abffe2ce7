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
import { GROUP, highlightable, highlightWhenSeen, knownLanguage, PENDING } from './highlight';
import { Marked, type Token } from 'marked';
import { type CodePart, codeParts, GROUP_PARTS, LONG_PARTS, paragraphParts, SEG_CHARS } from './segments';

export const SHELL_LANGS = new Set(['bash', 'sh', 'shell', 'zsh', 'console', 'powershell', 'ps1', 'cmd', 'bat', 'fish']);

const marked = new Marked({ gfm: true, breaks: false, async: false });

/** A `<pre>` produced by our code renderer: the block's code as the markdown source has it. */
export type CodePre = HTMLPreElement & { codeText?: string };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * A code block's HTML from its parts, as plain text: highlighting comes when it is seen (highlight.ts). One
 * part is the `<code>` itself (the renderer marks it waiting); several are each a part of their own (`wrap`:
 * even one), each waiting unless it is a piece of an over-long line. `live`: the open end of a block still
 * streaming, not highlighted until it has ended.
 */
export function codeHtml(parts: CodePart[], text: string, language: string, wrap: boolean, live = false): string {
  if (parts.length <= 1 && !wrap) return escapeHtml(text);
  const known = !live && knownLanguage(language);
  const html = parts.map((p) => `<span class="${ours('seg')}${known && !p.plain ? ` ${ours('hl')}` : ''}">${escapeHtml(p.text)}</span>`);
  return wrap ? html.join('') : groupHtml(html);
}

/** A whole block's parts' HTML: all but the last in groups of GROUP_PARTS (see GROUP_PARTS). */
function groupHtml(parts: string[]): string {
  let html = '';
  for (let i = 0; i < parts.length - 1; i += GROUP_PARTS) html += `<span class="${ours('grp')}">${parts.slice(i, Math.min(i + GROUP_PARTS, parts.length - 1)).join('')}</span>`;
  return html + (parts.at(-1) ?? '');
}

/**
 * A streamed block's settled parts (`parts`, a fragment of `.md-seg`) appended to `el`, whose open end is not
 * there now: into its last group until it is full, then new ones (as groupHtml groups the whole block). Loose
 * parts already in `el` (a paragraph that has just become long) go in groups first.
 */
export function appendGrouped(el: Element, parts: DocumentFragment): void {
  let group = el.lastElementChild?.classList.contains(GROUP) ? el.lastElementChild : undefined;
  const loose = group ? [] : [...el.children].filter((c) => c.classList.contains('md-seg'));
  const touched = new Set<Element>();
  for (const part of [...loose, ...parts.children]) {
    if (!group || group.childElementCount >= GROUP_PARTS) {
      group = document.createElement('span');
      group.className = GROUP;
      el.appendChild(group);
    }
    group.appendChild(part);
    touched.add(group);
  }
  // Their code is watched group by group from now on.
  for (const g of touched) highlightWhenSeen(g);
}

/** The block tokens of `src` as renderMarkdown reads them. */
export function lexBlocks(src: string): Token[] {
  return marked.lexer(src);
}

/** Inline markdown to HTML (inside a render, its images carry the render's classes). */
export function inlineHtml(src: string): string {
  return marked.parseInline(src) as string;
}

/** Our class `name` in the render in progress (its nonce; renderHtml keeps only such classes of ours). */
function ours(name: string): string {
  return `${blocks?.marker ?? 'none-'}${name}`;
}

/** A part of a long block: kept as its own element (`.md-seg`), laid out only near the viewport. */
export function segHtml(html: string): string {
  return `<span class="${ours('seg')}">${html}</span>`;
}

/** The code blocks of the render in progress, and the class that names them (renderMarkdown is synchronous). */
let blocks: { marker: string; codes: string[] } | undefined;

marked.use({
  renderer: {
    code({ text, lang }) {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const classes = ['hljs', ...(language ? [`language-${escapeHtml(language)}`] : [])];
      const parts = codeParts(text);
      if (blocks) classes.push(`${blocks.marker}${blocks.codes.push(text) - 1}`);
      if (blocks && parts.length <= 1 && highlightable(language, text, true)) classes.push(ours('hl'));
      return `<pre><code class="${classes.join(' ')}">${codeHtml(parts, text, language, false)}</code></pre>\n`;
    },
    // A long top-level paragraph of plain lines is cut into parts (segments.ts); the rest render as marked does.
    paragraph(token) {
      if (!(token as { cut?: boolean }).cut) return false;
      const parts = paragraphParts(token.text, inlineHtml);
      if (!parts) return false;
      const long = parts.length > LONG_PARTS;
      return `<p${long ? ` class="${ours('long')}"` : ''}>${long ? groupHtml(parts.map(segHtml)) : parts.map(segHtml).join('')}</p>\n`;
    },
    // Raw HTML is the agent's text, not markup.
    html({ text, block }: { text: string; block?: boolean }) {
      return block ? `<p>${escapeHtml(text.trim())}</p>\n` : escapeHtml(text);
    },
    // Nothing is fetched for an image: it becomes a small placeholder — an image icon and its alt text —
    // linking to it (never a broken-image icon).
    image({ href, text }) {
      // Its classes carry this render's nonce: the agent's own class attributes are dropped below, ours kept.
      return `<a class="${ours('image')}" href="${escapeHtml(href)}" title="${escapeHtml(href)}"><span class="${ours('image-icon')}"></span>${escapeHtml(text || href)}</a>`;
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
  return renderHtml(() => {
    const tokens = marked.lexer(src);
    for (const t of tokens) if (t.type === 'paragraph' && t.text.length > SEG_CHARS) (t as Token & { cut?: boolean }).cut = true;
    return marked.parser(tokens);
  });
}

/**
 * The HTML `produce` returns (our renderer's, made while this render's classes are in place) → a sanitized
 * fragment; only highlight.js, `language-*` and our own classes are kept. Each code block's `<pre>` carries
 * its source code as `codeText` (see CodePre).
 */
export function renderHtml(produce: () => string): DocumentFragment {
  const render = { marker: `ah-code-${nonce()}-`, codes: [] as string[] };
  blocks = render;
  let html: string;
  try {
    html = produce();
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
  const ours: Record<string, string[]> = {
    [`${render.marker}image`]: ['md-image'],
    [`${render.marker}image-icon`]: ['codicon', 'codicon-file-media'],
    [`${render.marker}seg`]: ['md-seg'],
    [`${render.marker}grp`]: [GROUP],
    [`${render.marker}long`]: ['md-long'],
    [`${render.marker}hl`]: [PENDING],
  };
  for (const el of frag.querySelectorAll('[class]')) {
    const kept = [...el.classList].flatMap((c) => ours[c] ?? (c === 'hljs' || c.startsWith('hljs-') || c.startsWith('language-') ? [c] : []));
    el.className = kept.join(' ');
    if (!kept.length) el.removeAttribute('class');
  }
  highlightWhenSeen(frag);
  return frag;
}
