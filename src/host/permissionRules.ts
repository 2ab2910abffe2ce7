import { randomUUID } from 'node:crypto';
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
  /** A tool call whose command starts with `commandPrefix` (at a word boundary), or whose title equals `title`. */
  commandPrefix?: string;
  title?: string;
  createdAt: number;
}

const STORE_KEY = 'agentHost.permissionRules';

/** The command line of a tool call's rawInput (`command`/`cmd`, string or argv), when it has one. */
export function commandOf(rawInput: unknown): string | undefined {
  if (!rawInput || typeof rawInput !== 'object') return undefined;
  const o = rawInput as Record<string, unknown>;
  const c = o.command ?? o.cmd;
  if (Array.isArray(c)) return c.map(String).join(' ').trim() || undefined;
  return typeof c === 'string' && c.trim() ? c.trim() : undefined;
}

/** The prefix a new "always" rule keeps of a command: the program and its first non-option word (`npm test`). */
export function commandPrefixOf(command: string): string {
  const words = command.trim().split(/\s+/);
  const second = words[1];
  return second && !second.startsWith('-') ? `${words[0]} ${second}` : words[0] ?? command;
}

export function describeRule(rule: PermissionRule): string {
  const what = rule.commandPrefix !== undefined ? `command "${rule.commandPrefix} …"` : `"${rule.title ?? ''}"`;
  return `always ${rule.action} ${rule.toolKind} ${what}`;
}

/** "Always allow / always reject" rules of one workspace, by tool kind and title or command prefix. */
export class PermissionRuleStore {
  constructor(private readonly store: KeyValueStore) {}

  list(): PermissionRule[] {
    return [...(this.store.get<PermissionRule[]>(STORE_KEY) ?? [])];
  }

  /** The first rule that applies to the tool call, if any. */
  match(toolCall: Pick<ToolCallEntity, 'toolKind' | 'title' | 'rawInput'>): PermissionRule | undefined {
    const command = commandOf(toolCall.rawInput);
    return this.list().find((r) => {
      if (r.toolKind !== toolCall.toolKind) return false;
      if (r.commandPrefix !== undefined) {
        return command !== undefined && (command === r.commandPrefix || command.startsWith(`${r.commandPrefix} `));
      }
      return r.title !== undefined && r.title === toolCall.title;
    });
  }

  /** Adds the rule a person's "always" answer implies for this tool call (command prefix, else title). */
  async addFor(action: PermissionRule['action'], toolCall: Pick<ToolCallEntity, 'toolKind' | 'title' | 'rawInput'>): Promise<PermissionRule> {
    const command = commandOf(toolCall.rawInput);
    return this.add({
      action,
      toolKind: toolCall.toolKind,
      ...(command !== undefined ? { commandPrefix: commandPrefixOf(command) } : { title: toolCall.title }),
    });
  }

  async add(rule: Omit<PermissionRule, 'id' | 'createdAt'>): Promise<PermissionRule> {
    const full: PermissionRule = { ...rule, id: randomUUID(), createdAt: Date.now() };
    // Same scope again replaces the old rule (the newer answer wins).
    const rest = this.list().filter(
      (r) => !(r.toolKind === full.toolKind && r.commandPrefix === full.commandPrefix && r.title === full.title),
    );
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
