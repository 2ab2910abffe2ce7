import type { PermissionOption, ToolCallEntity } from './sessionModel';

export interface PermissionRequestInfo {
  sessionId: string;
  /** The configured agent that asks (rules are kept per agent). */
  agentName?: string;
  /** A copy of the tool call taken when the request arrived: what the person sees and any rule is made from. */
  toolCall: ToolCallEntity;
  options: PermissionOption[];
  /** Set when the agent changed the tool call while an earlier ask was open: what changed, one line each. */
  changed?: string[];
}

/** Tool kinds whose rules must name a parsed command or a path, never only a title. */
export const NO_TITLE_RULE_KINDS = new Set(['execute', 'edit', 'delete', 'move', 'fetch']);

/** The label a permission option gets from its kind (the agent's own wording is shown beside it). */
export const OPTION_KIND_LABELS: Record<string, string> = {
  allow_once: 'Allow once',
  allow_always: 'Always allow',
  reject_once: 'Reject',
  reject_always: 'Always reject',
};

/** True when an option's name says the opposite of its kind (an "Always allow" named "Reject"). */
export function optionContradicts(option: PermissionOption): boolean {
  const name = option.name.toLowerCase();
  if (option.kind.startsWith('allow')) return /\b(reject|deny|decline|no|cancel|don'?t|never|block|stop|skip)\b/.test(name);
  if (option.kind.startsWith('reject')) return /\b(allow|yes|approve|accept|proceed|run|always|ok|continue)\b/.test(name);
  return false;
}

/** A tool call as it stands now, detached from the live model (later updates do not reach it). */
export function snapshotToolCall(toolCall: ToolCallEntity): ToolCallEntity {
  return structuredClone(toolCall);
}

const short = (v: unknown) => {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
};

/** The command line of a tool call's rawInput (`command`/`cmd`, string or argv), when it has one. */
export function commandOf(rawInput: unknown): string | undefined {
  if (!rawInput || typeof rawInput !== 'object') return undefined;
  const o = rawInput as Record<string, unknown>;
  const c = o.command ?? o.cmd;
  if (Array.isArray(c)) return c.map(String).join(' ').trim() || undefined;
  return typeof c === 'string' && c.trim() ? c.trim() : undefined;
}

/** The one file a tool call acts on (its first location, or a path in its input), when it names one. */
export function pathOf(toolCall: Pick<ToolCallEntity, 'rawInput' | 'locations'>): string | undefined {
  const located = toolCall.locations[0]?.path;
  if (located) return located;
  const o = toolCall.rawInput && typeof toolCall.rawInput === 'object' ? (toolCall.rawInput as Record<string, unknown>) : {};
  const p = o.path ?? o.file_path ?? o.filePath ?? o.abspath;
  return typeof p === 'string' && p ? p : undefined;
}

/**
 * What a tool call would do, field by field: its command, where it runs, its file, what it writes, the
 * environment it sets. A working directory or file equal to the session's folder is that folder, named or not.
 */
function effectOf(toolCall: ToolCallEntity, cwd: string | undefined): Record<string, string | undefined> {
  const o = toolCall.rawInput && typeof toolCall.rawInput === 'object' ? (toolCall.rawInput as Record<string, unknown>) : {};
  const folder = (p: unknown) => (typeof p !== 'string' || p === '' || p === '.' || (cwd !== undefined && p.replace(/\/+$/, '') === cwd.replace(/\/+$/, '')) ? undefined : p);
  const json = (v: unknown) => (v === undefined ? undefined : JSON.stringify(v));
  const diff = toolCall.content.find((c) => (c as { type?: unknown }).type === 'diff');
  return {
    command: commandOf(o),
    cwd: folder(o.cwd ?? o.workdir ?? o.working_directory),
    path: folder(pathOf(toolCall)),
    writes: json(o.content ?? o.new_string ?? o.newString ?? o.newText ?? o.diff ?? o.patch ?? (diff as { newText?: unknown } | undefined)?.newText),
    env: json(o.env),
  };
}

/**
 * Whether a change to a tool call changes what a decision about it means: another kind, or another command,
 * working directory, file, written text or environment. Agents refine titles, add descriptions, reorder keys
 * and name the session's own folder as the working directory while they ask (opencode does); none of that is one.
 */
export function isMaterialChange(before: ToolCallEntity, after: ToolCallEntity, cwd?: string): boolean {
  if (before.toolKind !== after.toolKind) return true;
  const [e0, e1] = [effectOf(before, cwd), effectOf(after, cwd)];
  return Object.keys(e1).some((k) => (e1[k] !== undefined ? e1[k] !== e0[k] : k === 'cwd' && e0.cwd !== undefined));
}

/** What changed in a tool call that a permission decision depends on (kind, title, input, locations). */
export function describeToolCallChange(before: ToolCallEntity, after: ToolCallEntity): string[] {
  const out: string[] = [];
  if (before.toolKind !== after.toolKind) out.push(`kind: ${before.toolKind} → ${after.toolKind}`);
  if (before.title !== after.title) out.push(`title: "${short(before.title)}" → "${short(after.title)}"`);
  if (JSON.stringify(before.rawInput) !== JSON.stringify(after.rawInput)) out.push(`input: ${short(before.rawInput)} → ${short(after.rawInput)}`);
  const paths = (t: ToolCallEntity) => t.locations.map((l) => l.path).join(', ');
  if (paths(before) !== paths(after)) out.push(`files: ${paths(before) || '(none)'} → ${paths(after) || '(none)'}`);
  return out;
}

export type PermissionDecision =
  | { outcome: 'selected'; optionId: string; by: 'user' | 'policy' | 'rule' /** The rule that answered (by: 'rule'), and its id. */; rule?: string; ruleId?: string }
  | { outcome: 'cancelled'; by: 'user' | 'timeout' | 'cancel' | 'policy' };

/** Decides one permission request; the signal aborts when the turn is cancelled. */
export type PermissionDecider = (request: PermissionRequestInfo, signal: AbortSignal) => Promise<PermissionDecision>;

/**
 * Tool kinds that only look in the workspace: allowed by `approve-reads`. Not `fetch` (its URL can carry out
 * what a read found) nor `think` (the agent's label, free for anything).
 */
export const READ_ONLY_KINDS = new Set(['read', 'search']);

/** The agent's own option of the wanted sort (never an invented id); undefined when it offers none. */
export function pickOption(options: PermissionOption[], want: 'allow' | 'reject'): PermissionOption | undefined {
  const once = options.find((o) => o.kind === `${want}_once`);
  return once ?? options.find((o) => o.kind.startsWith(want));
}

export type PolicyName = 'approve-all' | 'approve-reads' | 'deny-all';

/** Headless policies for the CLI and tests. */
export function policyDecider(policy: PolicyName): PermissionDecider {
  return async ({ toolCall, options }) => {
    const allow = policy === 'approve-all' || (policy === 'approve-reads' && READ_ONLY_KINDS.has(toolCall.toolKind));
    const option = pickOption(options, allow ? 'allow' : 'reject');
    return option ? { outcome: 'selected', optionId: option.optionId, by: 'policy' } : { outcome: 'cancelled', by: 'policy' };
  };
}

/**
 * A unified diff without its file headers (`Index:`, `====`, `diff --git`, `---`/`+++` before a file's first
 * hunk): the hunks only. A removed line that reads `-- x` inside a hunk stays.
 */
export function cleanPatch(patch: string): string {
  let header = true;
  const kept: string[] = [];
  for (const line of patch.split('\n')) {
    if (/^(Index: |diff --git )/.test(line)) header = true;
    else if (line.startsWith('@@')) header = false;
    if (header && /^(Index: |={4,}\s*$|diff --git |--- |\+\+\+ |new file mode |deleted file mode |index [0-9a-f]+\.\.)/.test(line)) continue;
    kept.push(line);
  }
  return kept.join('\n').trim();
}
