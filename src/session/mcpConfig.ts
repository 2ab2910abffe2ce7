/**
 * The user's own MCP servers for the agents: read in VS Code's MCP configuration shape (a workspace's
 * `.vscode/mcp.json`, the profile's `mcp.json`, the `mcp` setting; `agentHost.mcpServers` and the CLI's
 * `--mcp-config` take the same), their `${…}` variables resolved, and chosen per agent by what it takes.
 * No vscode: the editor reads the files and asks for inputs (src/host/vscode/mcpSources.ts), the CLI reads a file.
 */

/** Where a server was configured: the workspace's own file (trusted workspaces only), the user's, ours, the CLI's. */
export type McpSource = 'workspace' | 'user' | 'agentHost' | 'cli';

export interface McpServerEntry {
  name: string;
  source: McpSource;
  /** The file or setting it was read from, for messages. */
  origin: string;
  type: 'stdio' | 'http' | 'sse';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
}

/** A VS Code MCP input (`${input:id}`): asked for once, then kept. */
export interface McpInput {
  id: string;
  type: string;
  description?: string;
  password?: boolean;
  default?: string;
  options?: string[];
}

export interface McpConfig {
  servers: McpServerEntry[];
  inputs: McpInput[];
  /** One line per entry left out (wrong shape), naming it and its origin. */
  problems: string[];
}

/** The server as ACP's `mcpServers` takes it (stdio has no `type`). */
export type AcpMcpServer =
  | { name: string; command: string; args: string[]; env: { name: string; value: string }[] }
  | { type: 'http' | 'sse'; name: string; url: string; headers: { name: string; value: string }[] };

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const stringMap = (v: unknown): v is Record<string, string> => isObject(v) && Object.values(v).every((x) => typeof x === 'string' || typeof x === 'number');

/**
 * One configuration: `{"servers": {name: server}, "inputs": […]}` (VS Code), `{"mcpServers": {…}}` (Claude, Cursor)
 * or the map of servers alone. A server has `command` (stdio, with `args`, `env`) or `url` (`type` "http", the
 * default, or "sse", with `headers`); `"disabled": true` leaves it out quietly.
 */
export function parseMcpConfig(value: unknown, source: McpSource, origin: string): McpConfig {
  const out: McpConfig = { servers: [], inputs: [], problems: [] };
  if (value === undefined || value === null) return out;
  if (!isObject(value)) {
    out.problems.push(`${origin}: expected {"servers": {name: {command, args, env} or {url}}}`);
    return out;
  }
  const map = isObject(value.servers) ? value.servers : isObject(value.mcpServers) ? value.mcpServers : 'servers' in value || 'inputs' in value ? {} : value;
  for (const [name, raw] of Object.entries(map)) {
    const where = `${origin}: server "${name}"`;
    if (!isObject(raw)) {
      out.problems.push(`${where}: expected an object`);
      continue;
    }
    if (raw.disabled === true) continue;
    const type = raw.type ?? (raw.url !== undefined ? 'http' : 'stdio');
    if (type === 'stdio') {
      if (typeof raw.command !== 'string' || !raw.command) {
        out.problems.push(`${where}: "command" must be a non-empty string`);
        continue;
      }
      if (raw.args !== undefined && !strings(raw.args)) {
        out.problems.push(`${where}: "args" must be a list of strings`);
        continue;
      }
      if (raw.env !== undefined && !stringMap(raw.env)) {
        out.problems.push(`${where}: "env" must map names to strings`);
        continue;
      }
      if (raw.envFile !== undefined) out.problems.push(`${where}: "envFile" is not read here (write the variables in "env"); the server is passed without it`);
      const env = Object.fromEntries(Object.entries((raw.env as Record<string, unknown>) ?? {}).map(([k, v]) => [k, String(v)]));
      out.servers.push({ name, source, origin, type: 'stdio', command: raw.command, args: (raw.args as string[] | undefined) ?? [], env });
    } else if (type === 'http' || type === 'sse') {
      if (typeof raw.url !== 'string' || !/^https?:\/\/[^/]/.test(raw.url)) {
        out.problems.push(`${where}: "url" must start with http:// or https://`);
        continue;
      }
      if (raw.headers !== undefined && !stringMap(raw.headers)) {
        out.problems.push(`${where}: "headers" must map names to strings`);
        continue;
      }
      const headers = Object.fromEntries(Object.entries((raw.headers as Record<string, unknown>) ?? {}).map(([k, v]) => [k, String(v)]));
      out.servers.push({ name, source, origin, type, url: raw.url, headers });
    } else {
      out.problems.push(`${where}: "type" must be "stdio", "http" or "sse"`);
    }
  }
  if (Array.isArray(value.inputs)) {
    for (const i of value.inputs) {
      if (isObject(i) && typeof i.id === 'string') {
        out.inputs.push({
          id: i.id,
          type: typeof i.type === 'string' ? i.type : 'promptString',
          ...(typeof i.description === 'string' ? { description: i.description } : {}),
          ...(i.password === true ? { password: true } : {}),
          ...(typeof i.default === 'string' ? { default: i.default } : {}),
          ...(strings(i.options) ? { options: i.options } : {}),
        });
      } else out.problems.push(`${origin}: an input without an "id"`);
    }
  }
  return out;
}

/** Configurations merged by server name, a later one's server replacing an earlier one's (lowest precedence first). */
export function mergeMcpConfigs(configs: McpConfig[]): McpConfig {
  const byName = new Map<string, McpServerEntry>();
  const inputs = new Map<string, McpInput>();
  const problems: string[] = [];
  for (const c of configs) {
    for (const s of c.servers) {
      byName.delete(s.name); // the later one takes the earlier one's place at the end, in its own order
      byName.set(s.name, s);
    }
    for (const i of c.inputs) inputs.set(i.id, i);
    problems.push(...c.problems);
  }
  return { servers: [...byName.values()], inputs: [...inputs.values()], problems };
}

/** What a server runs or reaches, as one line (shown in the trust dialog; it changes when the server does). */
export function mcpCommandLine(s: McpServerEntry): string {
  if (s.type !== 'stdio') {
    const headers = Object.keys(s.headers ?? {});
    return `${s.type} ${s.url}${headers.length ? ` (headers: ${headers.join(', ')})` : ''}`;
  }
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  const env = Object.entries(s.env ?? {}).map(([k, v]) => `${k}=${quote(v)}`);
  return [...env, quote(s.command ?? ''), ...(s.args ?? []).map(quote)].join(' ');
}

/** How `${…}` variables are looked up; `input` asks the person (undefined: they gave none). */
export interface McpVariables {
  env(name: string): string | undefined;
  input(id: string): Promise<string | undefined>;
  workspaceFolder?: string;
  userHome: string;
}

const VARIABLE = /\$\{(env|input|workspaceFolder|userHome|pathSeparator)(?::([^}]*))?\}/g;

/** The server with its variables resolved; an input the person did not give, or an unknown variable, fails naming it. */
export async function resolveMcpServer(s: McpServerEntry, vars: McpVariables): Promise<McpServerEntry> {
  const one = async (text: string): Promise<string> => {
    let out = '';
    let last = 0;
    for (const m of text.matchAll(VARIABLE)) {
      out += text.slice(last, m.index);
      last = (m.index ?? 0) + m[0].length;
      const [, kind, arg = ''] = m;
      if (kind === 'env') out += vars.env(arg) ?? '';
      else if (kind === 'userHome') out += vars.userHome;
      else if (kind === 'pathSeparator') out += '/';
      else if (kind === 'workspaceFolder') {
        if (!vars.workspaceFolder) throw new Error(`MCP server "${s.name}": \${workspaceFolder} used without a workspace folder`);
        out += vars.workspaceFolder;
      } else {
        const value = await vars.input(arg);
        if (value === undefined) throw new Error(`MCP server "${s.name}": no value given for \${input:${arg}}`);
        out += value;
      }
    }
    const rest = text.slice(last);
    if (/\$\{[^}]*\}/.test(rest)) throw new Error(`MCP server "${s.name}": unknown variable ${/\$\{[^}]*\}/.exec(rest)?.[0]}`);
    return out + rest;
  };
  const map = async (m: Record<string, string> | undefined) => Object.fromEntries(await Promise.all(Object.entries(m ?? {}).map(async ([k, v]) => [k, await one(v)] as const)));
  return {
    ...s,
    ...(s.command !== undefined ? { command: await one(s.command) } : {}),
    ...(s.args ? { args: await Promise.all(s.args.map(one)) } : {}),
    ...(s.env ? { env: await map(s.env) } : {}),
    ...(s.url !== undefined ? { url: await one(s.url) } : {}),
    ...(s.headers ? { headers: await map(s.headers) } : {}),
  };
}

/** Why a server did not reach an agent. */
export interface McpNotPassed {
  name: string;
  type: McpServerEntry['type'];
  reason: 'transport' | 'filtered';
}

/** Whether an agent entry's `mcpServers` (a list of names, false for none, undefined for all) lets it have `name`. */
export function namedForAgent(name: string, only: string[] | false | undefined): boolean {
  return only === undefined || (only !== false && only.includes(name));
}

/**
 * The servers an agent gets, in ACP's shape: stdio always, http and sse only when its `mcpCapabilities` say so;
 * `only` (the agent entry's `mcpServers`): a list of names it gets, or false for none. The rest named, with why.
 */
export function mcpServersFor(
  servers: McpServerEntry[],
  caps: { http?: boolean; sse?: boolean } | undefined,
  only?: string[] | false,
): { pass: AcpMcpServer[]; passed: McpServerEntry[]; notPassed: McpNotPassed[] } {
  const pass: AcpMcpServer[] = [];
  const passed: McpServerEntry[] = [];
  const notPassed: McpNotPassed[] = [];
  for (const s of servers) {
    if (!namedForAgent(s.name, only)) {
      notPassed.push({ name: s.name, type: s.type, reason: 'filtered' });
      continue;
    }
    if (s.type !== 'stdio' && caps?.[s.type] !== true) {
      notPassed.push({ name: s.name, type: s.type, reason: 'transport' });
      continue;
    }
    passed.push(s);
    const pairs = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).map(([name, value]) => ({ name, value }));
    pass.push(s.type === 'stdio' ? { name: s.name, command: s.command ?? '', args: s.args ?? [], env: pairs(s.env) } : { type: s.type, name: s.name, url: s.url ?? '', headers: pairs(s.headers) });
  }
  return { pass, passed, notPassed };
}

/** The transports an agent takes, as words for a notice ("stdio", "stdio and http", …). */
export function mcpTransports(caps: { http?: boolean; sse?: boolean } | undefined): string {
  const t = ['stdio', ...(caps?.http ? ['http'] : []), ...(caps?.sse ? ['sse'] : [])];
  return t.length === 1 ? 'stdio' : `${t.slice(0, -1).join(', ')} and ${t.at(-1)}`;
}
