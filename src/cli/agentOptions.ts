import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseAgentConfigs, type AgentConfig } from '../session/agentConfig';

/** `--env K=V` values (repeatable) as an environment; a malformed pair is an Error naming it. */
export function envPairs(list: string[] | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of list ?? []) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new Error(`--env expects K=V, got "${kv}"`);
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return env;
}

/** The entry `name` (default: the first) of an agents file (`--config FILE --agent NAME`); Errors say what is wrong. */
export function agentFromFile(file: string, name?: string): AgentConfig {
  let agents: AgentConfig[];
  try {
    agents = parseAgentConfigs(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  const agent = name ? agents.find((a) => a.name === name) : agents[0];
  if (!agent) throw new Error(`no agent named "${name}" in ${file} (have: ${agents.map((a) => a.name).join(', ')})`);
  return agent;
}

/**
 * The CLI's words made ready for parseArgs: the word after `--arg` is the agent's even when it starts with "-"
 * (parseArgs would call `--arg -c` ambiguous), and the words after the first `--` are an ad-hoc agent's command
 * and arguments (`agent-host [options] PROMPT -- CMD ARG…`), untouched.
 */
export function splitAgentWords(argv: readonly string[]): { options: string[]; agentCommand?: string[] } {
  const options: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return { options, agentCommand: argv.slice(i + 1) };
    if (word === '--arg' && i + 1 < argv.length) options.push(`--arg=${argv[++i]}`);
    else options.push(word);
  }
  return { options };
}

/** `values` with the agent after `--` as `--command`/`--arg`; an Error when it is empty or another option names the agent too. */
export function withAgentCommand<T extends { command?: string | undefined; arg?: string[] | undefined }>(values: T, agentCommand: string[] | undefined): T {
  if (!agentCommand) return values;
  const [command, ...args] = agentCommand;
  if (!command) throw new Error('nothing after "--": give the agent\'s command and its arguments there (-- CMD ARG…)');
  const clash = ['command', 'arg', 'config', 'agent'].filter((k) => (values as Record<string, unknown>)[k] !== undefined);
  if (clash.length) throw new Error(`the agent after "--" and ${clash.map((k) => `--${k}`).join(', ')} both name the agent: give one`);
  return { ...values, command, arg: args };
}

/** `--ca FILE` (resolved against the shell's folder, not the agent's workspace) and `--fingerprint` as an entry's `tls`; undefined without either. */
export function tlsFlags(values: { ca?: unknown; fingerprint?: unknown }): AgentConfig['tls'] {
  const tls = { ...(typeof values.ca === 'string' ? { ca: path.resolve(values.ca) } : {}), ...(typeof values.fingerprint === 'string' ? { fingerprint: values.fingerprint } : {}) };
  return Object.keys(tls).length ? tls : undefined;
}
