/**
 * Agent output is untrusted: markdown goes through marked, then DOMPurify (no scripts, no event attributes,
 * no javascript: or data: links, no forms or frames, no inline styles); the CSP is the second wall.
 * Code blocks are highlighted with highlight.js (a few languages) and get action buttons added as DOM after
 * sanitizing, so nothing the agent wrote can pose as one.
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

marked.use({
  renderer: {
    code({ text, lang }) {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const cls = language ? ` class="hljs language-${escapeHtml(language)}"` : ' class="hljs"';
      return `<pre><code${cls}>${highlight(text, language || undefined)}</code></pre>\n`;
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

const PURIFY = {
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'link', 'meta', 'base', 'svg', 'math'],
  FORBID_ATTR: ['style', 'id', 'srcset', 'formaction', 'action'],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
} as const;

/** Markdown → a sanitized fragment; only highlight.js and `language-*` classes are kept. */
export function renderMarkdown(src: string): DocumentFragment {
  const html = marked.parse(src) as string;
  // Our renderer's classes survive; the agent's own class/style attributes do not.
  const frag = DOMPurify.sanitize(html, { ...PURIFY, FORBID_TAGS: [...PURIFY.FORBID_TAGS], FORBID_ATTR: [...PURIFY.FORBID_ATTR] }) as DocumentFragment;
  for (const el of frag.querySelectorAll('[class]')) {
    const kept = [...el.classList].filter((c) => c === 'hljs' || c.startsWith('hljs-') || c.startsWith('language-'));
    el.className = kept.join(' ');
    if (!kept.length) el.removeAttribute('class');
  }
  return frag;
}

