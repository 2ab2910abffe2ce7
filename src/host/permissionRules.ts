import { randomUUID } from 'node:crypto';
import { NO_TITLE_RULE_KINDS, pathOf } from '../session/permissions';
import { commandsOf, coveredByPrefix, displayWords, plainCommands, plainWords, safePrefixOf } from './commandWords';
import type { ToolCallEntity } from '../session/sessionModel';

/** Where rules persist; the extension passes `context.workspaceState` (a Memento has this shape). */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

export interface PermissionRule {
  id: string;
  action: 'allow' | 'reject';
  /** ACP tool kind (edit, execute, read, …) the rule is limited to. */
  toolKind: string;
  /**
   * What the rule names: one exact `command` (its plain words), commands starting with `prefix` and going on
   * only with plain arguments, a file `path` (exact), or — for kinds that only look — a `title`.
   */
  command?: string[];
  prefix?: string[];
  /** Written by versions before these two: read as an exact command of its words, never as a prefix. */
  commandPrefix?: string;
  path?: string;
  title?: string;
  /** The configured agent whose answer made the rule; it applies to that agent only (none: every agent). */
  agent?: string;
  createdAt: number;
  /** Where the rule is kept (set when listed): see RuleWhere. */
  where?: RuleWhere;
}

/**
 * Where a rule is kept and how long it lasts: this session (memory, gone when the window closes), this
 * workspace (workspace state), or everywhere (the user's global state, every workspace).
 */
export type RuleWhere = 'session' | 'workspace' | 'user';
const RULE_PLACES: readonly RuleWhere[] = ['session', 'workspace', 'user'];
const WHERE_TEXT: Record<RuleWhere, string> = { session: 'this session', workspace: 'this workspace', user: 'everywhere' };

type RuleTarget = Pick<ToolCallEntity, 'toolKind' | 'title' | 'rawInput' | 'locations'>;

/** How far an "always" answer reaches: the exact command (always), or commands starting with its safe prefix. */
export type RuleScope = 'exact' | 'prefix';

const STORE_KEY = 'agentHost.permissionRules';

/** The exact words a rule keeps; a rule from before exact rules reads its old prefix as exact words. */
function exactWords(rule: PermissionRule): string[] | undefined {
  if (rule.command) return rule.command;
  if (rule.commandPrefix === undefined) return undefined;
  const parsed = plainWords(rule.commandPrefix);
  return 'words' in parsed ? parsed.words : undefined;
}

/** What a rule names: "`npm test`", "commands starting with `npm run lint`", "file a.ts" or a title. */
export function ruleTarget(rule: PermissionRule): string {
  const exact = exactWords(rule);
  return exact ? `\`${displayWords(exact)}\`` : rule.prefix ? `commands starting with \`${displayWords(rule.prefix)}\`` : rule.path !== undefined ? `file ${rule.path}` : `"${rule.title ?? ''}"`;
}

/** A rule as the card, the log and the rules view's tooltip name it: "always allow execute `npm test` (codex, this workspace)". */
export function describeRule(rule: PermissionRule): string {
  return `always ${rule.action} ${rule.toolKind} ${ruleTarget(rule)} (${[rule.agent, WHERE_TEXT[rule.where ?? 'workspace']].filter(Boolean).join(', ')})`;
}

/** The command a rule added by hand names: one plain command that is no wrapper (the parser and fences the checks use), or why not. */
export function ruleFromLine(line: string): { command: string[] } | { reason: string } {
  const parsed = plainCommands(line.trim());
  if ('reason' in parsed) return parsed;
  return parsed.commands.length === 1 ? { command: parsed.commands[0]! } : { reason: 'several commands in one line (add a rule for each)' };
}

/** What an "always" answer would make of a tool call, before it is made: shown word for word in the dialog. */
export interface RuleOffer {
  /** The rule's fields when the answer is "always" (the exact command, the file or the title); none: nothing safe to name. */
  exact?: Pick<PermissionRule, 'command' | 'path' | 'title'>;
  /** A broader "commands starting with" rule the person may choose instead, where one is safe. */
  prefix?: string[];
  /** Why a command cannot become a rule (not plain words): it asks every time. */
  notPlain?: string;
  /** The protected file (and its pattern) the call names: no rule answers or is made for it. */
  protectedFile?: string;
}

/** The rule choices a tool call allows (see RuleOffer). */
export function ruleOffer(toolCall: RuleTarget): RuleOffer {
  const line = commandsOf(toolCall.rawInput);
  if (line) {
    if ('reason' in line) return { notPlain: line.reason };
    if (line.commands.length > 1) return { notPlain: 'several commands in one line (each one is answered by its own rule)' };
    const words = line.commands[0]!;
    const prefix = toolCall.toolKind === 'execute' ? safePrefixOf(words) : undefined;
    return { exact: { command: words }, ...(prefix ? { prefix } : {}) };
  }
  const file = pathOf(toolCall);
  if (file !== undefined && toolCall.toolKind !== 'fetch') return { exact: { path: file } };
  if (NO_TITLE_RULE_KINDS.has(toolCall.toolKind)) return {};
  return { exact: { title: toolCall.title } };
}

const sameWords = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((w, i) => w === b[i]);

export interface RuleStoreOptions {
  /** Where rules kept "everywhere" persist (the extension passes `context.globalState`); none: no user-level rules. */
  user?: KeyValueStore;
  /** The protected file a tool call names, if any (src/host/protectedPaths.ts): such a call always asks. */
  protectedTarget?: (toolCall: RuleTarget) => { path: string; pattern: string } | undefined;
}

/** "Always allow / always reject" rules — of this session, this workspace and the user's — by tool kind and exact command, prefix, file or title. */
export class PermissionRuleStore {
  private readonly session = memoryStore();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly store: KeyValueStore,
    private readonly options: RuleStoreOptions = {},
  ) {}

  /** What an "always" answer would make of this tool call here: ruleOffer, and nothing for a call naming a protected file. */
  offer(toolCall: RuleTarget): RuleOffer {
    const hit = this.options.protectedTarget?.(toolCall);
    return hit ? { protectedFile: `${hit.path} (${hit.pattern})` } : ruleOffer(toolCall);
  }

  /** The places rules can be kept here (no user store: no "everywhere"). */
  places(): RuleWhere[] {
    return RULE_PLACES.filter((w) => w !== 'user' || this.options.user);
  }

  private storeOf(where: RuleWhere): KeyValueStore {
    const store = where === 'session' ? this.session : where === 'workspace' ? this.store : this.options.user;
    if (!store) throw new Error(`No place to keep rules "${WHERE_TEXT[where]}"`);
    return store;
  }

  /** Every rule, each with where it is kept: this session's, then this workspace's, then the user's. */
  list(): PermissionRule[] {
    return this.places().flatMap((where) => (this.storeOf(where).get<PermissionRule[]>(STORE_KEY) ?? []).map((r) => ({ ...r, where })));
  }

  /** Fires when a rule is added or revoked (the rules view refreshes). */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The first rule of this agent that applies to the tool call, if any. A command that is not plain words matches none. */
  match(toolCall: RuleTarget, agent?: string): PermissionRule | undefined {
    if (this.options.protectedTarget?.(toolCall)) return undefined;
    const line = commandsOf(toolCall.rawInput);
    return this.find(toolCall, agent, line, line && 'commands' in line && line.commands.length === 1 ? line.commands[0] : undefined);
  }

  /**
   * The rules that answer the tool call: its one rule (match), or for a command line of several plain commands
   * joined by `&&`, `||`, `;` or `|` (commandWords.ts plainCommands) one rule for each command — all of them or
   * none: a line is approved only when every command in it is.
   */
  matchAll(toolCall: RuleTarget, agent?: string): PermissionRule[] | undefined {
    const line = commandsOf(toolCall.rawInput);
    if (!line || !('commands' in line) || line.commands.length < 2) {
      const one = this.match(toolCall, agent);
      return one ? [one] : undefined;
    }
    if (toolCall.toolKind !== 'execute' || this.options.protectedTarget?.(toolCall)) return undefined;
    const rules = line.commands.map((words) => this.find(toolCall, agent, { words }, words));
    return rules.every((r) => r !== undefined) ? rules : undefined;
  }

  private find(toolCall: RuleTarget, agent: string | undefined, parsed: unknown, words: readonly string[] | undefined): PermissionRule | undefined {
    const file = pathOf(toolCall);
    const hits = this.list().filter((r) => {
      if (r.toolKind !== toolCall.toolKind) return false;
      if (r.agent !== undefined && r.agent !== agent) return false;
      const exact = exactWords(r);
      if (exact) return words !== undefined && sameWords(words, exact);
      if (r.commandPrefix !== undefined) return false; // an old rule whose words do not parse: it covers nothing
      if (r.prefix) return words !== undefined && coveredByPrefix(words, r.prefix);
      if (parsed) return false; // a command is named by its words, never by a path or title
      if (r.path !== undefined) return file === r.path;
      // Title-only rules never answer for kinds that change things: the title is the agent's word, not the act.
      return !NO_TITLE_RULE_KINDS.has(toolCall.toolKind) && r.title !== undefined && r.title === toolCall.title;
    });
    // Rules of several places may apply: a reject among them wins.
    return hits.find((r) => r.action === 'reject') ?? hits[0];
  }

  /**
   * Adds the rule a person's "always" answer implies for this tool call (see ruleOffer): the exact command,
   * or with scope "prefix" the offered prefix; the file; or (kinds that only look) the title. Undefined when
   * nothing safe can be named: not remembered.
   */
  async addFor(action: PermissionRule['action'], toolCall: RuleTarget, agent?: string, scope: RuleScope = 'exact', where: RuleWhere = 'workspace'): Promise<PermissionRule | undefined> {
    const offer = this.offer(toolCall);
    const base = { action, toolKind: toolCall.toolKind, ...(agent ? { agent } : {}) };
    if (scope === 'prefix' && offer.prefix) return this.add({ ...base, prefix: offer.prefix }, where);
    return offer.exact ? this.add({ ...base, ...offer.exact }, where) : undefined;
  }

  /** Keeps a rule in `where` (default: this workspace); the same rule there again replaces the old one (the newer answer wins). */
  async add(rule: Omit<PermissionRule, 'id' | 'createdAt' | 'where'>, where: RuleWhere = 'workspace'): Promise<PermissionRule> {
    const store = this.storeOf(where);
    const full: PermissionRule = { ...rule, id: randomUUID(), createdAt: Date.now() };
    const key = (r: PermissionRule) => JSON.stringify([r.toolKind, r.command ?? null, r.prefix ?? null, r.commandPrefix ?? null, r.path ?? null, r.title ?? null, r.agent ?? null]);
    const rest = (store.get<PermissionRule[]>(STORE_KEY) ?? []).filter((r) => key(r) !== key(full));
    await store.update(STORE_KEY, [...rest, full]);
    this.fire();
    return { ...full, where };
  }

  /** Revokes a rule wherever it is kept; false when no place has it. */
  async revoke(id: string): Promise<boolean> {
    for (const where of this.places()) {
      const store = this.storeOf(where);
      const rules = store.get<PermissionRule[]>(STORE_KEY) ?? [];
      if (!rules.some((r) => r.id === id)) continue;
      await store.update(
        STORE_KEY,
        rules.filter((r) => r.id !== id),
      );
      this.fire();
      return true;
    }
    return false;
  }

  private fire(): void {
    for (const l of [...this.listeners]) l();
  }
}

/** An in-memory KeyValueStore (CLI, tests). */
export function memoryStore(): KeyValueStore {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    update: async (key, value) => {
      map.set(key, value);
    },
  };
}
