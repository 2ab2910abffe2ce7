/**
 * The transcript: one element per timeline entity, updated in place by id. Only a window of at most MAX
 * consecutive entities is in the DOM: the newest PAGE at first; scrolling near the top adds the previous
 * page and drops the bottom beyond MAX, scrolling near the bottom does the reverse (scroll position kept).
 * New output is appended while the window reaches the end; `content-visibility: auto` lets the browser skip
 * off-screen items. Streaming messages re-render at most once per animation frame.
 */
import type {
  ChatStrings,
  ContentPart,
  HeaderState,
  MessageEntity,
  NoticeEntity,
  PermissionEntity,
  TimelineEntity,
  ToolCallEntity,
} from '../../src/shared/chatProtocol';
import { hunks, lineDiff } from './diff';
import { fmt, h, icon } from './dom';
import { renderMarkdown, SHELL_LANGS } from './markdown';
import { send } from './rpc';

const PAGE = 120;
const MAX = 3 * PAGE;
/** Within this many pixels of an edge, the next page is loaded. */
const EDGE_PX = 600;

const KIND_ICONS: Record<string, string> = {
  read: 'file',
  edit: 'edit',
  delete: 'trash',
  move: 'arrow-right',
  search: 'search',
  execute: 'terminal',
  think: 'lightbulb',
  fetch: 'globe',
  switch_mode: 'arrow-swap',
  other: 'tools',
};

const STATUS_ICONS: Record<string, string> = {
  pending: 'circle-large-outline',
  in_progress: 'loading codicon-modifier-spin',
  completed: 'pass',
  failed: 'error',
};

interface Item {
  entity: TimelineEntity;
  el: HTMLElement | undefined;
}

export interface TranscriptHooks {
  strings: () => ChatStrings;
  header: () => HeaderState;
  /** Tool cards the user expanded (kept across reloads). */
  expanded: Set<string>;
  onExpandedChange: () => void;
  announce: (text: string, urgent?: boolean) => void;
}

export class Transcript {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly more: HTMLElement;
  private readonly later: HTMLElement;
  private readonly empty: HTMLElement;
  private items: Item[] = [];
  private readonly index = new Map<string, Item>();
  /** The items in the DOM: [start, end). */
  private start = 0;
  private end = 0;
  private readonly dirty = new Set<Item>();
  private frame = 0;
  private stick = true;

  constructor(private readonly hooks: TranscriptHooks) {
    const s = hooks.strings();
    this.more = h('button', { className: 'load-earlier', type: 'button', onClick: () => this.showEarlier() }, s.loadEarlier);
    this.later = h('button', { className: 'load-later', type: 'button', hidden: true, onClick: () => this.showLater() }, s.loadLater);
    this.list = h('div', { className: 'entries' });
    this.empty = h('div', { className: 'empty' });
    this.el = h('div', { className: 'transcript', role: 'log', 'aria-label': s.transcript, 'aria-live': 'off', tabindex: '0' }, this.more, this.empty, this.list, this.later);
    // Only the person's scrolling decides whether to follow new output (content-visibility makes programmatic
    // scrolls land short while items render at their real height).
    let userScroll = 0;
    for (const ev of ['wheel', 'touchstart', 'pointerdown', 'keydown']) this.el.addEventListener(ev, () => (userScroll = Date.now()), { passive: true });
    this.el.addEventListener('scroll', () => {
      const fromBottom = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight;
      if (Date.now() - userScroll < 1000) this.stick = fromBottom < 40 && this.end === this.items.length;
      // Pages move only when the person scrolls (or has left the end): layout settling while output streams in
      // must not unpin the view from the end.
      if (this.stick && Date.now() - userScroll >= 1000) return;
      if (this.el.scrollTop < EDGE_PX && this.start > 0) this.showEarlier();
      else if (fromBottom < EDGE_PX && this.end < this.items.length) this.showLater();
    });
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        if (e.target === this.more && this.start > 0 && !this.stick) this.showEarlier();
        if (e.target === this.later && this.end < this.items.length) this.showLater();
      }
    }, { root: this.el });
    io.observe(this.more);
    io.observe(this.later);
    this.el.addEventListener('click', (e) => this.onClick(e));
  }

  reset(entities: TimelineEntity[]): void {
    this.items = entities.map((entity) => ({ entity, el: undefined }));
    this.index.clear();
    for (const it of this.items) this.index.set(key(it.entity), it);
    this.stick = true;
    this.jumpToEnd();
  }

  /** Shows the newest page (and only that). */
  private jumpToEnd(): void {
    for (const it of this.items.slice(this.start, this.end)) it.el = undefined;
    this.end = this.items.length;
    this.start = Math.max(0, this.end - PAGE);
    this.list.replaceChildren(...this.items.slice(this.start).map((it) => this.render(it)));
    this.updateChrome();
    this.scrollToEnd();
  }

  upsert(entities: TimelineEntity[]): void {
    for (const entity of entities) {
      const k = key(entity);
      const existing = this.index.get(k);
      if (existing) {
        const wasPending = existing.entity.kind === 'permission' && existing.entity.state === 'pending';
        existing.entity = entity;
        if (existing.el) this.dirty.add(existing);
        if (entity.kind === 'permission' && entity.state === 'pending' && !wasPending) this.announcePermission(entity);
      } else {
        // The user just sent something: follow the answer.
        if (entity.kind === 'message' && entity.role === 'user') this.stick = true;
        const it: Item = { entity, el: undefined };
        const windowAtEnd = this.end === this.items.length;
        this.items.push(it);
        this.index.set(k, it);
        // Output follows while the window reaches the end (the person reading earlier pages keeps their place:
        // it waits behind "Show later messages"); sending something jumps back to the end.
        if (windowAtEnd && (this.stick || this.end - this.start < MAX)) {
          this.list.append(this.render(it));
          this.end++;
        } else if (this.stick) this.jumpToEnd();
        if (entity.kind === 'permission' && entity.state === 'pending') this.announcePermission(entity);
      }
    }
    if (this.stick) this.trimTop();
    this.updateChrome();
    this.schedule();
  }

  /** Re-renders everything whose look depends on the header (turn state, permission mode). */
  refreshLive(): void {
    for (const it of this.items.slice(this.start, this.end)) {
      if (it.entity.kind === 'permission' || (it.entity.kind === 'message' && it.entity.role === 'thought')) this.dirty.add(it);
    }
    const last = this.items.at(-1);
    if (last) this.dirty.add(last);
    this.schedule();
  }

  lastAgentText(): string | undefined {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const e = this.items[i]!.entity;
      if (e.kind === 'message' && e.role === 'agent') return e.text;
      if (e.kind === 'message' && e.role === 'user') return undefined;
    }
    return undefined;
  }

  private announcePermission(p: PermissionEntity): void {
    this.hooks.announce(`${this.hooks.strings().permissionRequest}: ${p.title}`, true);
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      for (const it of this.dirty) {
        const old = it.el;
        if (!old) continue;
        const fresh = this.render(it, old);
        if (fresh !== old) old.replaceWith(fresh);
      }
      this.dirty.clear();
      this.scrollToEnd();
    });
  }

  private scrollToEnd(): void {
    if (!this.stick) return;
    this.el.scrollTop = this.el.scrollHeight;
    // Items rendered on the way grow from their placeholder size: settle on the real end.
    requestAnimationFrame(() => {
      if (this.stick) this.el.scrollTop = this.el.scrollHeight;
    });
  }

  private showEarlier(): void {
    if (this.start === 0) return;
    const from = Math.max(0, this.start - PAGE);
    const before = this.el.scrollHeight;
    const nodes = this.items.slice(from, this.start).map((it) => this.render(it));
    this.list.prepend(...nodes);
    this.start = from;
    this.el.scrollTop += this.el.scrollHeight - before;
    // Drop the bottom beyond MAX (below the viewport: the scroll position does not move).
    if (this.end - this.start > MAX) {
      for (const it of this.items.slice(this.start + MAX, this.end)) {
        it.el?.remove();
        it.el = undefined;
      }
      this.end = this.start + MAX;
      this.stick = false;
    }
    this.updateChrome();
  }

  private showLater(): void {
    if (this.end >= this.items.length) return;
    const to = Math.min(this.items.length, this.end + PAGE);
    this.list.append(...this.items.slice(this.end, to).map((it) => this.render(it)));
    this.end = to;
    this.trimTop();
    this.updateChrome();
  }

  /** Drops the top beyond MAX, keeping what is on screen where it is. */
  private trimTop(): void {
    if (this.end - this.start <= MAX) return;
    const before = this.el.scrollHeight;
    const top = this.el.scrollTop;
    for (const it of this.items.slice(this.start, this.end - MAX)) {
      it.el?.remove();
      it.el = undefined;
    }
    this.start = this.end - MAX;
    this.el.scrollTop = top - (before - this.el.scrollHeight);
  }

  private updateChrome(): void {
    this.more.hidden = this.start === 0;
    this.later.hidden = this.end >= this.items.length;
    this.el.dataset.total = String(this.items.length);
    this.el.dataset.atStart = String(this.start === 0);
    this.el.dataset.atEnd = String(this.end >= this.items.length);
    const s = this.hooks.strings();
    if (this.items.length === 0) {
      this.empty.hidden = false;
      this.empty.replaceChildren(icon('hubot', 'empty-icon'), h('p', null, s.empty), h('p', { className: 'hint' }, s.emptyHint));
    } else this.empty.hidden = true;
  }

  // ------------------------------------------------------------------------------------------------ rendering

  private render(it: Item, previous?: HTMLElement): HTMLElement {
    const e = it.entity;
    let el: HTMLElement;
    switch (e.kind) {
      case 'message':
        el = e.role === 'thought' ? this.thought(e, previous) : this.message(e, previous);
        break;
      case 'tool_call':
        el = this.toolCall(e);
        break;
      case 'permission':
        el = this.permission(e);
        break;
      case 'notice':
        el = this.notice(e);
        break;
    }
    el.dataset.key = key(e);
    it.el = el;
    return el;
  }

  private message(m: MessageEntity, previous?: HTMLElement): HTMLElement {
    const s = this.hooks.strings();
    if (m.role === 'user') {
      return h(
        'div',
        { className: 'entry msg user', role: 'article', 'aria-label': s.you },
        h('div', { className: 'bubble' }, h('div', { className: 'user-text' }, m.text), chips(m.parts)),
      );
    }
    // Reuse the element while streaming: only the body changes.
    const el = previous?.classList.contains('agent') ? previous : h('div', { className: 'entry msg agent', role: 'article', 'aria-label': s.agentRole }, h('div', { className: 'md' }));
    const body = el.querySelector('.md') as HTMLElement;
    body.replaceChildren(renderMarkdown(m.text));
    decorateCode(body, s);
    const extra = chips(m.parts);
    el.querySelector(':scope > .chips')?.remove();
    if (extra) el.append(extra);
    return el;
  }

  private thought(m: MessageEntity, previous?: HTMLElement): HTMLElement {
    const s = this.hooks.strings();
    const live = this.items.at(-1)?.entity === m && this.hooks.header().turn !== 'idle';
    const details = (previous?.tagName === 'DETAILS' ? previous : h('details', { className: 'entry thought' }, h('summary'), h('div', { className: 'md' }))) as HTMLDetailsElement;
    const summary = details.querySelector('summary')!;
    summary.replaceChildren(icon(live ? 'loading codicon-modifier-spin' : 'lightbulb'), h('span', null, live ? s.thinking : s.thought));
    const body = details.querySelector('.md') as HTMLElement;
    body.replaceChildren(renderMarkdown(m.text));
    return details;
  }

  private toolCall(t: ToolCallEntity): HTMLElement {
    const s = this.hooks.strings();
    const statusText = { pending: s.statusPending, in_progress: s.statusRunning, completed: s.statusDone, failed: s.statusFailed }[t.status] ?? t.status;
    const open = this.hooks.expanded.has(t.id);
    const bodyId = `tool-body-${cssId(t.id)}`;
    const head = h(
      'button',
      { className: 'tool-head', type: 'button', 'aria-expanded': String(open), 'aria-controls': bodyId, 'data-action': 'toggle-tool', 'data-id': t.id },
      icon(open ? 'chevron-down' : 'chevron-right', 'chev'),
      icon(KIND_ICONS[t.toolKind] ?? 'tools', 'kind'),
      h('span', { className: 'tool-title' }, t.title || t.toolKind),
      h('span', { className: `status status-${t.status}` }, icon(STATUS_ICONS[t.status] ?? 'circle-large-outline'), h('span', null, statusText)),
    );
    const body = h('div', { className: 'tool-body', id: bodyId, hidden: !open });
    if (t.locations.length) {
      body.append(
        h(
          'div',
          { className: 'locations' },
          ...t.locations.map((l) =>
            h('a', { href: '#', className: 'location', 'data-action': 'open-location', 'data-path': l.path, 'data-line': l.line ?? '' }, icon('go-to-file'), `${l.path}${l.line ? `:${l.line}` : ''}`),
          ),
        ),
      );
    }
    for (const c of t.content) body.append(this.toolContent(c));
    if (t.rawInput !== undefined && t.rawInput !== null) body.append(section(s.rawInput, h('pre', { className: 'raw' }, pretty(t.rawInput))));
    if (t.rawOutput !== undefined && t.rawOutput !== null) body.append(section(s.output, h('pre', { className: 'raw' }, pretty(t.rawOutput))));
    return h('div', { className: `entry tool status-${t.status}`, role: 'group', 'aria-label': `${t.title || t.toolKind} — ${statusText}` }, head, body);
  }

  private toolContent(c: unknown): HTMLElement {
    const s = this.hooks.strings();
    const o = (c ?? {}) as Record<string, unknown>;
    if (o.type === 'diff' && typeof o.path === 'string' && typeof o.newText === 'string') {
      const oldText = typeof o.oldText === 'string' ? o.oldText : null;
      const lines = hunks(lineDiff(oldText ?? '', o.newText));
      const btn = h('vscode-button', { secondary: true, 'data-action': 'open-diff', title: s.openDiff }, icon('diff'), ` ${s.openDiff}`);
      const pre = h('pre', { className: 'diff' }, ...lines.slice(0, 400).map((l) => (l ? h('div', { className: `dl ${l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'ctx'}` }, `${l.op} ${l.text}`) : h('div', { className: 'dl gap' }, '⋯'))));
      const wrap = h('div', { className: 'diff-block' }, h('div', { className: 'diff-head' }, h('a', { href: '#', 'data-action': 'open-location', 'data-path': o.path }, o.path), btn), pre);
      (wrap as HTMLElement & { diffData?: unknown }).diffData = { path: o.path, oldText, newText: o.newText };
      return wrap;
    }
    if (o.type === 'terminal') {
      const out = typeof (o as { output?: unknown }).output === 'string' ? String((o as { output?: unknown }).output) : '';
      return section(`${s.terminal} ${String(o.terminalId ?? '')}`, h('pre', { className: 'raw terminal' }, out));
    }
    if (o.type === 'content') {
      const part = (o.content ?? {}) as ContentPart;
      if (part.type === 'text') {
        const md = h('div', { className: 'md' }, renderMarkdown(part.text ?? ''));
        decorateCode(md, s);
        return md;
      }
      return chips([part]) ?? h('span');
    }
    return h('pre', { className: 'raw' }, pretty(c));
  }

  private permission(p: PermissionEntity): HTMLElement {
    const s = this.hooks.strings();
    const header = this.hooks.header();
    const el = h('div', { className: `entry permission state-${p.state}`, role: 'group', 'aria-label': `${s.permissionRequest}: ${p.title}` });
    el.append(h('div', { className: 'perm-title' }, icon('shield'), h('span', null, h('span', null, `${s.permissionRequest}: `), h('strong', null, p.title))));
    if (p.state === 'pending') {
      if (header.permissionsInChat) {
        el.append(
          h(
            'div',
            { className: 'perm-options' },
            ...p.options.map((o) =>
              h('vscode-button', { secondary: !o.kind.startsWith('allow'), 'data-action': 'answer-permission', 'data-permission': p.id, 'data-option': o.optionId }, o.name),
            ),
          ),
        );
      } else {
        el.append(h('div', { className: 'perm-note' }, icon('info'), ` ${s.answerInDialog}`, h('span', { className: 'perm-offered' }, ` (${p.options.map((o) => o.name).join(' · ')})`)));
      }
    } else if (p.state === 'answered') {
      const name = p.options.find((o) => o.optionId === p.answer)?.name ?? p.answer ?? '';
      el.append(h('div', { className: 'perm-note' }, icon('check'), ` ${fmt(s.permissionAnswered, name)}`));
    } else {
      el.append(h('div', { className: 'perm-note' }, icon('circle-slash'), ` ${s.permissionCancelled}`));
    }
    return el;
  }

  private notice(n: NoticeEntity): HTMLElement {
    const s = this.hooks.strings();
    const ic = n.severity === 'error' ? 'error' : n.severity === 'warning' ? 'warning' : 'info';
    const el = h('div', { className: `entry notice ${n.severity}`, role: n.severity === 'error' ? 'alert' : 'status' });
    el.append(h('div', { className: 'notice-title' }, icon(ic), h('span', null, n.title)));
    if (n.detail) el.append(h('pre', { className: 'notice-detail' }, n.detail));
    if (n.severity === 'error') {
      el.append(
        h(
          'div',
          { className: 'notice-actions' },
          h('vscode-button', { 'data-action': 'restart' }, icon('debug-restart'), ` ${s.restart}`),
          h('vscode-button', { secondary: true, 'data-action': 'show-log' }, s.showLog),
        ),
      );
    }
    return el;
  }

  // ------------------------------------------------------------------------------------------------ actions

  private onClick(e: Event): void {
    const target = (e.target as HTMLElement).closest<HTMLElement>('[data-action], a[href]');
    if (!target) return;
    const action = target.dataset.action;
    if (!action && target.tagName === 'A') {
      e.preventDefault();
      const href = target.getAttribute('href');
      if (href && href !== '#') send('openLink', { href });
      return;
    }
    e.preventDefault();
    switch (action) {
      case 'toggle-tool': {
        const id = target.dataset.id!;
        if (this.hooks.expanded.has(id)) this.hooks.expanded.delete(id);
        else this.hooks.expanded.add(id);
        this.hooks.onExpandedChange();
        const it = this.index.get(`tool_call:${id}`);
        const old = it?.el;
        if (it && old) {
          const fresh = this.render(it);
          old.replaceWith(fresh);
          fresh.querySelector<HTMLElement>('.tool-head')?.focus();
        }
        break;
      }
      case 'open-location':
        send('openLocation', { path: target.dataset.path!, line: target.dataset.line ? Number(target.dataset.line) : null });
        break;
      case 'open-diff': {
        const data = (target.closest('.diff-block') as (HTMLElement & { diffData?: { path: string; oldText: string | null; newText: string } }) | null)?.diffData;
        if (data) send('openDiff', data);
        break;
      }
      case 'answer-permission':
        send('answerPermission', { permissionId: target.dataset.permission!, optionId: target.dataset.option! });
        break;
      case 'restart':
        send('newSession', {});
        break;
      case 'show-log':
        send('showLog', {});
        break;
      case 'copy': {
        send('copy', { text: codeOf(target) });
        target.setAttribute('title', this.hooks.strings().copied);
        this.hooks.announce(this.hooks.strings().copied);
        break;
      }
      case 'insert':
        send('insertCode', { code: codeOf(target) });
        break;
      case 'apply':
        send('applyCode', { code: codeOf(target) });
        break;
      case 'run':
        send('runInTerminal', { code: codeOf(target) });
        break;
    }
  }
}

function key(e: TimelineEntity): string {
  return `${e.kind}:${e.id}`;
}

function cssId(id: string): string {
  return id.replace(/[^\w-]/g, '_');
}

/** JSON for people: an object's multi-line strings (diffs, file content, commands) are shown as text. */
function pretty(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const lines = Object.entries(v as Record<string, unknown>).map(([k, x]) =>
      typeof x === 'string' ? (x.includes('\n') ? `${k}:\n${x.replace(/\n$/, '')}` : `${k}: ${x}`) : `${k}: ${JSON.stringify(x, null, 2)}`,
    );
    const text = lines.join('\n');
    return text.length > 20_000 ? `${text.slice(0, 20_000)}\n…` : text;
  }
  const json = JSON.stringify(v, null, 2) ?? String(v);
  return json.length > 20_000 ? `${json.slice(0, 20_000)}\n…` : json;
}

function section(title: string, body: HTMLElement): HTMLElement {
  return h('div', { className: 'tool-section' }, h('div', { className: 'tool-section-title' }, title), body);
}

function codeOf(button: HTMLElement): string {
  return button.closest('.codeblock')?.querySelector('code')?.textContent ?? '';
}

/** Context chips for a message's non-text parts (resource links, embedded resources, images). */
function chips(parts: ContentPart[]): HTMLElement | null {
  const out: HTMLElement[] = [];
  for (const p of parts) {
    if (p.type === 'resource_link') {
      const uri = String(p.uri ?? '');
      out.push(h('a', { className: 'chip', href: uri, title: uri }, icon('file'), String(p.name ?? uri.split('/').pop() ?? uri)));
    } else if (p.type === 'resource') {
      const r = (p.resource ?? {}) as { uri?: string };
      const uri = String(r.uri ?? '');
      out.push(h('a', { className: 'chip', href: uri, title: uri }, icon('code'), decodeURIComponent(uri.split('/').pop() ?? uri)));
    } else if (p.type === 'image' && typeof p.data === 'string') {
      const mime = typeof p.mimeType === 'string' && /^image\/(png|jpeg|gif|webp)$/.test(p.mimeType) ? p.mimeType : 'image/png';
      out.push(h('span', { className: 'chip image' }, h('img', { src: `data:${mime};base64,${p.data}`, alt: '' })));
    }
  }
  return out.length ? h('div', { className: 'chips' }, ...out) : null;
}

/** Wraps each highlighted code block with its actions (run only for shell blocks). */
function decorateCode(root: HTMLElement, s: ChatStrings): void {
  for (const pre of root.querySelectorAll('pre')) {
    if (pre.parentElement?.classList.contains('codeblock')) continue;
    // The language rides on the code element's class: data-* attributes never survive sanitizing.
    const lang = /(?:^|\s)language-(\S+)/.exec(pre.querySelector('code')?.className ?? '')?.[1] ?? '';
    const btn = (action: string, ic: string, label: string) =>
      h('button', { type: 'button', className: 'code-action', 'data-action': action, title: label, 'aria-label': label }, icon(ic));
    const bar = h(
      'div',
      { className: 'code-actions' },
      lang ? h('span', { className: 'code-lang' }, lang) : null,
      btn('copy', 'copy', s.copy),
      btn('insert', 'insert', s.insert),
      btn('apply', 'git-pull-request-go-to-changes', s.apply),
      SHELL_LANGS.has(lang.toLowerCase()) ? btn('run', 'play', s.run) : null,
    );
    const wrap = h('div', { className: 'codeblock' });
    pre.replaceWith(wrap);
    wrap.append(bar, pre);
  }
}
