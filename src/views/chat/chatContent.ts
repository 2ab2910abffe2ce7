/**
 * Pure helpers of the chat view (no `vscode` import, unit-tested in plain Node): prompt blocks from the
 * composer's text and context chips, and the agent's config options flattened for the header.
 */
import type { ConfigOptionView, ContextChip } from '../../shared/chatProtocol';
import type { PromptCapabilities } from '../../session/agentSession';
import { english, phrase } from '../../session/notices';
import { buildPromptParts as buildParts, type PromptContext } from '../../session/promptParts';
import type { ContentPart, NoticeEntity, TimelineEntity } from '../../session/sessionModel';

function toContext(chip: ContextChip): PromptContext {
  const base = { label: chip.label, ...(chip.uri ? { uri: chip.uri } : {}), ...(chip.text !== undefined ? { text: chip.text } : {}) };
  switch (chip.kind) {
    case 'file':
    case 'folder':
      return { kind: 'file', ...base };
    case 'selection':
      return { kind: 'code', ...base, ...(chip.range ? { lines: { start: chip.range.startLine, end: chip.range.endLine } } : {}) };
    case 'problems':
      return { kind: 'text', ...base, uri: 'agent-host:/problems' };
    case 'terminal':
      return { kind: 'text', ...base, uri: 'agent-host:/terminal-output' };
    case 'git':
      return { kind: 'text', ...base, uri: 'agent-host:/git-changes', mimeType: 'text/x-diff' };
    case 'url':
      return { kind: 'file', ...base };
    case 'image':
      return { kind: 'image', ...base, ...(chip.mimeType ? { mimeType: chip.mimeType } : {}) };
  }
}

/**
 * Prompt blocks from the composer's text and context chips (the session layer's one builder); images the
 * agent does not take are returned in `dropped` so the caller can tell the user.
 */
export function buildPromptParts(text: string, chips: ContextChip[], caps: PromptCapabilities): { parts: ContentPart[]; dropped: ContextChip[] } {
  const contexts = chips.map(toContext);
  const { parts, dropped } = buildParts(text, contexts, caps);
  return { parts, dropped: chips.filter((_, i) => dropped.includes(contexts[i]!)) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The agent's `configOptions` (ACP SessionConfigOption: select with flat or grouped options, or boolean),
 * in the agent's order, with anything malformed left out.
 */
export function normalizeConfigOptions(raw: unknown[]): ConfigOptionView[] {
  const out: ConfigOptionView[] = [];
  for (const o of raw) {
    if (!isRecord(o) || typeof o.id !== 'string') continue;
    const name = typeof o.name === 'string' ? o.name : o.id;
    const base = {
      id: o.id,
      name,
      ...(typeof o.description === 'string' ? { description: o.description } : {}),
      ...(typeof o.category === 'string' ? { category: o.category } : {}),
      ...(isRecord(o._meta) && o._meta.hostNamed === true ? { hostNamed: true as const } : {}),
    };
    if (o.type === 'boolean' || typeof o.currentValue === 'boolean') {
      out.push({ ...base, type: 'boolean', currentValue: o.currentValue === true, options: [] });
      continue;
    }
    const options: ConfigOptionView['options'] = [];
    const add = (v: unknown, group?: string) => {
      if (!isRecord(v) || typeof v.value !== 'string') return;
      options.push({
        value: v.value,
        name: typeof v.name === 'string' ? v.name : v.value,
        ...(typeof v.description === 'string' ? { description: v.description } : {}),
        ...(group ? { group } : {}),
      });
    };
    for (const item of Array.isArray(o.options) ? o.options : []) {
      if (isRecord(item) && Array.isArray(item.options)) {
        const group = typeof item.name === 'string' ? item.name : typeof item.group === 'string' ? item.group : undefined;
        for (const inner of item.options) add(inner, group);
      } else add(item);
    }
    if (!options.length) continue;
    out.push({ ...base, type: 'select', currentValue: typeof o.currentValue === 'string' ? o.currentValue : options[0]!.value, options });
  }
  return out;
}

/** Config options replace the legacy mode / model pickers when they cover the same category. */
export function legacyPickers(options: ConfigOptionView[]): { modes: boolean; models: boolean } {
  return {
    modes: !options.some((o) => o.category === 'mode'),
    models: !options.some((o) => o.category === 'model'),
  };
}

/** The line between one session's transcript and the next (a restart, another agent): which agent answers below, kept as a phrase (worded when shown). */
export function sessionDivider(sessionId: string, agentName: string): NoticeEntity {
  const title = phrase('continuedWith', agentName);
  return { kind: 'notice', id: `divider:${sessionId}:${Date.now()}`, severity: 'info', title: english(title), phrases: { title } };
}

/** Earlier sessions' part of the transcript: the agent has run again since, so their error notices' Restart is done. */
export function settledHistory(history: TimelineEntity[]): TimelineEntity[] {
  return history.map((e) => (e.kind === 'notice' && e.severity === 'error' && !e.settled ? { ...e, settled: true } : e));
}

/** A start that failed while messages wait in the queue: the reason, and `hint` (where they wait, how they go out). */
export function startFailedNotice(id: string, why: string, hint: string): NoticeEntity {
  return { kind: 'notice', id, severity: 'error', title: why.split('\n')[0] ?? why, detail: `${why}\n\n${hint}` };
}

/**
 * How many of the newest entities a snapshot (a tab shown, the view opened) carries: the page's first window and
 * a page of spares above it. The page asks for earlier ones as the reader scrolls up (`earlier`), so a tab switch
 * in a long session posts what is shown, not the whole session.
 */
export const SNAPSHOT_ENTITIES = 240;
/**
 * And about how many characters of them (at least one entity): a tab switch in a session of long answers posts a
 * few screens, not 240 long answers (VS Code serializes each post two or three times over on its way to the page).
 */
export const SNAPSHOT_CHARS = 192 * 1024;

/** About what an entity weighs in a post: a message's text (twice: its text and its parts), else its JSON. */
function postedChars(e: TimelineEntity): number {
  return e.kind === 'message' ? 2 * e.text.length + 100 : JSON.stringify(e).length;
}

/** Where the newest entities before `end` that a snapshot or a page carries start: at most `count`, and about SNAPSHOT_CHARS. */
export function windowStart(all: readonly TimelineEntity[], end: number, count: number): number {
  let chars = 0;
  let from = end;
  while (from > 0 && end - from < count) {
    chars += postedChars(all[from - 1]!);
    if (chars > SNAPSHOT_CHARS && from < end) break;
    from--;
  }
  return from;
}

export function entityKey(e: TimelineEntity): string {
  return `${e.kind}:${e.id}`;
}

const HISTORY_KEY = 'agentHost.chat.history';

/** Where a tab's earlier transcript is kept (the first tab keeps the key of the days before tabs). */
export function historyKey(tabId: string): string {
  return tabId === 't1' ? HISTORY_KEY : `${HISTORY_KEY}.${tabId}`;
}
