import { randomUUID } from 'node:crypto';
import { NO_TITLE_RULE_KINDS, pathOf } from '../session/permissions';
import { commandsOf, coveredByPrefix, displayWords, plainWords, safePrefixOf } from './commandWords';
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
}

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

export function describeRule(rule: PermissionRule): string {
  const exact = exactWords(rule);
  const what = exact ? `\`${displayWords(exact)}\`` : rule.prefix ? `commands starting with \`${displayWords(rule.prefix)}\`` : rule.path !== undefined ? `file ${rule.path}` : `"${rule.title ?? ''}"`;
  return `always ${rule.action} ${rule.toolKind} ${what}${rule.agent ? ` (${rule.agent})` : ''}`;
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
  /** The protected file a tool call names, if any (src/host/protectedPaths.ts): such a call always asks. */
  protectedTarget?: (toolCall: RuleTarget) => { path: string; pattern: string } | undefined;
}

/** "Always allow / always reject" rules of one workspace, by tool kind and exact command, prefix, file or title. */
export class PermissionRuleStore {
  constructor(
    private readonly store: KeyValueStore,
    private readonly options: RuleStoreOptions = {},
  ) {}

  /** What an "always" answer would make of this tool call here: ruleOffer, and nothing for a call naming a protected file. */
  offer(toolCall: RuleTarget): RuleOffer {
    const hit = this.options.protectedTarget?.(toolCall);
    return hit ? { protectedFile: `${hit.path} (${hit.pattern})` } : ruleOffer(toolCall);
  }

  list(): PermissionRule[] {
    return [...(this.store.get<PermissionRule[]>(STORE_KEY) ?? [])];
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
    return this.list().find((r) => {
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
  }

  /**
   * Adds the rule a person's "always" answer implies for this tool call (see ruleOffer): the exact command,
   * or with scope "prefix" the offered prefix; the file; or (kinds that only look) the title. Undefined when
   * nothing safe can be named: not remembered.
   */
  async addFor(action: PermissionRule['action'], toolCall: RuleTarget, agent?: string, scope: RuleScope = 'exact'): Promise<PermissionRule | undefined> {
    const offer = this.offer(toolCall);
    const base = { action, toolKind: toolCall.toolKind, ...(agent ? { agent } : {}) };
    if (scope === 'prefix' && offer.prefix) return this.add({ ...base, prefix: offer.prefix });
    return offer.exact ? this.add({ ...base, ...offer.exact }) : undefined;
  }

  async add(rule: Omit<PermissionRule, 'id' | 'createdAt'>): Promise<PermissionRule> {
    const full: PermissionRule = { ...rule, id: randomUUID(), createdAt: Date.now() };
    // Same scope again replaces the old rule (the newer answer wins).
    const key = (r: PermissionRule) => JSON.stringify([r.toolKind, r.command ?? null, r.prefix ?? null, r.commandPrefix ?? null, r.path ?? null, r.title ?? null, r.agent ?? null]);
    const rest = this.list().filter((r) => key(r) !== key(full));
    await this.store.update(STORE_KEY, [...rest, full]);
    return full;
  }

  async revoke(id: string): Promise<boolean> {
    const rules = this.list();
    const rest = rules.filter((r) => r.id !== id);
    await this.store.update(STORE_KEY, rest);
    return rest.length !== rules.length;
  }

  async clear(): Promise<void> {
    await this.store.update(STORE_KEY, []);
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
