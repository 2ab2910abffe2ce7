/**
 * Code highlighting, done when a code block (or a part of a long one: segments.ts) first comes near the
 * viewport, in idle time: a 4 MB block costs what is looked at, and text is on screen at once, plain, until
 * its turn comes. The highlighted code is built as DOM from highlight.js's
 * token tree (text nodes and spans with its classes), never parsed from HTML: nothing in the code can
 * become markup.
 */
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

/** The class that marks code waiting to be highlighted (kept through sanitizing: see renderHtml). */
export const PENDING = 'md-hl';
/** Idle time a part needs left to be highlighted (one takes a few ms: segments.ts CODE_LINES). */
const BUDGET_MS = 8;
/** Without a named language, a guess is made only for short code (one part). */
const GUESS_MAX = 4000;

/** A language highlight.js knows here (by name or alias). */
export function knownLanguage(language: string): boolean {
  return Boolean(language && hljs.getLanguage(language.toLowerCase()));
}

/** Whether code gets highlighted: a language we know, or none named and short enough to guess it. */
export function highlightable(language: string, text: string, single: boolean): boolean {
  return language ? knownLanguage(language) : single && text.length < GUESS_MAX;
}

interface TreeNode {
  scope?: string;
  children: (string | TreeNode)[];
}

/** highlight.js's token tree → DOM; a scope's class as highlight.js's own HTML has it (its first tier). */
function build(node: TreeNode, parent: Node): void {
  for (const c of node.children) {
    if (typeof c === 'string') parent.appendChild(document.createTextNode(c));
    else if (c.scope) {
      const span = document.createElement('span');
      span.className = c.scope.startsWith('language:') ? `language-${c.scope.slice(9)}` : `hljs-${c.scope.split('.')[0]}`;
      build(c, span);
      parent.appendChild(span);
    } else build(c, parent);
  }
}

/** Highlights `el` (a `<code>`, or a part of one) now, if it is waiting to be. */
export function highlightNow(el: Element): void {
  if (!el.classList.contains(PENDING)) return;
  el.classList.remove(PENDING);
  const code = el.closest('code');
  const lang = /(?:^|\s)language-(\S+)/.exec(code?.className ?? '')?.[1]?.toLowerCase();
  const text = el.textContent ?? '';
  let tree: TreeNode;
  try {
    const result = lang && hljs.getLanguage(lang) ? hljs.highlight(text, { language: lang, ignoreIllegals: true }) : hljs.highlightAuto(text);
    tree = (result as unknown as { _emitter: { root: TreeNode } })._emitter.root;
  } catch {
    return; // stays plain text
  }
  const frag = document.createDocumentFragment();
  build(tree, frag);
  el.replaceChildren(frag);
}

/** Highlights every waiting element under `root` now (tests, and a render that must be whole at once). */
export function highlightAll(root: ParentNode): void {
  for (const el of root.querySelectorAll(`.${PENDING}`)) highlightNow(el);
}

let observer: IntersectionObserver | undefined;
/** Near the viewport and waiting. */
const seen = new Set<Element>();
/** Observed (until seen, or let go when detached): waiting elements, or the groups they are in. */
const watched = new Set<Element>();
let pruneAt = 1000;
let idle = 0;
/** The class of a group of parts (segments.ts GROUP_PARTS): watched as one, its waiting parts highlighted when it is seen. */
export const GROUP = 'md-grp';

/** What is watched for a waiting element: the group it is in, else itself. */
function target(el: Element): Element {
  const parent = el.parentElement;
  return parent?.classList.contains(GROUP) ? parent : el;
}

/** Whether a watched element still has code waiting. */
function waiting(el: Element): boolean {
  return el.classList.contains(PENDING) || (el.classList.contains(GROUP) && el.querySelector(`.${PENDING}`) !== null);
}

/**
 * Watches the waiting elements under `root`, and `root` itself: each is highlighted once it comes within
 * 300 px of the viewport (parts in a group: the group is watched). Call it again when a detached element is
 * attached, or parts were put in a group (re-watching is harmless).
 */
export function highlightWhenSeen(root: Element | DocumentFragment): void {
  const els = [...(root instanceof Element && root.classList.contains(PENDING) ? [root] : []), ...root.querySelectorAll(`.${PENDING}`)];
  if (!els.length) return;
  observer ??= new IntersectionObserver(onSeen, { rootMargin: '300px 0px' });
  for (const el of els) {
    const t = target(el);
    if (t !== el && watched.has(el)) unwatch(el);
    if (watched.has(t)) continue;
    observer.observe(t);
    watched.add(t);
  }
  // Elements dropped unseen are let go now and then (an observer keeps its targets).
  if (watched.size > pruneAt) {
    for (const el of watched) if (!el.isConnected || !waiting(el)) unwatch(el);
    pruneAt = Math.max(1000, 2 * watched.size);
  }
}

function unwatch(el: Element): void {
  observer?.unobserve(el);
  watched.delete(el);
  seen.delete(el);
}

function onSeen(entries: IntersectionObserverEntry[]): void {
  for (const e of entries) {
    if (e.isIntersecting) seen.add(e.target);
    else {
      seen.delete(e.target);
      if (!e.target.isConnected) unwatch(e.target);
    }
  }
  if (!idle && seen.size) idle = requestIdleCallback(work);
}

/** In idle time only (a flood keeps the page busy: its code is highlighted when it pauses or ends). */
function work(deadline: IdleDeadline): void {
  idle = 0;
  for (const el of seen) {
    if (deadline.timeRemaining() < BUDGET_MS) break;
    if (!el.isConnected) {
      unwatch(el);
      continue;
    }
    // A group: its waiting parts one by one, as long as there is time; let go once none is left.
    const parts = el.classList.contains(GROUP) ? el.querySelectorAll(`.${PENDING}`) : [el];
    let i = 0;
    for (; i < parts.length && (i === 0 || deadline.timeRemaining() >= BUDGET_MS); i++) highlightNow(parts[i]!);
    if (i === parts.length) unwatch(el);
  }
  if (seen.size) idle = requestIdleCallback(work);
}
