import { randomUUID } from 'node:crypto';
import { commandOf, NO_TITLE_RULE_KINDS, pathOf } from '../session/permissions';
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
   * What the rule names: a simple command starting with `commandPrefix` (at a word boundary; never a line
   * with shell operators), a file `path` (exact), or — for kinds that only look — a `title`.
   */
  commandPrefix?: string;
  path?: string;
  title?: string;
  /** The configured agent whose answer made the rule; it applies to that agent only (none: every agent). */
  agent?: string;
  createdAt: number;
}

type RuleTarget = Pick<ToolCallEntity, 'toolKind' | 'title' | 'rawInput' | 'locations'>;

/** Shell operators that chain, redirect or substitute: a line with any is not the simple command a rule names. */
const SHELL_OPERATORS = /[;&|`<>\n\r]|\$\(|\$\{/;

const STORE_KEY = 'agentHost.permissionRules';

/** The prefix a new "always" rule keeps of a command: the program and its first non-option word (`npm test`). */
export function commandPrefixOf(command: string): string {
  const words = command.trim().split(/\s+/);
  const second = words[1];
  return second && !second.startsWith('-') ? `${words[0]} ${second}` : (words[0] ?? command);
}

export function describeRule(rule: PermissionRule): string {
  const what = rule.commandPrefix !== undefined ? `command "${rule.commandPrefix} …"` : rule.path !== undefined ? `file ${rule.path}` : `"${rule.title ?? ''}"`;
  return `always ${rule.action} ${rule.toolKind} ${what}${rule.agent ? ` (${rule.agent})` : ''}`;
}

/** "Always allow / always reject" rules of one workspace, by tool kind and title or command prefix. */
export class PermissionRuleStore {
  constructor(private readonly store: KeyValueStore) {}

  list(): PermissionRule[] {
    return [...(this.store.get<PermissionRule[]>(STORE_KEY) ?? [])];
  }

  /** The first rule of this agent that applies to the tool call, if any. */
  match(toolCall: RuleTarget, agent?: string): PermissionRule | undefined {
    const command = commandOf(toolCall.rawInput);
    const simple = command !== undefined && !SHELL_OPERATORS.test(command);
    const file = pathOf(toolCall);
    return this.list().find((r) => {
      if (r.toolKind !== toolCall.toolKind) return false;
      if (r.agent !== undefined && r.agent !== agent) return false;
      if (r.commandPrefix !== undefined) {
        return simple && (command === r.commandPrefix || command.startsWith(`${r.commandPrefix} `));
      }
      if (r.path !== undefined) return file === r.path;
      // Title-only rules never answer for kinds that change things: the title is the agent's word, not the act.
      return !NO_TITLE_RULE_KINDS.has(toolCall.toolKind) && r.title !== undefined && r.title === toolCall.title;
    });
  }

  /**
   * Adds the rule a person's "always" answer implies for this tool call: a simple command's prefix, the file
   * it acts on, or (kinds that only look) its title. Undefined when nothing safe can be named: not remembered.
   */
  async addFor(action: PermissionRule['action'], toolCall: RuleTarget, agent?: string): Promise<PermissionRule | undefined> {
    const command = commandOf(toolCall.rawInput);
    const scope = { action, toolKind: toolCall.toolKind, ...(agent ? { agent } : {}) };
    if (command !== undefined) {
      if (SHELL_OPERATORS.test(command)) return undefined;
      return this.add({ ...scope, commandPrefix: commandPrefixOf(command) });
    }
    const file = pathOf(toolCall);
    if (file !== undefined && toolCall.toolKind !== 'fetch') return this.add({ ...scope, path: file });
    if (NO_TITLE_RULE_KINDS.has(toolCall.toolKind)) return undefined;
    return this.add({ ...scope, title: toolCall.title });
  }

  async add(rule: Omit<PermissionRule, 'id' | 'createdAt'>): Promise<PermissionRule> {
    const full: PermissionRule = { ...rule, id: randomUUID(), createdAt: Date.now() };
    // Same scope again replaces the old rule (the newer answer wins).
    const rest = this.list().filter((r) => !(r.toolKind === full.toolKind && r.commandPrefix === full.commandPrefix && r.path === full.path && r.title === full.title && r.agent === full.agent));
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
