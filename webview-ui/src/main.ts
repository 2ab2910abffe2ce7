/**
 * The chat webview. Asks the extension `ready`, renders the snapshot it answers, then applies events.
 * Everything shown comes from the extension's session model, so a reload (or the view being hidden, which
 * destroys this page) loses nothing but the draft, which lives in the webview state.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-toolbar-button/index.js';
import type { ChatStrings, ContextChip, HeaderState, PlanEntry, Snapshot } from '../../src/shared/chatProtocol';
import { Composer } from './composer';
import { fmt, h, icon } from './dom';
import { Header } from './header';
import { onEvent, request, send, vscodeApi } from './rpc';
import { Transcript } from './transcript';

interface SavedState {
  draft: string;
  chips: ContextChip[];
  expanded: string[];
  /** What was sent, for ↑/↓ recall (older pages saved none). */
  sent?: string[];
}

const saved = (vscodeApi.getState() ?? { draft: '', chips: [], expanded: [] }) as SavedState;

let strings: ChatStrings;
let header: HeaderState;
const expanded = new Set(saved.expanded);

const politeLive = h('div', { className: 'sr-only', 'aria-live': 'polite', role: 'status' });
const urgentLive = h('div', { className: 'sr-only', 'aria-live': 'assertive', role: 'alert' });
function announce(text: string, urgent = false): void {
  const region = urgent ? urgentLive : politeLive;
  region.textContent = '';
  setTimeout(() => (region.textContent = text.length > 400 ? `${text.slice(0, 400)}…` : text), 50);
}

function persist(): void {
  vscodeApi.setState({ draft: composer.input.value, chips: composer.chips, expanded: [...expanded], sent: composer.recall.list } satisfies SavedState);
}

let transcript: Transcript;
let composer: Composer;
let headerView: Header;
let planEl: HTMLDetailsElement;

function renderPlan(entries: PlanEntry[]): void {
  planEl.hidden = entries.length === 0;
  if (!entries.length) return;
  const done = entries.filter((e) => e.status === 'completed').length;
  const summary = planEl.querySelector('summary')!;
  summary.replaceChildren(icon('checklist'), h('span', null, `${strings.plan} `), h('span', { className: 'plan-count' }, `${done}/${entries.length}`));
  let phase: string | undefined;
  const rows: HTMLElement[] = [];
  for (const e of entries) {
    if (e.phase && e.phase !== phase) {
      phase = e.phase;
      rows.push(h('li', { className: 'plan-phase' }, phase));
    }
    const ic = e.status === 'completed' ? 'pass-filled' : e.status === 'in_progress' ? 'circle-large-filled' : 'circle-large-outline';
    rows.push(
      h(
        'li',
        { className: `plan-entry ${e.status}`, 'aria-checked': e.status === 'completed' ? 'true' : e.status === 'in_progress' ? 'mixed' : 'false', role: 'checkbox', 'aria-readonly': 'true' },
        icon(ic),
        h('span', null, e.content),
      ),
    );
  }
  planEl.querySelector('ul')!.replaceChildren(...rows);
}

function applyHeader(next: HeaderState): void {
  const wasRunning = header?.turn !== 'idle';
  header = next;
  headerView.update(next);
  composer.update(next);
  document.body.dataset.turn = next.turn;
  transcript.refreshLive();
  if (wasRunning && next.turn === 'idle') {
    const text = transcript.lastAgentText();
    if (text) announce(fmt(strings.agentAnswered, text));
  }
}

/** Restricted Mode: no chat, only why no agent runs and the way to trust the folder (a new snapshot mounts the chat). */
function mountRestricted(snapshot: Snapshot): void {
  const s = snapshot.strings;
  const manage = h('vscode-button', { 'data-testid': 'manage-trust' }, icon('shield'), ` ${s.manageTrust}`);
  manage.addEventListener('click', () => send('manageTrust', {}));
  document
    .getElementById('app')!
    .replaceChildren(h('h1', { className: 'sr-only' }, s.title), h('div', { className: 'restricted', 'data-testid': 'restricted' }, icon('shield'), h('p', null, s.restrictedMode), manage));
  document.body.dataset.view = 'restricted';
}

function mount(snapshot: Snapshot): void {
  if (snapshot.restricted) {
    mountRestricted(snapshot);
    return;
  }
  const t0 = performance.now();
  document.body.dataset.view = 'chat';
  strings = snapshot.strings;
  header = snapshot.header;
  const app = document.getElementById('app')!;
  headerView = new Header(() => strings);
  transcript = new Transcript({
    strings: () => strings,
    header: () => header,
    expanded,
    onExpandedChange: persist,
    announce,
    focusComposer: () => composer.focus(),
    fetchEarlier: (before, count) => request('earlier', { before, count }),
  });
  composer = new Composer({
    strings: () => strings,
    header: () => header,
    onDraftChange: persist,
    announce: (t) => announce(t),
    focusTranscript: () => transcript.focusLatest(),
    sent: saved.sent ?? [],
  });
  planEl = h('details', { className: 'plan', open: true, hidden: true, 'aria-label': strings.plan }, h('summary'), h('ul', { className: 'plan-list' })) as HTMLDetailsElement;
  app.replaceChildren(h('h1', { className: 'sr-only' }, strings.title), headerView.el, transcript.el, planEl, composer.el, politeLive, urgentLive);
  apply(snapshot);
  composer.setDraft(saved.draft, [...saved.chips, ...snapshot.pendingContext]);
  if (snapshot.pendingContext.length) composer.focus();
  document.body.dataset.ready = 'true';
  // How long building the page from the snapshot took (read by the long-transcript bench).
  document.body.dataset.mountMs = String(Math.round(performance.now() - t0));
}

function apply(snapshot: Snapshot): void {
  strings = snapshot.strings;
  header = snapshot.header;
  transcript.reset(snapshot.entities, snapshot.earlier);
  renderPlan(snapshot.plan);
  applyHeader(snapshot.header);
  composer.renderQueue(snapshot.queue);
}

onEvent((e) => {
  if (!transcript) {
    // The Restricted Mode page until the workspace is trusted: then the chat, built from the new snapshot.
    if (e.type === 'snapshot' && !e.snapshot.restricted) mount(e.snapshot);
    return;
  }
  switch (e.type) {
    case 'snapshot':
      apply(e.snapshot);
      break;
    case 'entities':
      transcript.upsert(e.entities);
      break;
    case 'appends':
      transcript.append(e.appends);
      break;
    case 'plan':
      renderPlan(e.entries);
      break;
    case 'header':
      applyHeader(e.header);
      break;
    case 'queue':
      composer.renderQueue(e.queue);
      break;
    case 'addContext':
      composer.addChip(e.chip);
      composer.focus();
      break;
    case 'focusInput':
      composer.focus();
      break;
    case 'editorText':
      composer.setText(e.text);
      break;
  }
});

request('ready', {}).then(mount, (e: Error) => {
  document.getElementById('app')!.textContent = e.message;
});
