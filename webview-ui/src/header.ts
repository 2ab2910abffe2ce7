/**
 * The toolbar: agent picker and connection state (the one "+" is the view's title action); then the session's pickers — config options in
 * the agent's order (legacy modes / models when no option covers them) — and the usage meter.
 */
import type { ChatStrings, ConfigOptionView, HeaderState, TabView } from '../../src/shared/chatProtocol';
import { h, icon } from './dom';
import { send } from './rpc';

interface Choice {
  value: string;
  name: string;
  description?: string;
  /** The agent's group for this choice (ACP grouped select options): shown as a label above the group's first choice. */
  group?: string;
}

type SelectEl = HTMLElement & { value: string; combobox: boolean; filter: string };

/** A picker with more choices than this takes typing to filter them (e.g. a model list across providers). */
export const SEARCHABLE_FROM = 11;
/** The value of a group's label row (disabled, never chosen). */
const GROUP_VALUE = '\u0000group:';

export class Header {
  readonly el: HTMLElement;
  private readonly tabs: HTMLElement;
  private readonly top: HTMLElement;
  private readonly pickers: HTMLElement;
  private readonly selects = new Map<string, { el: SelectEl; signature: string }>();

  constructor(private readonly strings: () => ChatStrings) {
    // The tab list holds only tabs: each tab's close button is a mouse affordance, hidden from assistive
    // technology and out of the tab order (Delete closes the focused tab).
    this.tabs = h('div', { className: 'tabs', role: 'tablist', 'aria-label': strings().tabs });
    this.tabs.addEventListener('keydown', (e) => this.onTabKey(e));
    this.top = h('div', { className: 'header-top' });
    this.pickers = h('div', { className: 'header-pickers' });
    this.el = h('div', { className: 'header' }, this.tabs, h('div', { role: 'toolbar', 'aria-label': strings().agent }, this.top, this.pickers));
  }

  /** The tab list's keys (WAI-ARIA tabs, manual activation): arrows and Home/End move, Enter/Space switch, Delete closes. */
  private onTabKey(e: KeyboardEvent): void {
    const tabs = [...this.tabs.querySelectorAll<HTMLElement>('[role="tab"]')];
    const i = tabs.indexOf(e.target as HTMLElement);
    if (i < 0) return;
    const to = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      tabs[(to + tabs.length) % tabs.length]?.focus();
    } else if (e.key === 'Delete' && tabs.length > 1) {
      e.preventDefault();
      send('closeTab', { id: tabs[i]!.dataset.tab! });
    }
  }

  update(state: HeaderState): void {
    const s = this.strings();
    this.renderTabs(state.tabs ?? [], s);
    const stateLabel = { stopped: s.stateStopped, starting: s.stateStarting, ready: s.stateReady, busy: s.stateBusy, error: s.stateError }[state.state];
    const agentChoices = (state.agents.length ? state.agents : [state.agentName ?? '—']).map((a) => {
      const source = state.agentSources?.[a];
      return { value: a, name: a, ...(source ? { description: source } : {}) };
    });
    const agentSelect = this.select('agent', s.agent, agentChoices, state.agentName ?? '', (v) => send('selectAgent', { name: v }));
    const dot = h(
      'span',
      { className: `conn conn-${state.state}`, role: 'status', title: state.error ? `${stateLabel}: ${state.error}` : stateLabel, 'aria-label': `${s.agent}: ${stateLabel}` },
      icon(state.state === 'starting' || state.state === 'busy' ? 'loading codicon-modifier-spin' : state.state === 'error' ? 'error' : state.state === 'ready' ? 'circle-filled' : 'circle-outline'),
      h('span', { className: 'conn-label' }, stateLabel),
    );
    // No "+" here: the view's title bar has the one "+" (a new conversation tab).
    this.top.replaceChildren(agentSelect, dot);

    const pickers: HTMLElement[] = [];
    const opts = state.configOptions;
    const hasCat = (c: string) => opts.some((o) => o.category === c);
    if (state.modes?.availableModes.length && !hasCat('mode')) {
      const modes = state.modes.availableModes.map((m) => ({ value: m.id, name: m.name, ...(m.description ? { description: m.description } : {}) }));
      pickers.push(this.select('mode', s.mode, modes, state.modes.currentModeId, (v) => send('setMode', { modeId: v }), 'symbol-enum'));
    }
    if (state.models?.availableModels.length && !hasCat('model')) {
      const models = state.models.availableModels.map((m) => ({ value: m.modelId, name: m.name, ...(m.description ? { description: m.description } : {}) }));
      pickers.push(this.select('model', s.model, models, state.models.currentModelId, (v) => send('setModel', { modelId: v }), 'sparkle'));
    }
    for (const o of opts) pickers.push(this.configPicker(o));
    if (state.usage && state.usage.size > 0) pickers.push(this.usage(state, s));
    if (state.mcpServers?.length) pickers.push(this.mcp(state.mcpServers, s));
    if (state.sandbox) pickers.push(this.sandbox(state.sandbox, s));
    this.pickers.replaceChildren(...pickers);
    this.pickers.hidden = pickers.length === 0;
  }

  /** The conversations strip: a tab each (title, a badge for unseen news, close), then "new tab". */
  private renderTabs(tabs: TabView[], s: ChatStrings): void {
    const els = tabs.map((t) => {
      const badge = t.attention ? (t.attention === 'permission' ? s.tabNeedsPermission : s.tabFinished) : undefined;
      const label = [t.title || t.agent || '—', t.agent && t.agent !== t.title ? `(${t.agent})` : '', badge ? `— ${badge}` : ''].filter(Boolean).join(' ');
      const tab = h(
        'button',
        {
          className: `tab${t.active ? ' active' : ''}${t.attention ? ` attention-${t.attention}` : ''}`,
          type: 'button',
          role: 'tab',
          'aria-selected': String(t.active),
          tabindex: t.active ? '0' : '-1',
          'aria-keyshortcuts': tabs.length > 1 ? 'Delete' : undefined,
          title: label,
          'data-tab': t.id,
          'data-testid': `tab-${t.id}`,
        },
        ...(t.state === 'busy' || t.state === 'starting' ? [icon('loading codicon-modifier-spin')] : []),
        h('span', { className: 'tab-title' }, t.title || t.agent || '—'),
        ...(t.attention ? [h('span', { className: `tab-badge ${t.attention}`, 'aria-label': badge }, icon(t.attention === 'permission' ? 'shield' : 'circle-filled'))] : []),
      );
      tab.addEventListener('click', () => {
        if (!t.active) send('switchTab', { id: t.id });
      });
      const close = h('button', { className: 'tab-close', type: 'button', tabindex: '-1', 'aria-hidden': 'true', title: s.closeTab, 'data-testid': `close-${t.id}` }, icon('close'));
      close.addEventListener('click', () => send('closeTab', { id: t.id }));
      return h('span', { className: `tab-wrap${t.active ? ' active' : ''}` }, tab, ...(tabs.length > 1 ? [close] : []));
    });
    const hadFocus = this.tabs.contains(document.activeElement);
    this.tabs.replaceChildren(...els);
    if (hadFocus) this.tabs.querySelector<HTMLElement>('[role="tab"][aria-selected="true"]')?.focus();
  }

  private configPicker(o: ConfigOptionView): HTMLElement {
    if (o.type === 'boolean') {
      const box = h('vscode-checkbox', { label: o.name, title: o.description ?? o.name, checked: o.currentValue === true, 'data-testid': `config-${o.id}` }) as HTMLElement & { checked: boolean };
      box.addEventListener('change', () => send('setConfigOption', { configId: o.id, value: box.checked }));
      return box;
    }
    const iconName = o.category === 'mode' ? 'symbol-enum' : o.category === 'model' ? 'sparkle' : o.category === 'thought_level' ? 'lightbulb' : 'settings';
    const picker = this.select(`config-${o.id}`, o.name, o.options, String(o.currentValue), (v) => send('setConfigOption', { configId: o.id, value: v }), iconName);
    const el = this.selects.get(`config-${o.id}`)?.el;
    if (el) el.dataset.category = o.category ?? '';
    return picker;
  }

  /** A vscode-single-select, kept across updates (rebuilt only when its choices change, so it stays open). */
  private select(id: string, label: string, choices: Choice[], value: string, onChange: (v: string) => void, iconName?: string): HTMLElement {
    const signature = JSON.stringify(choices);
    let entry = this.selects.get(id);
    if (!entry || entry.signature !== signature) {
      // `label` names the element's inner combobox (an aria-label on the host does not reach its shadow DOM).
      const el = h('vscode-single-select', { label, 'aria-label': label, title: label, 'data-testid': id, className: `picker picker-${id.replace(/^config-.*/, 'config')}` }) as SelectEl;
      let group: string | undefined;
      for (const c of choices) {
        if (c.group && c.group !== group) el.append(h('vscode-option', { value: `${GROUP_VALUE}${c.group}`, disabled: true, className: 'picker-group' }, c.group));
        group = c.group;
        el.append(h('vscode-option', { value: c.value, description: c.description, selected: c.value === value }, c.name));
      }
      // A long list is searchable: typing filters its choices (by any part of their names).
      if (choices.length >= SEARCHABLE_FROM) {
        el.combobox = true;
        el.filter = 'contains';
      }
      el.addEventListener('change', () => {
        const v = el.value;
        if (v.startsWith(GROUP_VALUE)) return;
        if (v !== el.dataset.current) onChange(v);
      });
      entry = { el, signature };
      this.selects.set(id, entry);
    }
    entry.el.dataset.current = value;
    if (entry.el.value !== value) entry.el.value = value;
    // The full name in the tooltip (the picker may truncate it), and a visible label beside each session picker.
    const tooltip = `${label}: ${choices.find((c) => c.value === value)?.name ?? value}`;
    entry.el.title = tooltip;
    if (!iconName) return entry.el;
    return h('label', { className: 'picker-wrap', title: tooltip }, icon(iconName), h('span', { className: 'picker-label' }, label), entry.el);
  }

  /** The user's MCP servers the session received: their count, and each by name and transport in the tooltip and for screen readers. */
  private mcp(servers: { name: string; type: string }[], s: ChatStrings): HTMLElement {
    const list = servers.map((m) => `${m.name} (${m.type})`).join(', ');
    return h(
      'span',
      { className: 'mcp-servers', 'data-testid': 'mcp-servers', title: `${s.mcpServers}: ${list}`, 'aria-label': `${s.mcpServers}: ${list}`, role: 'img' },
      icon('mcp'),
      h('span', { className: 'mcp-count' }, String(servers.length)),
    );
  }

  /** The session's sandbox: a shield with the mode (a struck shield when off), what it allows in the tooltip. */
  private sandbox(sandbox: { mode: string; description?: string }, s: ChatStrings): HTMLElement {
    const off = sandbox.mode === 'off';
    const tip = off ? s.sandboxOff : `${s.sandbox}: ${sandbox.description ?? sandbox.mode}`;
    return h(
      'span',
      { className: `sandbox-mode${off ? ' off' : ''}`, 'data-testid': 'sandbox', 'data-mode': sandbox.mode, title: tip, 'aria-label': tip, role: 'img' },
      icon(off ? 'unlock' : 'shield'),
      h('span', { className: 'sandbox-label' }, off ? s.sandboxOff.split(':')[0]! : sandbox.mode),
    );
  }

  private usage(state: HeaderState, s: ChatStrings): HTMLElement {
    const u = state.usage!;
    const pct = Math.min(100, Math.round((u.used / u.size) * 100));
    const cost = u.cost ? ` · ${u.cost.amount.toFixed(u.cost.amount < 1 ? 3 : 2)} ${u.cost.currency}` : '';
    const text = `${compact(u.used)} / ${compact(u.size)}${cost}`;
    const bar = h('span', { className: 'meter', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(u.size), 'aria-valuenow': String(u.used), 'aria-label': s.usage });
    const fill = h('span', { className: `meter-fill${pct > 85 ? ' high' : ''}` });
    fill.style.width = `${pct}%`;
    bar.append(fill);
    const io = u.inputTokens !== undefined || u.outputTokens !== undefined ? ` · ↑${compact(u.inputTokens ?? 0)} ↓${compact(u.outputTokens ?? 0)}` : '';
    return h('span', { className: 'usage', 'data-testid': 'usage', title: `${s.usage}: ${u.used} / ${u.size} (${pct}%)${io}${cost}` }, bar, h('span', { className: 'usage-text' }, text));
  }
}

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1000) return `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k`;
  return String(n);
}
