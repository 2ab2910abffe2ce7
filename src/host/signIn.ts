/**
 * Sign-in methods an agent advertises in `initialize.authMethods`, sorted into what the host does with them.
 * No vscode: AgentSignIn decides, SignInPrompts (src/views/signInDialogs.ts) asks the person and runs the
 * terminal; AgentManager retries.
 *
 * - agent (no type): `authenticate {methodId}`, then `session/new` again in the same process;
 * - terminal (`type: "terminal"` with args/env, or `_meta["terminal-auth"]` {command?, args, env}): the agent's
 *   command with those args/env in a terminal; exit 0 → restart the agent;
 * - env_var (`type: "env_var"`, `varName` or `vars[].name`): an API key the person enters, kept in SecretStorage
 *   and passed in the agent's environment.
 */
import { looksSecret, type Logger } from '../core/log';
import type { AgentConfig } from '../session/agentConfig';
import type { AuthMethodInfo as AuthMethod, SignInHandler } from '../session/sessionHost';
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

type TerminalMethod = Extract<SignInMethod, { kind: 'terminal' }>;

/** What sign-in shows the person (the editor's dialogs, notifications and terminal). */
export interface SignInPrompts {
  /** Unasked: says the agent needs sign-in, with a way to ask for it (which starts the agent again, asked). */
  needed(agent: AgentConfig, methods: SignInMethod[]): void;
  /** Always a pick, even of one method: the person sees what signing in will do before it starts. */
  choose(agent: AgentConfig, methods: SignInMethod[]): Promise<SignInMethod | undefined>;
  /** The exact command line and the variables it sets before anything runs; false = do not run. */
  confirmCommand(agent: AgentConfig, method: TerminalMethod): Promise<boolean>;
  /** Runs the login command where the person sees it; its exit code, or undefined when it did not finish. */
  runTerminal(method: TerminalMethod, cwd: string | undefined): Promise<number | undefined>;
  /** The login command failed (`code`) or its terminal was closed first (undefined). */
  failed(agent: AgentConfig, method: TerminalMethod, code: number | undefined): void;
  askSecret(agent: AgentConfig, method: SignInMethod, varName: string): Promise<string | undefined>;
}

/** Where entered API keys are kept (the editor's SecretStorage), never settings. */
export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

/**
 * Sign-in for agents that answer -32000: terminal methods run in a terminal (exit 0 = signed in); entered API
 * keys go to `secrets` and into the agent's env at every start. `chooser`, `askSecret`, `confirmCommand` and
 * `runTerminal` default to the prompts and are replaceable (tests: dialogs cannot show while extension tests run).
 */
export class AgentSignIn implements SignInHandler {
  /** Unasked, the start fails at once and `needed` says so (an unanswered notification never holds the start); asked, the methods are offered. */
  chooser: (agent: AgentConfig, methods: SignInMethod[]) => Promise<SignInMethod | undefined> = async (agent, methods) => {
    if (this.requested) return this.prompts.choose(agent, methods);
    this.prompts.needed(agent, methods);
    return undefined;
  };
  askSecret: SignInPrompts['askSecret'] = (...a) => this.prompts.askSecret(...a);
  runTerminal: SignInPrompts['runTerminal'] = (...a) => this.prompts.runTerminal(...a);
  confirmCommand: SignInPrompts['confirmCommand'] = (...a) => this.prompts.confirmCommand(...a);

  /** Set while "Sign In" (the command or the notification's action) restarts the agent: then the methods are offered at once. */
  requested = false;

  constructor(
    private readonly secrets: SecretStore,
    private readonly prompts: SignInPrompts,
    private readonly log: Logger,
    /** Where a login command runs when the agent names no cwd (the first workspace folder). */
    private readonly defaultCwd: () => string | undefined,
  ) {}

  /** Stored keys of this agent's env_var methods (the names it was asked for before). */
  async env(agent: AgentConfig): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const name of await this.storedNames(agent)) {
      const value = await this.secrets.get(secretKey(agent.name, name));
      if (value) out[name] = value;
    }
    return out;
  }

  async forget(agent: AgentConfig): Promise<void> {
    for (const name of await this.storedNames(agent)) await this.secrets.delete(secretKey(agent.name, name));
    await this.secrets.delete(secretKey(agent.name, '*'));
  }

  async signIn(agent: AgentConfig, methods: AuthMethod[]): Promise<{ authenticate: string } | 'restart' | undefined> {
    const method = await this.chooser(
      agent,
      methods.map((m) => classifyAuthMethod(m, agent)),
    );
    if (!method) return undefined;
    this.log.info(`Sign-in to "${agent.name}" with ${method.kind} method "${method.id}"`);
    switch (method.kind) {
      case 'agent':
        return { authenticate: method.id };
      case 'terminal': {
        if (method.droppedEnv.length) this.log.warn(`Sign-in command of "${agent.name}": not passed to it (variables that could run code the agent chose): ${method.droppedEnv.join(', ')}`);
        if (!(await this.confirmCommand(agent, method))) {
          this.log.info(`Sign-in command of "${agent.name}" not run: ${commandLine(method)}`);
          return undefined;
        }
        const code = await this.runTerminal(method, agent.cwd ?? this.defaultCwd());
        if (code === 0) return 'restart';
        this.log.warn(`Sign-in command of "${agent.name}" ${code === undefined ? 'did not finish (its terminal was closed)' : `exited with code ${code}`}: ${commandLine(method)}`);
        this.prompts.failed(agent, method, code);
        return undefined;
      }
      case 'env_var': {
        const names = await this.storedNames(agent);
        for (const name of method.vars) {
          const value = await this.askSecret(agent, method, name);
          if (!value) return undefined;
          await this.secrets.store(secretKey(agent.name, name), value);
          if (!names.includes(name)) names.push(name);
        }
        await this.secrets.store(secretKey(agent.name, '*'), names.join(','));
        return 'restart';
      }
    }
  }

  private async storedNames(agent: AgentConfig): Promise<string[]> {
    return ((await this.secrets.get(secretKey(agent.name, '*'))) ?? '').split(',').filter(Boolean);
  }
}
