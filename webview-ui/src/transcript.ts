/**
 * The transcript: one element per timeline entity, updated in place by id. Only a window of at most MAX
 * consecutive entities is in the DOM: the newest PAGE at first; scrolling near the top adds the previous
 * page (in slices of a few ms per frame) and drops the bottom beyond MAX, scrolling near the bottom does the
 * reverse (scroll position kept).
 * New output is appended while the window reaches the end; `content-visibility: auto` lets the browser skip
 * off-screen items. Streaming messages re-render at most once per animation frame.
 * Up to a PAGE of entries on each side of the window are kept rendered but detached (spares.ts).
 */
import type { ChatStrings, HeaderState, MessageEntity, TimelineEntity } from '../../src/shared/chatProtocol';
import { chips, copyButton, decorateCode, noticeCard, permissionAnnouncement, permissionCard, toolCallCard, userMessage } from './cards';
import { h, icon } from './dom';
import { focusEntry, onEntryKey, replaceKeepingFocus } from './entryKeys';
import { showEmpty } from './emptyState';
import { highlightWhenSeen } from './highlight';
import { renderStreamed, shownLength } from './streamed';
import { onTranscriptClick } from './transcriptActions';
import { Spares } from './spares';
import { StreamPace } from './pace';

const PAGE = 120;
const MAX = 3 * PAGE;
/** Within this many pixels of an edge, the next page is loaded. */
const EDGE_PX = 600;
/**
 * Scrolling loads a page in slices: at most this many ms of rendering per animation frame (at least
 * MIN_SLICE entries), the rest on the next frames while the view is still near the edge. A whole page at
 * once (markdown and sanitizing for 120 entries) took a frame of 40–50 ms.
 */
const SLICE_MS = 6;
const MIN_SLICE = 4;
/** A message longer than this (characters) lays out only its blocks near the viewport (`.md.long` in chat.css). */
const LONG_TEXT = 20_000;
/** At most this many entries inserted per frame (spares cost no rendering, but their layout does). */
const MAX_SLICE = 40;
/** Idle time left (ms) under which no spare is rendered ahead. */
const IDLE_MIN_MS = 4;

interface Item {
  entity: TimelineEntity;
  /** Its position in `items`. */
  idx: number;
  /** Its element while in the DOM (inside the window). */
  el: HTMLElement | undefined;
  /** Rendered and up to date, but detached (near the window). */
  spare?: HTMLElement | undefined;
  /** Its entity was replaced (not only appended to) since its element last rendered. */
  replaced?: boolean;
}

export interface TranscriptHooks {
  strings: () => ChatStrings;
  header: () => HeaderState;
  /** Tool cards the user expanded (kept across reloads). */
  expanded: Set<string>;
  onExpandedChange: () => void;
  announce: (text: string, urgent?: boolean) => void;
  /** The empty chat's "Ask your first question". */
  focusComposer: () => void;
  /** Up to `count` entities the extension holds before the one keyed `before`, and how many come before those. */
  fetchEarlier: (before: string, count: number) => Promise<{ entities: TimelineEntity[]; earlier: number }>;
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
  private readonly pace = new StreamPace();
  /** Entities before `items` that only the extension holds (a snapshot carries the newest); asked for page by page. */
  private earlier = 0;
  private fetching = false;
  /** Counts snapshots: an answer to a request made before the last one is dropped. */
  private generation = 0;
  private sliceFrame = 0;
  private sliceDir: 'earlier' | 'later' = 'earlier';
  private stick = true;
  private readonly spares = new Spares<Item>((it) => it.entity.kind === 'message' && isLong(it.entity));
  private idle = 0;

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
      // One slice per frame, rendered in the next animation frame (not in each scroll event).
      if (this.el.scrollTop < EDGE_PX && this.hasEarlier()) this.requestSlice('earlier');
      else if (fromBottom < EDGE_PX && this.end < this.items.length) this.requestSlice('later');
    });
    const io = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          if (!e.isIntersecting) continue;
          if (e.target === this.more && this.hasEarlier() && !this.stick) this.requestSlice('earlier');
          if (e.target === this.later && this.end < this.items.length) this.requestSlice('later');
        }
      },
      { root: this.el },
    );
    io.observe(this.more);
    io.observe(this.later);
    const textOf = (key: string) => (this.index.get(key)?.entity as { text?: string } | undefined)?.text;
    this.el.addEventListener('click', (e) => onTranscriptClick(e, this.hooks, { toggleTool: (id) => this.toggleTool(id), textOf }));
    this.el.addEventListener('keydown', (e) => {
      const nav = {
        entries: () => [...this.list.children] as HTMLElement[],
        more: (dir: 'earlier' | 'later') => {
          const [start, end] = [this.start, this.end];
          if (dir === 'earlier') this.showEarlier();
          else this.showLater();
          return this.start !== start || this.end !== end;
        },
        focusComposer: this.hooks.focusComposer,
      };
      if (onEntryKey(e, nav)) e.preventDefault();
    });
  }

  /** Focuses the permission card waiting for an answer, else the newest entry; false when there is none. */
  focusLatest(): boolean {
    if (this.end < this.items.length) this.jumpToEnd();
    const entry = [...this.list.querySelectorAll<HTMLElement>(':scope > .permission.state-pending')].at(-1) ?? (this.list.lastElementChild as HTMLElement | null);
    if (!entry) return false;
    focusEntry(entry);
    return true;
  }

  reset(entities: TimelineEntity[], earlier: number): void {
    this.earlier = earlier;
    this.generation++;
    this.items = entities.map((entity, idx) => ({ entity, idx, el: undefined }));
    this.spares.clear();
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
    this.list.replaceChildren(...this.items.slice(this.start).map((it) => this.take(it)));
    this.keepSparesNear();
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
        existing.replaced = true;
        this.spares.drop(existing);
        if (existing.el) this.dirty.add(existing);
        if (entity.kind === 'permission' && entity.state === 'pending' && !wasPending) this.hooks.announce(permissionAnnouncement(entity, this.hooks.strings(), this.hooks.header()), true);
      } else {
        // The user just sent something: follow the answer.
        if (entity.kind === 'message' && entity.role === 'user') this.stick = true;
        const it: Item = { entity, idx: this.items.length, el: undefined };
        const windowAtEnd = this.end === this.items.length;
        this.items.push(it);
        this.index.set(k, it);
        // Output follows while the window reaches the end (the person reading earlier pages keeps their place:
        // it waits behind "Show later messages"); sending something jumps back to the end.
        if (windowAtEnd && (this.stick || this.end - this.start < MAX)) {
          this.list.append(this.take(it));
          this.end++;
        } else if (this.stick) this.jumpToEnd();
        if (entity.kind === 'permission' && entity.state === 'pending') this.hooks.announce(permissionAnnouncement(entity, this.hooks.strings(), this.hooks.header()), true);
      }
    }
    if (this.stick) this.trimTop();
    this.updateChrome();
    this.schedule();
  }

  /** Text streamed onto messages: appended to each one's text; shown ones re-render only their open end. */
  append(appends: { id: string; text: string }[]): void {
    for (const a of appends) {
      const it = this.index.get(`message:${a.id}`);
      if (it?.entity.kind !== 'message') continue;
      it.entity = { ...it.entity, text: it.entity.text + a.text };
      this.spares.drop(it);
      if (it.el) this.dirty.add(it);
    }
    this.schedule();
  }

  /** Re-renders everything whose look depends on the header (turn state, permission mode). */
  refreshLive(): void {
    if (!this.items.length) this.updateChrome(); // the empty chat's first steps follow the tabs
    const live = (it: Item) => it.entity.kind === 'permission' || (it.entity.kind === 'message' && it.entity.role === 'thought');
    this.spares.dropWhere(live);
    for (const it of this.items.slice(this.start, this.end)) if (live(it)) this.dirty.add(it);
    const last = this.items.at(-1);
    if (last) {
      this.spares.drop(last);
      this.dirty.add(last);
    }
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

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const t0 = performance.now();
      const dirty = [...this.dirty];
      this.dirty.clear();
      for (const it of dirty) {
        const old = it.el;
        if (!old) continue;
        const fresh = this.render(it, old);
        it.el = fresh;
        if (fresh !== old) replaceKeepingFocus(old, fresh);
      }
      // (Scrolling to the end lays the page out now: that layout is counted in the frame's work.)
      this.scrollToEnd();
      this.pace.frameDone(performance.now() - t0);
      if (this.dirty.size) this.schedule();
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

  /** Elements of items from `from` on (backwards when `step` is -1) within the slice budget (spares first). */
  private renderSlice(from: number, step: 1 | -1): HTMLElement[] {
    const t0 = performance.now();
    const nodes: HTMLElement[] = [];
    for (let i = from; nodes.length < MAX_SLICE && i >= 0 && i < this.items.length; i += step) {
      if (nodes.length >= MIN_SLICE && performance.now() - t0 > SLICE_MS) break;
      nodes.push(this.take(this.items[i]!));
    }
    return step === 1 ? nodes : nodes.reverse();
  }

  /** The item's element for the window: its spare, else rendered now. */
  private take(it: Item): HTMLElement {
    const spare = this.spares.take(it);
    const el = spare ?? this.render(it);
    // A spare's code waiting to be highlighted was let go while detached: watched again.
    if (spare) highlightWhenSeen(spare);
    it.el = el;
    return el;
  }

  /** Takes the item out of the DOM; its element stays as a spare. */
  private release(it: Item): void {
    if (!it.el) return;
    it.el.remove();
    // A change not yet rendered (this frame's dirty set) would make it stale: then it is no spare.
    if (!this.dirty.delete(it)) this.spares.keep(it, it.el);
    it.el = undefined;
  }

  /** Drops spares more than a PAGE from the window, and renders the nearest missing ones in idle time. */
  private keepSparesNear(): void {
    this.spares.prune(this.start, this.end, PAGE);
    if (this.idle) return;
    this.idle = requestIdleCallback((deadline) => {
      this.idle = 0;
      const next = () => this.spares.wanted(this.items, this.start, this.end, PAGE);
      for (let it = next(); it && deadline.timeRemaining() > IDLE_MIN_MS; it = next()) this.spares.keep(it, this.render(it));
      if (next()) this.keepSparesNear();
    });
  }

  /**
   * A slice toward `dir` in the next animation frame (at most one per frame, whoever asks: scroll events,
   * the observer, the rest of a page), if the view is still near that edge then.
   */
  private requestSlice(dir: 'earlier' | 'later'): void {
    this.sliceDir = dir;
    if (this.sliceFrame) return;
    this.sliceFrame = requestAnimationFrame(() => {
      this.sliceFrame = 0;
      if (this.sliceDir === 'earlier') {
        if (this.el.scrollTop < EDGE_PX && this.hasEarlier() && !this.stick) this.showEarlier();
      } else if (this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < EDGE_PX && this.end < this.items.length) this.showLater();
    });
  }

  private hasEarlier(): boolean {
    return this.start > 0 || this.earlier > 0;
  }

  private showEarlier(): void {
    if (this.start === 0) {
      this.fetchEarlier();
      return;
    }
    const before = this.el.scrollHeight;
    const nodes = this.renderSlice(this.start - 1, -1);
    const from = this.start - nodes.length;
    this.list.prepend(...nodes);
    this.start = from;
    this.el.scrollTop += this.el.scrollHeight - before;
    // Drop the bottom beyond MAX (below the viewport: the scroll position does not move).
    if (this.end - this.start > MAX) {
      for (const it of this.items.slice(this.start + MAX, this.end)) this.release(it);
      this.end = this.start + MAX;
      this.stick = false;
    }
    this.keepSparesNear();
    this.updateChrome();
    if (this.hasEarlier()) this.requestSlice('earlier');
  }

  /** The page before the first item, from the extension; shown once it comes if the view is still near the top. */
  private fetchEarlier(): void {
    if (!this.earlier || this.fetching || !this.items.length) return;
    this.fetching = true;
    const generation = this.generation;
    this.hooks.fetchEarlier(key(this.items[0]!.entity), PAGE).then(
      ({ entities, earlier }) => {
        this.fetching = false;
        if (generation !== this.generation) return;
        const added = entities.filter((e) => !this.index.has(key(e))).map((entity) => ({ entity, idx: 0, el: undefined }) as Item);
        this.items = [...added, ...this.items];
        for (const [idx, it] of this.items.entries()) it.idx = idx;
        for (const it of added) this.index.set(key(it.entity), it);
        this.start += added.length;
        this.end += added.length;
        this.earlier = added.length ? earlier : 0;
        this.updateChrome();
        this.showEarlier();
      },
      (e: Error) => {
        this.fetching = false;
        console.error(`earlier entries not loaded: ${e.message}`);
      },
    );
  }

  private showLater(): void {
    if (this.end >= this.items.length) return;
    const nodes = this.renderSlice(this.end, 1);
    this.list.append(...nodes);
    this.end += nodes.length;
    this.trimTop();
    this.keepSparesNear();
    this.updateChrome();
    if (this.end < this.items.length) this.requestSlice('later');
  }

  /** Drops the top beyond MAX, keeping what is on screen where it is. */
  private trimTop(): void {
    if (this.end - this.start <= MAX) return;
    const before = this.el.scrollHeight;
    const top = this.el.scrollTop;
    for (const it of this.items.slice(this.start, this.end - MAX)) this.release(it);
    this.start = this.end - MAX;
    this.keepSparesNear();
    this.el.scrollTop = top - (before - this.el.scrollHeight);
  }

  private updateChrome(): void {
    this.more.hidden = !this.hasEarlier();
    this.later.hidden = this.end >= this.items.length;
    this.el.dataset.total = String(this.earlier + this.items.length);
    this.el.dataset.held = String(this.items.length);
    this.el.dataset.atStart = String(!this.hasEarlier());
    this.el.dataset.atEnd = String(this.end >= this.items.length);
    showEmpty(this.empty, this.items.length === 0, this.hooks.strings(), this.hooks.header().tabs, this.hooks.focusComposer);
  }

  // ------------------------------------------------------------------------------------------------ rendering

  private render(it: Item, previous?: HTMLElement): HTMLElement {
    const e = it.entity;
    let el: HTMLElement;
    switch (e.kind) {
      case 'message':
        el = e.role === 'thought' ? this.thought(it, e, previous) : this.message(it, e, previous);
        break;
      case 'tool_call':
        el = toolCallCard(e, this.hooks.strings(), this.hooks.expanded.has(e.id));
        break;
      case 'permission':
        el = permissionCard(e, this.hooks.strings(), this.hooks.header());
        break;
      case 'notice':
        el = noticeCard(e, this.hooks.strings());
        break;
    }
    el.dataset.key = key(e);
    el.tabIndex = -1; // reachable by the keyboard scheme of entryKeys.ts, not a stop of its own for Tab
    return el;
  }

  private message(it: Item, m: MessageEntity, previous?: HTMLElement): HTMLElement {
    const s = this.hooks.strings();
    if (m.role === 'user') return userMessage(m, s);
    // Reuse the element while streaming: only the body changes.
    const el = previous?.classList.contains('agent') ? previous : h('div', { className: 'entry msg agent', role: 'article', 'aria-label': s.agentRole }, copyButton(s), h('div', { className: 'md' }));
    this.renderBody(it, el.querySelector('.md') as HTMLElement, m, (part) => decorateCode(part, s));
    const extra = chips(m.parts);
    el.querySelector(':scope > .chips')?.remove();
    if (extra) el.append(extra);
    return el;
  }

  private thought(it: Item, m: MessageEntity, previous?: HTMLElement): HTMLElement {
    const s = this.hooks.strings();
    const live = this.live(it);
    const details = (previous?.tagName === 'DETAILS' ? previous : h('details', { className: 'entry thought' }, h('summary'), h('div', { className: 'md' }))) as HTMLDetailsElement;
    const summary = details.querySelector('summary')!;
    summary.replaceChildren(icon(live ? 'loading codicon-modifier-spin' : 'lightbulb'), h('span', null, live ? s.thinking : s.thought));
    this.renderBody(it, details.querySelector('.md') as HTMLElement, m);
    return details;
  }

  /** The last entry while a turn runs: what the agent is still writing. */
  private live(it: Item): boolean {
    return this.items.at(-1) === it && this.hooks.header().turn !== 'idle';
  }

  /**
   * A message's markdown into its body; a long one lays out only its blocks near the viewport. While text is
   * streamed onto it, as much new text as the pace allows (pace.ts), the rest on the next frames.
   */
  private renderBody(it: Item, body: HTMLElement, m: MessageEntity, decorate?: (part: HTMLElement) => void): void {
    body.classList.toggle('long', isLong(m));
    const appended = !it.replaced;
    it.replaced = false;
    const upTo = this.pace.upTo(m.text.length, shownLength(body), appended);
    if (upTo < m.text.length) this.dirty.add(it);
    const live = this.live(it);
    renderStreamed(body, upTo < m.text.length ? m.text.slice(0, upTo) : m.text, { decorate, complete: !live && upTo === m.text.length, appended });
  }

  /** A tool card's "more"/"less": the card rendered again, the choice kept across reloads. */
  private toggleTool(id: string): void {
    if (this.hooks.expanded.has(id)) this.hooks.expanded.delete(id);
    else this.hooks.expanded.add(id);
    this.hooks.onExpandedChange();
    const it = this.index.get(`tool_call:${id}`);
    const old = it?.el;
    if (it && old) {
      it.el = this.render(it);
      replaceKeepingFocus(old, it.el);
    }
  }
}

function isLong(m: MessageEntity): boolean {
  return m.text.length > LONG_TEXT;
}

function key(e: TimelineEntity): string {
  return `${e.kind}:${e.id}`;
}
