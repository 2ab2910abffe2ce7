/**
 * The cards of the transcript other than messages: tool calls (with diffs, terminals and content), permission
 * requests, notices; and what they share with messages — chips for context parts and code-block actions.
 * Pure DOM builders: the transcript (transcript.ts) decides when to build and where to put them.
 */
import type { ChatStrings, ContentPart, HeaderState, MessageEntity, NoticeEntity, PermissionEntity, TerminalCardContent, ToolCallEntity } from '../../src/shared/chatProtocol';
import { terminalBlock } from './terminalCard';
import { diffHunks } from './diff';
import { fmt, h, icon } from './dom';
import { permissionOptionLabel } from '../../src/shared/permissionOptions';
import { renderMarkdown, SHELL_LANGS, type CodePre } from './markdown';

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
  cancelled: 'circle-slash',
};

/** A tool call's card: head (kind, title, status) and, when expanded, locations, content, raw input and output. */
export function toolCallCard(t: ToolCallEntity, s: ChatStrings, open: boolean): HTMLElement {
  // A call the person rejected, which then failed, says so: it was refused, not broken.
  const rejected = t.status === 'failed' && t.permission?.rejected === true;
  const statusText = rejected
    ? s.statusRejected
    : ({ pending: s.statusPending, in_progress: s.statusRunning, completed: s.statusDone, failed: s.statusFailed, cancelled: s.statusCancelled }[t.status] ?? t.status);
  const bodyId = `tool-body-${cssId(t.id)}`;
  const head = h(
    'button',
    { className: 'tool-head', type: 'button', 'aria-expanded': String(open), 'aria-controls': bodyId, 'data-action': 'toggle-tool', 'data-id': t.id },
    icon(open ? 'chevron-down' : 'chevron-right', 'chev'),
    icon(KIND_ICONS[t.toolKind] ?? 'tools', 'kind'),
    h('span', { className: 'tool-title' }, t.title || t.toolKind),
    h(
      'span',
      { className: `status status-${t.status}${rejected ? ' rejected' : ''}` },
      icon(rejected ? 'circle-slash' : (STATUS_ICONS[t.status] ?? 'circle-large-outline')),
      h('span', null, statusText),
    ),
  );
  const body = h('div', { className: 'tool-body', id: bodyId, hidden: !open });
  if (t.locations.length) {
    body.append(
      h(
        'div',
        { className: 'locations' },
        ...t.locations.map((l) =>
          h(
            'a',
            { href: '#', className: 'location', 'data-action': 'open-location', 'data-path': l.path, 'data-line': l.line ?? '' },
            icon('go-to-file'),
            `${l.label ?? l.path}${l.line ? `:${l.line}` : ''}`,
          ),
        ),
      ),
    );
  }
  // Terminals show without expanding the card: their output comes as the command runs.
  const terminals = t.content.filter(isTerminal).map((c) => terminalBlock(c, s));
  for (const c of t.content) if (!isTerminal(c)) body.append(toolContent(c, s));
  if (t.rawInput !== undefined && t.rawInput !== null) body.append(section(s.rawInput, scrollBox('raw', pretty(t.rawInput))));
  if (t.rawOutput !== undefined && t.rawOutput !== null) body.append(section(s.output, scrollBox('raw', pretty(t.rawOutput))));
  // Ended unfinished (the agent went away): why, shown without expanding the card.
  const why = t.interrupted ? h('div', { className: 'tool-interrupted' }, icon('debug-disconnect'), h('span', null, t.interrupted)) : null;
  // Answered by a stored rule: which one, and the way to revoke it.
  const p = t.permission;
  const byRule =
    p?.by === 'rule' && p.rule
      ? h(
          'div',
          { className: 'tool-rule' },
          icon('shield'),
          h(
            'span',
            null,
            fmt(p.rejected ? s.rejectedByRule : s.allowedByRule, p.rule),
            p.ruleId ? ' ' : null,
            p.ruleId ? h('a', { href: '#', 'data-action': 'revoke-rule', 'data-rule': p.ruleId }, s.revokeRule) : null,
          ),
        )
      : null;
  // What the sandbox blocked while it ran, each with Allow (a modal in the editor says exactly what).
  const blocked = (t.sandboxBlocked ?? []).map((b) => sandboxLine(b, s));
  const label = `${t.title || t.toolKind} — ${statusText}${t.interrupted ? `: ${t.interrupted}` : ''}`;
  return h('div', { className: `entry tool status-${t.status}`, role: 'group', 'aria-label': label }, head, why, byRule, ...blocked, ...terminals, body);
}

/** One block of the sandbox: what it refused, and Allow. */
function sandboxLine(b: { kind: string; target: string }, s: ChatStrings): HTMLElement {
  return h(
    'div',
    { className: 'tool-sandbox', 'data-testid': 'sandbox-blocked', role: 'status' },
    icon('shield'),
    h('span', null, fmt(b.kind === 'network' ? s.sandboxNetworkBlocked : s.sandboxWriteBlocked, b.target)),
    h('a', { href: '#', 'data-action': 'sandbox-allow', 'data-kind': b.kind, 'data-target': b.target }, s.sandboxAllow),
  );
}

function isTerminal(c: unknown): c is TerminalCardContent {
  return (c as { type?: unknown } | null)?.type === 'terminal' && typeof (c as { output?: unknown }).output === 'string';
}

function toolContent(c: unknown, s: ChatStrings): HTMLElement {
  const o = (c ?? {}) as Record<string, unknown>;
  if (o.type === 'diff' && typeof o.path === 'string' && typeof o.newText === 'string') {
    const oldText = typeof o.oldText === 'string' ? o.oldText : null;
    const lines = diffHunks(oldText ?? '', o.newText);
    const btn = h('vscode-button', { secondary: true, 'data-action': 'open-diff', title: s.openDiff }, icon('diff'), ` ${s.openDiff}`);
    const pre = scrollBox(
      'diff',
      ...lines.slice(0, 400).map((l) => (l ? h('div', { className: `dl ${l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'ctx'}` }, `${l.op} ${l.text}`) : h('div', { className: 'dl gap' }, '⋯'))),
    );
    const wrap = h('div', { className: 'diff-block' }, h('div', { className: 'diff-head' }, h('a', { href: '#', 'data-action': 'open-location', 'data-path': o.path }, o.path), btn), pre);
    (wrap as HTMLElement & { diffData?: unknown }).diffData = { path: o.path, oldText, newText: o.newText };
    return wrap;
  }
  // A terminal this window no longer knows (a copy kept across a reload): its output is not kept.
  if (o.type === 'terminal') return section(s.terminal, h('p', { className: 'term-gone' }, s.terminalGone));
  if (o.type === 'content') {
    const part = (o.content ?? {}) as ContentPart;
    if (part.type === 'text') {
      const md = h('div', { className: 'md' }, renderMarkdown(part.text ?? ''));
      decorateCode(md, s);
      return md;
    }
    return chips([part]) ?? h('span');
  }
  return scrollBox('raw', pretty(c));
}

/** A permission card: buttons by option kind when the chat may answer, else where to answer. */
export function permissionCard(p: PermissionEntity, s: ChatStrings, header: HeaderState): HTMLElement {
  const el = h('div', { className: `entry permission state-${p.state}`, role: 'group', 'aria-label': `${s.permissionRequest}: ${p.title}` });
  el.append(h('div', { className: 'perm-title' }, icon('shield'), h('span', null, h('span', null, `${s.permissionRequest}: `), h('strong', null, p.title))));
  if (p.state === 'pending') {
    if (header.permissionsInChat) {
      el.append(
        h(
          'div',
          { className: 'perm-options' },
          ...(p.buttons ?? p.options.map((o) => ({ ...o, label: permissionOptionLabel(o, s.optionKinds[o.kind as keyof ChatStrings['optionKinds']]) }))).map((b) =>
            h(
              'vscode-button',
              {
                secondary: !b.kind.startsWith('allow'),
                'data-action': 'answer-permission',
                'data-permission': p.id,
                'data-option': b.optionId,
                ...('scope' in b && b.scope ? { 'data-scope': b.scope } : {}),
                ...(p.options.find((o) => o.optionId === b.optionId)?.contradicts ? { title: s.optionContradicts } : {}),
              },
              b.label,
            ),
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

export function noticeCard(n: NoticeEntity, s: ChatStrings): HTMLElement {
  if (n.code === 'changes' && n.changes) return changesCard(n, n.changes, s);
  if (n.code === 'sandbox' && n.sandbox) return h('div', { className: 'entry notice warning sandbox', role: 'status' }, sandboxLine(n.sandbox, s));
  const ic = n.code === 'stopped' ? 'debug-stop' : n.severity === 'error' ? 'error' : n.severity === 'warning' ? 'warning' : 'info';
  const el = h('div', { className: `entry notice ${n.severity}${n.code ? ` ${n.code}` : ''}`, role: n.severity === 'error' ? 'alert' : 'status' });
  el.append(h('div', { className: 'notice-title' }, icon(ic), h('span', null, n.code === 'stopped' ? s.turnCancelled : n.code === 'long' ? s.longMessage : n.title)));
  if (n.detail) el.append(scrollBox('notice-detail', n.detail));
  // A message past the limit: its whole text is a file of ours, opened in an editor.
  if (n.code === 'long' && n.file)
    el.append(h('div', { className: 'notice-actions' }, h('vscode-button', { secondary: true, 'data-action': 'open-location', 'data-path': n.file }, s.openWholeMessage)));
  if (n.severity === 'error') {
    // Restart only until the agent runs again (`settled`): a second click would only restart it once more.
    el.append(
      h(
        'div',
        { className: 'notice-actions' },
        n.settled ? null : h('vscode-button', { 'data-action': 'restart' }, icon('debug-restart'), ` ${s.restart}`),
        h('vscode-button', { secondary: true, 'data-action': 'show-log' }, s.showLog),
      ),
    );
  }
  return el;
}

/** A turn's summary: how many files it changed, lines added and removed, Review and Undo all (of that tab's turn). */
function changesCard(n: NoticeEntity, c: NonNullable<NoticeEntity['changes']>, s: ChatStrings): HTMLElement {
  const data = { 'data-tab': c.tab, 'data-turn': String(c.turn) };
  return h(
    'div',
    { className: 'entry notice changes info', role: 'status' },
    h(
      'div',
      { className: 'notice-title' },
      icon('diff-multiple'),
      h('span', null, n.title),
      h('span', { className: 'lines-added' }, `+${c.added}`),
      h('span', { className: 'lines-removed' }, `−${c.removed}`),
    ),
    h(
      'div',
      { className: 'notice-actions' },
      h('vscode-button', { 'data-action': 'review-changes', ...data }, icon('diff'), ` ${s.reviewChanges}`),
      h('vscode-button', { secondary: true, 'data-action': 'undo-changes', ...data }, icon('discard'), ` ${s.undoChanges}`),
    ),
  );
}

export function cssId(id: string): string {
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

/**
 * A `<pre>` that may scroll (its CSS caps its height or lets it scroll sideways): one Tab stop, so a keyboard
 * can scroll it (entryKeys.ts leaves the arrows to it).
 */
function scrollBox(className: string, ...children: (string | HTMLElement)[]): HTMLPreElement {
  return h('pre', { className: `${className} scrollbox`, tabindex: 0 }, ...children);
}

function section(title: string, body: HTMLElement): HTMLElement {
  return h('div', { className: 'tool-section' }, h('div', { className: 'tool-section-title' }, title), body);
}

/** The code of the block `button` belongs to: the source text our renderer kept on its `<pre>` (see markdown.ts). */
export function codeOf(button: HTMLElement): string | undefined {
  return (button.closest('.codeblock')?.querySelector(':scope > pre') as CodePre | null)?.codeText;
}

/** Context chips for a message's non-text parts (resource links, embedded resources, images). */
export function chips(parts: ContentPart[]): HTMLElement | null {
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

/**
 * Wraps each code block of our markdown renderer with its actions (run only for shell blocks). A block gets
 * none unless what it shows is exactly the code the actions would use: nothing hidden inside it.
 */
export function decorateCode(root: HTMLElement, s: ChatStrings): void {
  for (const pre of root.querySelectorAll<CodePre>('pre')) {
    if (pre.parentElement?.classList.contains('codeblock')) continue;
    const code = pre.codeText;
    if (code === undefined || pre.querySelector('code')?.textContent !== code || pre.querySelector('[hidden], [style], details')) continue;
    // The language rides on the code element's class: data-* attributes never survive sanitizing.
    const lang = /(?:^|\s)language-(\S+)/.exec(pre.querySelector('code')?.className ?? '')?.[1] ?? '';
    const btn = (action: string, ic: string, label: string) => h('button', { type: 'button', className: 'code-action', 'data-action': action, title: label, 'aria-label': label }, icon(ic));
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
    pre.classList.add('scrollbox');
    pre.tabIndex = 0;
    pre.replaceWith(wrap);
    wrap.append(bar, pre);
  }
}

/** An agent message's "Copy as Markdown" (transcriptActions.ts copies its source). */
export function copyButton(s: ChatStrings): HTMLElement {
  return h('button', { type: 'button', className: 'icon-btn msg-copy', 'data-action': 'copy-message', title: s.copyMessage, 'aria-label': s.copyMessage }, icon('copy'));
}

/** A user message: its bubble, and "Restore checkpoint" / "Edit and resend" / "Retry" when it has a checkpoint (the extension asks which restore). */
export function userMessage(m: MessageEntity, s: ChatStrings): HTMLElement {
  return h(
    'div',
    { className: 'entry msg user', role: 'article', 'aria-label': s.you },
    m.checkpoint ? checkpointButtons(s) : null,
    h('div', { className: 'bubble' }, h('div', { className: 'user-text' }, m.text), chips(m.parts)),
  );
}

function checkpointButtons(s: ChatStrings): HTMLElement {
  return h(
    'div',
    { className: 'msg-checkpoint' },
    h('button', { type: 'button', className: 'icon-btn', 'data-action': 'restore-checkpoint', title: s.restoreCheckpoint, 'aria-label': s.restoreCheckpoint }, icon('discard')),
    h('button', { type: 'button', className: 'icon-btn', 'data-action': 'edit-resend', title: s.editResend, 'aria-label': s.editResend }, icon('edit')),
    h('button', { type: 'button', className: 'icon-btn', 'data-action': 'retry-prompt', title: s.retryPrompt, 'aria-label': s.retryPrompt }, icon('refresh')),
  );
}

/** What a screen reader hears when a permission request comes (urgent). */
export function permissionAnnouncement(p: PermissionEntity, s: ChatStrings, header: HeaderState): string {
  return `${s.permissionRequest}: ${p.title}${header.permissionsInChat ? `. ${s.permissionKeyHint}` : ''}`;
}
