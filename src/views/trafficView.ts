/**
 * "Atrium: Show Agent Traffic": a live view of the active tab's protocol stream — both directions, id,
 * method, duration, size, the agent's stderr lines interleaved — with a filter, Copy as JSON Lines, and
 * the counters (requests timed out, restarts, permission dialogs timed out, lines dropped). Everything shown
 * or copied is redacted (`TrafficLog.list`); agent text reaches the page only as textContent.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { AgentManager } from '../manager/agentManager';
import type { TrafficEntry } from '../session/traffic';

export interface TrafficViewContext {
  manager: AgentManager;
  /** Permission dialogs answered `cancelled` on timeout (the broker's count). */
  permissionTimeouts(): number;
}

let current: vscode.WebviewPanel | undefined;

export function showTraffic(ctx: TrafficViewContext): vscode.WebviewPanel {
  if (current) {
    current.reveal();
    return current;
  }
  const panel = vscode.window.createWebviewPanel('agentHost.traffic', vscode.l10n.t('Agent Traffic'), vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [] });
  current = panel;
  const nonce = randomBytes(18).toString('base64');
  panel.webview.html = html(nonce);
  let unsubscribe: (() => void) | undefined;
  let batch: TrafficEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  const counters = () => ({ ...ctx.manager.traffic.counters, permissionTimeouts: ctx.permissionTimeouts(), agent: ctx.manager.agentName ?? '' });
  const flush = () => {
    timer = undefined;
    void panel.webview.postMessage({ type: 'append', entries: batch, counters: counters() });
    batch = [];
  };
  const follow = () => {
    unsubscribe?.();
    const traffic = ctx.manager.traffic;
    void panel.webview.postMessage({ type: 'reset', entries: traffic.list(), counters: counters() });
    unsubscribe = traffic.onEntry((e) => {
      batch.push(e);
      timer ??= setTimeout(flush, 100);
    });
  };
  const subs = [
    panel.webview.onDidReceiveMessage(async (msg: { type?: string; seqs?: number[] }) => {
      if (msg.type === 'ready') follow();
      if (msg.type === 'copy') {
        const wanted = new Set(msg.seqs ?? []);
        const traffic = ctx.manager.traffic;
        const lines = traffic.jsonLines(traffic.list().filter((e) => wanted.has(e.seq)));
        await vscode.env.clipboard.writeText(lines);
        void vscode.window.showInformationMessage(vscode.l10n.t('Copied {0} entries as JSON lines.', wanted.size));
      }
    }),
    ctx.manager.onDidChangeTabs(({ switched }) => switched && follow()),
    ctx.manager.onDidChangeState(() => void panel.webview.postMessage({ type: 'counters', counters: counters() })),
  ];
  panel.onDidDispose(() => {
    unsubscribe?.();
    if (timer) clearTimeout(timer);
    for (const d of subs) d.dispose();
    current = undefined;
  });
  return panel;
}

function html(nonce: string): string {
  const s = {
    filter: vscode.l10n.t('Filter (method, id, text)'),
    copy: vscode.l10n.t('Copy as JSON Lines'),
    timedOut: vscode.l10n.t('requests timed out'),
    restarts: vscode.l10n.t('restarts'),
    permissionTimeouts: vscode.l10n.t('permission dialogs timed out'),
    dropped: vscode.l10n.t('lines dropped'),
    empty: vscode.l10n.t('No traffic yet: start the agent or send a prompt.'),
  };
  return `<!DOCTYPE html>
<html><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'">
<style nonce="${nonce}">
body { font-family: var(--vscode-editor-font-family); font-size: 12px; color: var(--vscode-foreground); padding: 0 8px; }
header { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 6px 0; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
input { flex: 1; min-width: 160px; background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, transparent); padding: 3px 6px; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: 0; padding: 4px 10px; cursor: pointer; }
.counters { width: 100%; opacity: .85; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
td { padding: 2px 4px; border-bottom: 1px solid var(--vscode-panel-border, #8883); vertical-align: top; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
td.text { white-space: pre-wrap; word-break: break-all; max-height: 4.5em; }
tr.open td.text { max-height: none; }
.d-out td.dir { color: var(--vscode-charts-blue); } .d-in td.dir { color: var(--vscode-charts-green); }
.d-stderr td.dir, .k-error td.kind { color: var(--vscode-charts-red); } .d-note td.dir { color: var(--vscode-charts-yellow); }
col.t { width: 104px; } col.dir { width: 48px; } col.kind { width: 80px; } col.id { width: 70px; } col.m { width: 190px; } col.ms { width: 64px; } col.size { width: 64px; }
</style></head>
<body>
<header>
  <input id="filter" placeholder="${s.filter}" aria-label="${s.filter}">
  <button id="copy">${s.copy}</button>
  <div class="counters" id="counters" role="status"></div>
</header>
<p id="empty">${s.empty}</p>
<table><colgroup><col class="t"><col class="dir"><col class="kind"><col class="id"><col class="m"><col class="ms"><col class="size"><col></colgroup><tbody id="rows"></tbody></table>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const S = ${JSON.stringify(s).replace(/</g, '\\u003c')};
const rows = document.getElementById('rows');
const filter = document.getElementById('filter');
const MAX = 2000;
let entries = [];
const arrow = { out: '→', in: '←', stderr: 'err', note: '!' };
function time(at) { const d = new Date(at); return d.toTimeString().slice(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0'); }
function matches(e) { const q = filter.value.trim().toLowerCase(); return !q || [e.method, e.id, e.text, e.dir, e.kind].some((v) => v !== undefined && String(v).toLowerCase().includes(q)); }
function row(e) {
  const tr = document.createElement('tr');
  tr.className = 'd-' + e.dir + ' k-' + e.kind;
  tr.dataset.seq = e.seq;
  for (const [cls, v] of [['t', time(e.at)], ['dir', arrow[e.dir]], ['kind', e.kind], ['id', e.id ?? ''], ['m', e.method ?? ''], ['ms', e.durationMs !== undefined ? e.durationMs + ' ms' : ''], ['size', e.size], ['text', e.text]]) {
    const td = document.createElement('td'); td.className = cls; td.textContent = String(v); tr.appendChild(td);
  }
  tr.addEventListener('click', () => tr.classList.toggle('open'));
  tr.hidden = !matches(e);
  return tr;
}
function counters(c) {
  document.getElementById('counters').textContent = (c.agent ? c.agent + ' · ' : '') + [[c.requestsTimedOut, S.timedOut], [c.restarts, S.restarts], [c.permissionTimeouts, S.permissionTimeouts], [c.linesDropped, S.dropped]].map(([n, t]) => n + ' ' + t).join(' · ');
}
function add(list) {
  const stick = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  const frag = document.createDocumentFragment();
  for (const e of list) { entries.push(e); frag.appendChild(row(e)); }
  rows.appendChild(frag);
  while (entries.length > MAX) { entries.shift(); rows.firstChild.remove(); }
  document.getElementById('empty').hidden = entries.length > 0;
  if (stick) window.scrollTo(0, document.body.scrollHeight);
}
window.addEventListener('message', (ev) => {
  const m = ev.data;
  if (m.type === 'reset') { entries = []; rows.textContent = ''; add(m.entries); }
  if (m.type === 'append') add(m.entries);
  if (m.counters) counters(m.counters);
});
filter.addEventListener('input', () => { for (const tr of rows.children) tr.hidden = !matches(entries.find((e) => String(e.seq) === tr.dataset.seq)); });
document.getElementById('copy').addEventListener('click', () => vscode.postMessage({ type: 'copy', seqs: entries.filter(matches).map((e) => e.seq) }));
vscode.postMessage({ type: 'ready' });
</script></body></html>`;
}
