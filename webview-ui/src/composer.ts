/**
 * The composer: a multi-line input (Enter sends, Shift+Enter adds a line), context chips, the queue of
 * messages typed while the agent works, a menu for `/` commands and `@` context, image paste and drop,
 * and Send / Stop.
 */
import type { ChatStrings, ContextChip, HeaderState, QueuedPrompt, RpcChatState } from '../../src/shared/chatProtocol';
import { fmt, h, icon } from './dom';
import { droppedUris, sizeText } from './dropped';
import { type MenuItem, mentionItems } from './mentions';
import { PromptRecall } from './promptRecall';
import { request, send } from './rpc';

export interface ComposerHooks {
  strings: () => ChatStrings;
  header: () => HeaderState;
  onDraftChange: () => void;
  announce: (text: string) => void;
  /** Ctrl+Up: moves the focus into the transcript; false when it has nothing to focus. */
  focusTranscript: () => boolean;
  /** What was sent before (promptRecall.ts), kept with the page state. */
  sent: string[];
}

let chipCount = 0;

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly queueEl: HTMLElement;
  private readonly chipsEl: HTMLElement;
  private readonly menu: HTMLElement;
  private readonly sendBtn: HTMLElement;
  private readonly stopBtn: HTMLElement;
  private readonly warn: HTMLElement;
  readonly recall: PromptRecall;
  /** The running turn has heard nothing from the agent for a while: says so, with Cancel. */
  private readonly silence: HTMLElement;
  private readonly silenceText: HTMLElement;
  /** RPC agents: their widgets, queue count and state above the input; Steer / Follow-up while a turn streams. */
  private readonly agentEl: HTMLElement;
  private readonly steerBtn: HTMLElement;
  private readonly followUpBtn: HTMLElement;
  private rpcStreaming: RpcChatState | undefined;
  chips: ContextChip[] = [];
  private items: MenuItem[] = [];
  private active = 0;
  private searchSeq = 0;

  constructor(private readonly hooks: ComposerHooks) {
    const s = hooks.strings();
    this.recall = new PromptRecall(hooks.sent, hooks.onDraftChange);
    this.queueEl = h('ul', { className: 'queue', 'aria-label': s.queued });
    this.chipsEl = h('div', { className: 'chips composer-chips' });
    this.menu = h('div', { className: 'menu', role: 'listbox', id: 'composer-menu', hidden: true });
    this.input = h('textarea', {
      className: 'input',
      rows: 1,
      placeholder: s.inputPlaceholder,
      'aria-label': s.inputLabel,
      // A textarea cannot be a combobox (no aria-expanded): the open menu shows through aria-activedescendant.
      'aria-autocomplete': 'list',
      'aria-controls': 'composer-menu',
      'aria-describedby': 'composer-keys',
    });
    this.warn = h('div', { className: 'composer-warn', role: 'status', hidden: true });
    this.silenceText = h('span', { className: 'silence-text' });
    const cancelSilent = h('vscode-button', { secondary: true, title: s.cancelTurn, 'data-testid': 'silence-cancel' }, s.cancelTurn);
    cancelSilent.addEventListener('click', () => send('cancel', {}));
    this.silence = h('div', { className: 'silence', role: 'status', 'data-testid': 'silence', hidden: true }, icon('warning'), this.silenceText, cancelSilent);
    const attach = h('vscode-toolbar-button', { icon: 'mention', label: s.attach, title: s.attach, 'aria-label': s.attach });
    attach.addEventListener('click', () => {
      this.insertAtCaret('@');
      void this.refreshMenu();
    });
    // The composer's text on several agents at once, each in a git worktree (the extension asks which).
    const several = h('vscode-toolbar-button', { icon: 'run-all', label: s.runOnSeveral, title: s.runOnSeveral, 'aria-label': s.runOnSeveral, 'data-testid': 'run-on-several' });
    several.addEventListener('click', () => send('runOnSeveralAgents', { text: this.input.value }));
    this.sendBtn = h('vscode-button', { className: 'send', title: `${s.send} (Enter)`, 'aria-label': s.send, 'data-testid': 'send' }, icon('send'));
    this.sendBtn.addEventListener('click', () => this.submit());
    this.stopBtn = h('vscode-button', { className: 'stop', secondary: true, title: s.stop, 'aria-label': s.stop, 'data-testid': 'stop', hidden: true }, icon('debug-stop'), ` ${s.stop}`);
    this.stopBtn.addEventListener('click', () => send('cancel', {}));
    this.steerBtn = h(
      'vscode-button',
      { className: 'steer', secondary: true, title: s.steerHint, 'aria-label': s.steerHint, 'data-testid': 'steer', hidden: true },
      icon('debug-step-into'),
      ` ${s.steer}`,
    );
    this.steerBtn.addEventListener('click', () => this.submit('steer'));
    this.followUpBtn = h('vscode-button', { className: 'follow-up', title: s.followUpHint, 'aria-label': s.followUpHint, 'data-testid': 'follow-up', hidden: true }, icon('send'), ` ${s.followUp}`);
    this.followUpBtn.addEventListener('click', () => this.submit('followUp'));
    this.agentEl = h('div', { className: 'agent-area', 'aria-label': s.agentState, hidden: true });
    const box = h(
      'div',
      { className: 'input-box' },
      this.chipsEl,
      this.input,
      h('div', { className: 'input-actions' }, attach, several, h('span', { className: 'spacer' }), this.stopBtn, this.steerBtn, this.followUpBtn, this.sendBtn),
    );
    const keys = h('span', { className: 'sr-only', id: 'composer-keys' }, s.keyboardHint);
    this.el = h('div', { className: 'composer' }, this.agentEl, this.queueEl, this.menu, this.warn, this.silence, box, keys);

    this.input.addEventListener('keydown', (e) => this.onKey(e));
    this.input.addEventListener('input', () => {
      this.recall.stop();
      this.autosize();
      this.hooks.onDraftChange();
      void this.refreshMenu();
    });
    this.input.addEventListener('blur', () =>
      setTimeout(() => {
        if (!this.el.contains(document.activeElement)) this.closeMenu();
      }, 150),
    );
    this.input.addEventListener('paste', (e) => this.onPaste(e));
    this.el.addEventListener('dragover', (e) => e.preventDefault());
    this.el.addEventListener('drop', (e) => this.onDrop(e));
  }

  setDraft(text: string, chips: ContextChip[]): void {
    this.input.value = text;
    this.chips = chips;
    this.renderChips();
    this.autosize();
  }

  addChip(chip: ContextChip): void {
    if (this.chips.some((c) => c.uri && c.uri === chip.uri && c.kind === chip.kind && JSON.stringify(c.range) === JSON.stringify(chip.range))) return;
    this.chips.push(chip);
    this.renderChips();
    this.hooks.onDraftChange();
  }

  focus(): void {
    this.input.focus();
  }

  update(header: HeaderState): void {
    const running = header.turn !== 'idle' || header.state === 'busy';
    this.stopBtn.hidden = !running;
    this.sendBtn.title = running ? this.hooks.strings().queued : `${this.hooks.strings().send} (Enter)`;
    // An RPC agent takes messages while it streams: steer (after the current tool call) or follow up (when done).
    const rpc = header.rpc;
    this.rpcStreaming = rpc && header.turn !== 'idle' && (rpc.canSteer || rpc.canFollowUp) ? rpc : undefined;
    this.steerBtn.hidden = !this.rpcStreaming?.canSteer;
    this.followUpBtn.hidden = !this.rpcStreaming?.canFollowUp;
    this.sendBtn.hidden = !!this.rpcStreaming;
    // Three buttons do not fit a narrow side bar: Stop keeps only its icon (and its title) meanwhile.
    const s = this.hooks.strings();
    const compact = !!this.rpcStreaming;
    if (this.stopBtn.dataset.compact !== String(compact)) {
      this.stopBtn.dataset.compact = String(compact);
      this.stopBtn.replaceChildren(icon('debug-stop'), compact ? '' : ` ${s.stop}`);
    }
    this.renderAgent(rpc);
    const silent = running ? header.silentSeconds : undefined;
    this.silence.hidden = silent === undefined;
    if (silent !== undefined) this.silenceText.textContent = fmt(this.hooks.strings().noOutput, silent);
  }

  /** The agent's `set_editor_text`: replaces the draft. */
  setText(text: string): void {
    this.input.value = text;
    this.autosize();
    this.hooks.onDraftChange();
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  /** Widgets (plain text lines), the agent's queue and its state, for RPC agents. */
  private renderAgent(rpc: RpcChatState | undefined): void {
    const s = this.hooks.strings();
    if (!rpc) {
      this.agentEl.hidden = true;
      this.agentEl.replaceChildren();
      return;
    }
    const parts: HTMLElement[] = [];
    if (rpc.widgets.length) {
      parts.push(
        h('div', { className: 'widgets', 'aria-label': s.widgets, 'data-testid': 'widgets' }, ...rpc.widgets.map((w) => h('pre', { className: 'widget', 'data-key': w.key }, w.lines.join('\n')))),
      );
    }
    if (rpc.queued > 0) {
      const items = [...rpc.steering.map((t) => `${s.steer}: ${t}`), ...rpc.followUp.map((t) => `${s.followUp}: ${t}`)];
      parts.push(
        h(
          'div',
          { className: 'agent-queue', role: 'status', 'data-testid': 'agent-queue', title: items.join('\n') },
          icon('history'),
          h('span', null, fmt(s.agentQueue, rpc.queued)),
          items.length ? h('span', { className: 'agent-queue-items' }, items.join(' · ')) : null,
        ),
      );
    }
    const state: string[] = [];
    if (rpc.steeringMode) state.push(`${s.steer}: ${rpc.steeringMode}`);
    if (rpc.followUpMode) state.push(`${s.followUp}: ${rpc.followUpMode}`);
    if (rpc.interruptMode) state.push(`interrupt: ${rpc.interruptMode}`);
    if (rpc.thinkingLevel) state.push(`thinking: ${rpc.thinkingLevel}`);
    if (rpc.autoCompaction !== undefined) state.push(`auto-compaction: ${rpc.autoCompaction ? 'on' : 'off'}`);
    if (rpc.autoRetry !== undefined) state.push(`auto-retry: ${rpc.autoRetry ? 'on' : 'off'}`);
    const st = rpc.stats;
    if (st?.totalTokens !== undefined) state.push(`${st.totalTokens} tokens${st.cost ? ` · $${st.cost.toFixed(4)}` : ''}`);
    state.push(...rpc.status);
    if (state.length) parts.push(h('div', { className: 'agent-state', 'data-testid': 'agent-state', title: state.join('\n') }, state.join(' · ')));
    this.agentEl.replaceChildren(...parts);
    this.agentEl.hidden = parts.length === 0;
  }

  renderQueue(queue: QueuedPrompt[]): void {
    const s = this.hooks.strings();
    this.queueEl.replaceChildren(
      ...queue.map((q) => {
        const text = h('span', { className: 'queued-text', title: s.editQueued, tabindex: '0', role: 'button', 'aria-label': `${s.editQueued}: ${q.text}` }, q.text);
        const edit = () => {
          const ta = h('textarea', { className: 'queued-edit', 'aria-label': s.editQueued, rows: 2 });
          ta.value = q.text;
          const done = () => send('editQueued', { id: q.id, text: ta.value });
          ta.addEventListener('keydown', (e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              done();
            } else if (e.key === 'Escape') send('editQueued', { id: q.id, text: q.text });
          });
          ta.addEventListener('blur', done);
          text.replaceWith(ta);
          ta.focus();
        };
        text.addEventListener('click', edit);
        text.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') edit();
        });
        const remove = h('button', { type: 'button', className: 'icon-btn', title: s.removeQueued, 'aria-label': `${s.removeQueued}: ${q.text}` }, icon('close'));
        remove.addEventListener('click', () => send('removeQueued', { id: q.id }));
        return h('li', { className: 'queued', 'data-testid': 'queued' }, icon('history'), text, q.context.length ? h('span', { className: 'queued-ctx' }, `+${q.context.length}`) : null, remove);
      }),
    );
    this.queueEl.hidden = queue.length === 0;
    if (queue.length) this.queueEl.setAttribute('aria-label', `${s.queued} (${queue.length})`);
  }

  private submit(kind?: 'steer' | 'followUp'): void {
    const text = this.input.value;
    if (!text.trim() && !this.chips.length) return;
    const context = this.chips;
    this.recall.add(text);
    this.input.value = '';
    this.chips = [];
    this.renderChips();
    this.autosize();
    this.closeMenu();
    this.hooks.onDraftChange();
    const method = kind && this.rpcStreaming ? kind : 'prompt';
    request(method, { text, context }).then(
      (r) => {
        if (r.queued) this.hooks.announce('untilStarted' in r && r.untilStarted ? this.hooks.strings().queuedUntilStarted : this.hooks.strings().queued);
      },
      (e: Error) => {
        // A refused message (a full queue, an agent that cannot take it) comes back to the composer unless a new one was begun.
        if (!this.input.value && !this.chips.length) {
          this.setDraft(text, context);
          this.hooks.onDraftChange();
        }
        this.showWarning(e.message);
      },
    );
  }

  private onKey(e: KeyboardEvent): void {
    const menuOpen = !this.menu.hidden && this.items.length > 0;
    if (menuOpen) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        this.active = (this.active + (e.key === 'ArrowDown' ? 1 : this.items.length - 1)) % this.items.length;
        this.renderMenu();
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        void this.items[this.active]?.pick();
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        this.closeMenu();
        return;
      }
    }
    // Ctrl/Cmd+Up on the first line (as in VS Code's own chat): to the transcript, a pending permission first.
    if (e.key === 'ArrowUp' && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && !this.input.value.slice(0, this.input.selectionStart).includes('\n')) {
      if (this.hooks.focusTranscript()) e.preventDefault();
      return;
    }
    if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && !e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey && this.recall.key(this.input, e.key === 'ArrowUp')) {
      e.preventDefault();
      this.autosize();
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      // RPC agent streaming: Enter follows up, Ctrl/Cmd+Enter steers.
      const steer = (e.ctrlKey || e.metaKey) && this.rpcStreaming?.canSteer;
      this.submit(this.rpcStreaming ? (steer ? 'steer' : this.rpcStreaming.canFollowUp ? 'followUp' : 'steer') : undefined);
    } else if (e.key === 'Escape' && this.hooks.header().turn !== 'idle') {
      send('cancel', {});
    }
  }

  /** The `/command` or `@query` being typed right before the caret, if any. */
  private trigger(): { kind: '/' | '@'; query: string; start: number } | undefined {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const slash = /^\/(\S*)$/.exec(before);
    if (slash) return { kind: '/', query: slash[1]!, start: 0 };
    const at = /(?:^|\s)@([^\s@]*)$/.exec(before);
    if (at) return { kind: '@', query: at[1]!, start: before.length - at[1]!.length - 1 };
    return undefined;
  }

  private async refreshMenu(): Promise<void> {
    const t = this.trigger();
    const s = this.hooks.strings();
    if (!t) return this.closeMenu();
    const seq = ++this.searchSeq;
    const replaceTrigger = (text: string) => {
      const v = this.input.value;
      const end = this.input.selectionStart;
      this.input.value = v.slice(0, t.start) + text + v.slice(end);
      const caret = t.start + text.length;
      this.input.setSelectionRange(caret, caret);
      this.closeMenu();
      this.hooks.onDraftChange();
      this.input.focus();
    };
    let items: MenuItem[];
    if (t.kind === '/') {
      const q = t.query.toLowerCase();
      items = this.hooks
        .header()
        .commands.filter((c) => c.name.toLowerCase().includes(q))
        .map((c) => ({ label: `/${c.name}`, description: c.hint ? `${c.description} — ${c.hint}` : c.description, iconName: 'terminal-cmd', pick: () => replaceTrigger(`/${c.name} `) }));
    } else
      items = await mentionItems(
        t.query,
        s,
        () => replaceTrigger(''),
        (c) => this.addChip(c),
        (text) => this.showWarning(text),
        () => seq !== this.searchSeq,
      );
    if (seq !== this.searchSeq) return;
    this.items = items;
    this.active = 0;
    this.menu.dataset.kind = t.kind;
    this.renderMenu();
  }

  private renderMenu(): void {
    const s = this.hooks.strings();
    this.menu.hidden = false;
    if (!this.items.length) {
      this.menu.replaceChildren(h('div', { className: 'menu-empty' }, s.noMatches));
      this.input.removeAttribute('aria-activedescendant');
      return;
    }
    this.menu.setAttribute('aria-label', this.menu.dataset.kind === '/' ? s.commands : s.files);
    this.menu.replaceChildren(
      ...this.items.map((it, i) => {
        const row = h(
          'div',
          { className: `menu-item${i === this.active ? ' active' : ''}`, role: 'option', id: `menu-item-${i}`, 'aria-selected': String(i === this.active) },
          icon(it.iconName),
          h('span', { className: 'menu-label' }, it.label),
          it.description ? h('span', { className: 'menu-desc' }, it.description) : null,
        );
        row.addEventListener('mousedown', (e) => {
          e.preventDefault();
          void it.pick();
        });
        return row;
      }),
    );
    this.input.setAttribute('aria-activedescendant', `menu-item-${this.active}`);
    this.menu.querySelector('.active')?.scrollIntoView({ block: 'nearest' });
  }

  private closeMenu(): void {
    this.searchSeq++;
    this.menu.hidden = true;
    this.items = [];
    this.input.removeAttribute('aria-activedescendant');
  }

  private renderChips(): void {
    const s = this.hooks.strings();
    this.chipsEl.replaceChildren(
      ...this.chips.map((c) => {
        const remove = h('button', { type: 'button', className: 'chip-remove', title: fmt(s.removeChip, c.label), 'aria-label': fmt(s.removeChip, c.label) }, icon('close'));
        remove.addEventListener('click', () => {
          this.chips = this.chips.filter((x) => x !== c);
          this.renderChips();
          this.hooks.onDraftChange();
          this.input.focus();
        });
        const ic =
          ({ selection: 'selection', problems: 'warning', image: 'file-media', folder: 'folder', terminal: 'terminal', git: 'git-compare', url: 'link' } as Record<string, string>)[c.kind] ?? 'file';
        const preview = c.kind === 'image' && c.text ? h('img', { src: `data:${c.mimeType ?? 'image/png'};base64,${c.text}`, alt: '' }) : icon(ic);
        const label = c.size === undefined ? c.label : `${c.label} · ${sizeText(c.size)}`;
        return h('span', { className: `chip chip-${c.kind}`, title: c.uri ?? c.label, 'data-testid': 'chip' }, preview, h('span', null, label), remove);
      }),
    );
    this.chipsEl.hidden = this.chips.length === 0;
  }

  private insertAtCaret(text: string): void {
    const v = this.input.value;
    const at = this.input.selectionStart;
    const pad = at > 0 && !/\s/.test(v[at - 1]!) ? ' ' : '';
    this.input.value = v.slice(0, at) + pad + text + v.slice(this.input.selectionEnd);
    const caret = at + pad.length + text.length;
    this.input.focus();
    this.input.setSelectionRange(caret, caret);
  }

  private onPaste(e: ClipboardEvent): void {
    const files = [...(e.clipboardData?.items ?? [])]
      .filter((i) => i.kind === 'file' && i.type.startsWith('image/'))
      .map((i) => i.getAsFile())
      .filter((f): f is File => !!f);
    if (!files.length) return;
    e.preventDefault();
    this.addImages(files);
  }

  private onDrop(e: DragEvent): void {
    const uris = droppedUris(e.dataTransfer);
    if (uris.length) {
      e.preventDefault();
      void request('droppedUris', { uris }).then(({ chips, refused }) => {
        for (const c of chips) this.addChip(c);
        if (refused.length) this.showWarning(fmt(this.hooks.strings().dropRefused, refused.join(', ')));
      });
      return;
    }
    const files = [...(e.dataTransfer?.files ?? [])].filter((f) => f.type.startsWith('image/'));
    if (!files.length) return;
    e.preventDefault();
    this.addImages(files);
  }

  private addImages(files: File[]): void {
    if (!this.hooks.header().caps.image) {
      this.showWarning(this.hooks.strings().imagesUnsupported);
      return;
    }
    for (const f of files) {
      const reader = new FileReader();
      reader.onload = () => {
        const url = String(reader.result);
        const data = url.slice(url.indexOf(',') + 1);
        this.addChip({ id: `chip-${++chipCount}`, kind: 'image', label: f.name || 'image', text: data, mimeType: f.type });
      };
      reader.readAsDataURL(f);
    }
  }

  private showWarning(text: string): void {
    this.warn.replaceChildren(icon('warning'), ` ${text}`);
    this.warn.hidden = false;
    this.hooks.announce(text);
    setTimeout(() => (this.warn.hidden = true), 6000);
  }

  private autosize(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 240)}px`;
  }
}
