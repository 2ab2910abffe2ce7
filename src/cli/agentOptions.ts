import { readFileSync } from 'node:fs';
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
