import { parse as parseJsonc, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseAgentConfigs, type AgentConfig } from '../session/agentConfig';
import { mergeMcpConfigs, namedForAgent, parseMcpConfig, resolveMcpServer, type McpConfig, type McpServerEntry } from '../session/mcpConfig';

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

/** What `${…}` in an `--mcp-config` file is resolved against. */
export interface McpFlagContext {
  /** The workspace folder (--cwd): `${workspaceFolder}`. */
  cwd: string;
  /** `${env:NAME}`. */
  env: NodeJS.ProcessEnv;
  /** `${userHome}`. */
  userHome: string;
  /** The agent entry's `mcpServers` (names, or false for none): only those servers are resolved and passed. */
  only?: string[] | false | undefined;
  /** Reads a file (default: readFileSync, relative to the shell's folder). */
  read?(file: string): string;
}

/**
 * `--mcp-config FILE` (repeatable) and `--no-mcp`: the user's MCP servers for the agent. Each file in VS Code's
 * mcp.json shape (or `{"mcpServers": …}`, or the map alone), merged in order (a later file's server replaces an
 * earlier one's of the same name), the servers the agent's entry allows resolved: `${env:NAME}` (an unset one
 * reads as empty, with a warning), `${workspaceFolder}` (--cwd), `${userHome}`. `${input:…}` fails naming the
 * input: the CLI does not prompt. `--no-mcp` passes none and reads no file. An unreadable file, a file that is not
 * JSON, an input or an unknown variable: an Error saying which; an entry of the wrong shape: a warning, the rest kept.
 * The CLI never reads a workspace's .vscode/mcp.json by itself: a repository's file would run its commands unasked.
 */
export async function mcpServersFromFlags(
  values: { 'mcp-config'?: string[] | undefined; 'no-mcp'?: boolean | undefined },
  ctx: McpFlagContext,
): Promise<{ servers: McpServerEntry[]; warnings: string[] }> {
  const files = values['mcp-config'] ?? [];
  if (values['no-mcp'] || files.length === 0) return { servers: [], warnings: [] };
  const read = ctx.read ?? ((file: string) => readFileSync(file, 'utf8'));
  const configs: McpConfig[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = read(file);
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new Error(`--mcp-config ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a folder, not a file' : e.message}`);
    }
    // JSON with comments and trailing commas, as VS Code's mcp.json may be written.
    const errors: ParseError[] = [];
    const json: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
    if (errors.length) throw new Error(`--mcp-config ${file}: not valid JSON (${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset})`);
    configs.push(parseMcpConfig(json, 'cli', file));
  }
  const merged = mergeMcpConfigs(configs);
  const warnings = [...merged.problems];
  const chosen = merged.servers.filter((s) => namedForAgent(s.name, ctx.only));
  const servers: McpServerEntry[] = [];
  for (const s of chosen) {
    const unset = new Set<string>();
    let resolved: McpServerEntry;
    try {
      resolved = await resolveMcpServer(s, {
        env: (name) => {
          const value = ctx.env[name];
          if (value === undefined) unset.add(name);
          return value;
        },
        input: async (id) => {
          const declared = merged.inputs.find((i) => i.id === id);
          const about = declared?.description ? ` ("${declared.description}")` : '';
          throw new Error(`MCP server "${s.name}" uses \${input:${id}}${about}: the CLI does not prompt for inputs; write the value in the file, or take it from the environment with \${env:NAME}`);
        },
        workspaceFolder: ctx.cwd,
        userHome: ctx.userHome,
      });
    } catch (error) {
      throw new Error(`--mcp-config ${s.origin}: ${(error as Error).message}`);
    }
    for (const name of unset) warnings.push(`${s.origin}: server "${s.name}": \${env:${name}} is not set; it reads as empty`);
    servers.push(resolved);
  }
  return { servers, warnings };
}

/** The options that say which agent runs and how: the prompt mode's and the task verb's. */
export const AGENT_OPTIONS = {
  config: { type: 'string' },
  agent: { type: 'string' },
  command: { type: 'string' },
  arg: { type: 'string', multiple: true },
  env: { type: 'string', multiple: true },
  protocol: { type: 'string' },
  url: { type: 'string' },
  ca: { type: 'string' },
  fingerprint: { type: 'string' },
  cwd: { type: 'string' },
  'approve-all': { type: 'boolean' },
  'approve-reads': { type: 'boolean' },
  'deny-all': { type: 'boolean' },
  'allow-protected': { type: 'boolean' },
  'allow-env': { type: 'string', multiple: true },
  'host-tools': { type: 'boolean' },
  'mcp-config': { type: 'string', multiple: true },
  'no-mcp': { type: 'boolean' },
  sandbox: { type: 'string' },
  format: { type: 'string' },
  timeout: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type AgentValues = {
  [K in keyof typeof AGENT_OPTIONS]?: (typeof AGENT_OPTIONS)[K] extends { type: 'boolean' } ? boolean : (typeof AGENT_OPTIONS)[K] extends { multiple: true } ? string[] : string;
};
