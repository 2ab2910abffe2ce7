/**
 * Sign-in methods an agent advertises in `initialize.authMethods`, sorted into what the host does with them.
 * No vscode: src/host/vscode/signIn.ts asks the person and runs the terminal; AgentManager retries.
 *
 * - agent (no type): `authenticate {methodId}`, then `session/new` again in the same process;
 * - terminal (`type: "terminal"` with args/env, or `_meta["terminal-auth"]` {command?, args, env}): the agent's
 *   command with those args/env in a terminal; exit 0 → restart the agent;
 * - env_var (`type: "env_var"`, `varName` or `vars[].name`): an API key the person enters, kept in SecretStorage
 *   and passed in the agent's environment.
 */
import { looksSecret } from '../core/log';
import type { AgentConfig } from '../session/agentConfig';
import type { AuthMethodInfo as AuthMethod } from '../session/sessionHost';
import { UNSAFE_ENV } from './envRules';

export type SignInMethod =
  | { kind: 'agent'; id: string; name: string; description?: string }
  | { kind: 'terminal'; id: string; name: string; description?: string; command: string; args: string[]; env: Record<string, string>; droppedEnv: string[] }
  | { kind: 'env_var'; id: string; name: string; description?: string; vars: string[] };

type Loose = { id?: unknown; name?: unknown; description?: unknown; type?: unknown; args?: unknown; env?: unknown; varName?: unknown; vars?: unknown; _meta?: unknown };

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const stringMap = (v: unknown): Record<string, string> =>
  v && typeof v === 'object' ? Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => typeof x === 'string') as [string, string][]) : {};

/** What the host does with one advertised method; `agent` supplies the command a terminal method runs. */
export function classifyAuthMethod(method: AuthMethod, agent: Pick<AgentConfig, 'command' | 'args' | 'env'>): SignInMethod {
  const m = method as Loose;
  const base = { id: String(m.id), name: typeof m.name === 'string' ? m.name : String(m.id), ...(typeof m.description === 'string' ? { description: m.description } : {}) };
  const meta = m._meta && typeof m._meta === 'object' ? ((m._meta as Record<string, unknown>)['terminal-auth'] as (Loose & { command?: unknown }) | undefined) : undefined;
  if (m.type === 'terminal' || (meta && typeof meta === 'object')) {
    const t = m.type === 'terminal' ? m : meta!;
    const command = typeof (t as { command?: unknown }).command === 'string' ? (t as { command: string }).command : agent.command;
    // The method's args are added to the agent's own (the agent binary in its login mode); a command of its own takes them alone.
    const args = command === agent.command ? [...(agent.args ?? []), ...strings(t.args)] : strings(t.args);
    return { kind: 'terminal', ...base, command, args, ...loginEnv(agent.env ?? {}, stringMap(t.env)) };
  }
  if (m.type === 'env_var') {
    const vars = typeof m.varName === 'string' ? [m.varName] : Array.isArray(m.vars) ? m.vars.map((v) => (v as { name?: unknown })?.name).filter((n): n is string => typeof n === 'string') : [];
    return { kind: 'env_var', ...base, vars };
  }
  return { kind: 'agent', ...base };
}

/**
 * The login terminal's variables: the agent's configured ones (the user's own), plus the method's minus
 * UNSAFE_ENV — those are dropped (and named), as a login's token must not pass through code the agent chose.
 */
export function loginEnv(configured: Record<string, string>, asked: Record<string, string>): { env: Record<string, string>; droppedEnv: string[] } {
  const env = { ...configured };
  const droppedEnv: string[] = [];
  for (const [name, value] of Object.entries(asked)) {
    if (UNSAFE_ENV.test(name)) droppedEnv.push(name);
    else env[name] = value;
  }
  return { env, droppedEnv };
}

/** How many characters of a value the confirmation shows. */
const SHOWN_CHARS = 200;

/**
 * A variable as the confirmation shows it, `NAME=value`: a secret (see looksSecret) masked; else
 * the value with control, bidi and zero-width characters escaped (they could forge the dialog's lines),
 * long ones cut.
 */
export function shownVariable(name: string, value: string): string {
  if (looksSecret(name, value)) return `${name}=•••••• (hidden)`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
  const visible = value.replace(/[\0-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${name}=${visible.length > SHOWN_CHARS ? `${visible.slice(0, SHOWN_CHARS)}… (${value.length} characters)` : visible}`;
}

/** A command line as a person reads it: each word quoted when it needs to be. */
export function commandLine(method: { command: string; args: string[] }): string {
  const quote = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
  return [method.command, ...method.args].map(quote).join(' ');
}

/** The key under which an agent's entered secret (env var) is stored. */
export function secretKey(agentName: string, varName: string): string {
  return `agentHost.env.${agentName}.${varName}`;
}
