import { validHeaders } from './remoteHeaders';
import type { AgentSpawnSpec, SandboxLaunch } from '../core/agentProcess';
import { SANDBOX_MODES, type SandboxEntry, type SandboxMode } from './sandboxPolicy';
export type AgentProtocol = 'acp' | 'rpc' | 'agent-service';

/** One configured agent: the `agent_servers` shape other ACP clients use, plus the protocol. */
export interface AgentConfig {
  name: string;
  /** What runs; for a remote agent (`url`) the URL itself, so every place that names the agent shows where it is. */
  command: string;
  args?: string[];
  env?: Record<string, string>;
  protocol?: AgentProtocol;
  /**
   * A remote agent's address, reached instead of spawning `command`: an agent service (`ws://`, `wss://`), or a
   * remote ACP agent — `ws(s)://` over a WebSocket, `http(s)://` over Streamable HTTP.
   */
  url?: string;
  /** For a TLS agent with a certificate no system CA signed: a CA file (PEM) to trust, or (`wss://` only) the SHA-256 fingerprint of the certificate to accept. */
  tls?: { ca?: string; fingerprint?: string };
  /** A remote agent's extra headers: text, `${secret:NAME}` or `${env:NAME}` (remoteHeaders.ts); never a secret itself. */
  headers?: Record<string, string>;
  cwd?: string;
  /** false: `env` is the agent's whole environment instead of additions to the host's. */
  inheritEnv?: boolean;
  /** The preset this entry came from (src/agents/presets.ts), when it did. */
  preset?: string;
  /** It does not exit when its stdin closes: a stop sends SIGTERM at once (from its preset; see adapters.ts). */
  ignoresInputClose?: boolean;
  /** Applied to every new session of this agent (a choice made in the chat's header is remembered on top). */
  defaults?: { mode?: string; model?: string; config?: Record<string, string | boolean> };
  /** Which of the user's MCP servers (src/session/mcpConfig.ts) this agent gets, by name; false: none. Default: all. */
  mcpServers?: string[] | false;
  /** The agent's sandbox (src/session/sandboxPolicy.ts): a mode, or a mode with more folders and hosts. Default: the setting's. */
  sandbox?: SandboxMode | SandboxEntry;
}

/**
 * Accepts either our list shape `[{name, command, …}]` or Zed's map shape
 * `{"agent_servers": {"Name": {command, args, env}}}` (or the inner map alone), so configs paste across.
 */
export function parseAgentConfigs(value: unknown): AgentConfig[] {
  if (Array.isArray(value)) return value.map((v, i) => validate(v, `agents[${i}]`));
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const map = (obj.agent_servers ?? obj.agents ?? obj) as Record<string, unknown>;
    if (Array.isArray(map)) return parseAgentConfigs(map);
    return Object.entries(map).map(([name, v]) => validate({ name, ...(v as object) }, name));
  }
  throw new Error('Agent configuration must be a list of {name, command, …} or an {"agent_servers": {…}} map');
}

/** One settings layer of agents (User, Remote, Workspace, …) as written, lowest precedence first. */
export interface AgentLayer {
  source: string;
  value: unknown;
}

/**
 * Every layer's valid entries, merged by name (a later layer's entry replaces an earlier one of the same name,
 * in place), the layer each came from, and one line per entry that has the wrong shape (it is left out; the
 * others still count).
 */
export function mergeAgentLayers(layers: AgentLayer[]): { agents: AgentConfig[]; sources: Map<string, string>; problems: string[] } {
  const byName = new Map<string, AgentConfig>();
  const sources = new Map<string, string>();
  const problems: string[] = [];
  for (const { source, value } of layers) {
    if (value === undefined || value === null) continue;
    const entries: [unknown, string][] = Array.isArray(value)
      ? value.map((v, i) => [v, `agents[${i}]`])
      : value && typeof value === 'object'
        ? Object.entries(((value as Record<string, unknown>).agent_servers ?? value) as Record<string, unknown>).map(([name, v]) => [v && typeof v === 'object' ? { name, ...v } : v, name])
        : [];
    if (!Array.isArray(value) && (!value || typeof value !== 'object')) problems.push(`${source}: agentHost.agents must be a list of {name, command, …}`);
    // A workspace's entry cannot change the sandbox: it would loosen it for the very command it names.
    const fromWorkspace = source === 'Workspace' || source.startsWith('Folder ');
    for (const [v, where] of entries) {
      try {
        const agent = validate(v, where);
        if (fromWorkspace && agent.sandbox !== undefined) {
          delete agent.sandbox;
          problems.push(
            `${source}: ${where} ("${agent.name}"): only its "sandbox" is ignored — it is read from user settings only, so a workspace cannot loosen it; the agent runs with the default sandbox`,
          );
        }
        byName.set(agent.name, agent);
        sources.set(agent.name, source);
      } catch (error) {
        problems.push(`${source}: ${(error as Error).message}`);
      }
    }
  }
  return { agents: [...byName.values()], sources, problems };
}

/** The protocols a `url` entry may have: a remote ACP agent, an agent service. */
const REMOTE_PROTOCOLS = new Set<unknown>(['acp', 'agent-service']);

function validate(v: unknown, where: string): AgentConfig {
  if (!v || typeof v !== 'object') throw new Error(`${where}: expected an object`);
  const o = v as Record<string, unknown>;
  if (typeof o.name !== 'string' || !o.name) throw new Error(`${where}: "name" must be a non-empty string`);
  const protocol = o.protocol ?? 'acp';
  if (protocol !== 'acp' && protocol !== 'rpc' && protocol !== 'agent-service') throw new Error(`${where}: "protocol" must be "acp", "rpc" or "agent-service"`);
  if (o.url !== undefined && !REMOTE_PROTOCOLS.has(protocol)) throw new Error(`${where}: "url" is for a remote agent: protocol "acp" (the default) or "agent-service"`);
  if (protocol === 'agent-service' || o.url !== undefined) return validRemote(o as Record<string, unknown> & { name: string }, where, protocol === 'agent-service');
  if (typeof o.command !== 'string' || !o.command) throw new Error(`${where}: "command" must be a non-empty string`);
  if (o.args !== undefined && !(Array.isArray(o.args) && o.args.every((a) => typeof a === 'string'))) {
    throw new Error(`${where}: "args" must be a list of strings`);
  }
  if (o.env !== undefined && (typeof o.env !== 'object' || o.env === null || Array.isArray(o.env))) {
    throw new Error(`${where}: "env" must be an object of strings`);
  }
  return {
    name: o.name,
    command: o.command,
    args: (o.args as string[] | undefined) ?? [],
    env: Object.fromEntries(Object.entries((o.env as Record<string, unknown>) ?? {}).map(([k, val]) => [k, String(val)])),
    protocol: protocol as AgentProtocol,
    ...(typeof o.cwd === 'string' ? { cwd: o.cwd } : {}),
    ...(o.inheritEnv === false ? { inheritEnv: false } : {}),
    ...(typeof o.preset === 'string' && o.preset ? { preset: o.preset } : {}),
    ...(o.defaults !== undefined ? { defaults: validDefaults(o.defaults, where) } : {}),
    ...validMcpServers(o.mcpServers, where),
    ...validSandbox(o.sandbox, where),
  };
}

/** The entry's `sandbox`: a mode, or {mode?, allowWrite?, denyRead?, allowHosts?}. */
function validSandbox(v: unknown, where: string): Pick<AgentConfig, 'sandbox'> {
  if (v === undefined) return {};
  const modes = SANDBOX_MODES.join(', ');
  if (typeof v === 'string') {
    if (!SANDBOX_MODES.includes(v as SandboxMode)) throw new Error(`${where}: "sandbox" must be one of ${modes}`);
    return { sandbox: v as SandboxMode };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${where}: "sandbox" must be a mode (${modes}) or {mode?, allowWrite?, denyRead?, allowHosts?}`);
  const o = v as Record<string, unknown>;
  const out: SandboxEntry = {};
  if (o.mode !== undefined) {
    if (!SANDBOX_MODES.includes(o.mode as SandboxMode)) throw new Error(`${where}: "sandbox.mode" must be one of ${modes}`);
    out.mode = o.mode as SandboxMode;
  }
  for (const key of ['allowWrite', 'denyRead', 'allowHosts'] as const) {
    const list = o[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string' && x.length > 0)) throw new Error(`${where}: "sandbox.${key}" must be a list of strings`);
    out[key] = list as string[];
  }
  return { sandbox: out };
}

/** The entry's `mcpServers`: a list of server names, or false for none. */
function validMcpServers(v: unknown, where: string): Pick<AgentConfig, 'mcpServers'> {
  if (v === undefined) return {};
  if (v === false || (Array.isArray(v) && v.every((n) => typeof n === 'string'))) return { mcpServers: v as string[] | false };
  throw new Error(`${where}: "mcpServers" must be a list of MCP server names, or false for none`);
}

/**
 * A remote entry: a URL instead of a command. An agent service takes `ws://` / `wss://`; a remote ACP agent
 * those or `http://` / `https://` (Streamable HTTP). A command beside the URL is refused (which would run?).
 */
function validRemote(o: Record<string, unknown> & { name: string }, where: string, service: boolean): AgentConfig {
  if (service && (typeof o.url !== 'string' || !/^wss?:\/\/[^/]/.test(o.url))) throw new Error(`${where}: an "agent-service" agent needs a "url" starting with ws:// or wss://`);
  if (!service && (typeof o.url !== 'string' || !/^(wss?|https?):\/\/[^/]/.test(o.url))) {
    throw new Error(`${where}: a remote ACP agent's "url" must start with ws://, wss://, http:// or https://`);
  }
  const url = o.url as string;
  if (!service && o.command !== undefined) throw new Error(`${where}: give "url" (a remote agent) or "command" (a local one), not both`);
  let tls: AgentConfig['tls'];
  if (o.tls !== undefined) {
    const t = o.tls as Record<string, unknown> | null;
    if (!t || typeof t !== 'object' || Array.isArray(t) || (t.ca !== undefined && typeof t.ca !== 'string') || (t.fingerprint !== undefined && typeof t.fingerprint !== 'string')) {
      throw new Error(`${where}: "tls" must be {ca?: "file.pem", fingerprint?: "SHA-256 hex"}`);
    }
    if (!service && t.fingerprint !== undefined && !url.startsWith('wss:')) throw new Error(`${where}: "tls.fingerprint" is for wss:// agents (name a CA file in "tls.ca")`);
    tls = { ...(typeof t.ca === 'string' ? { ca: t.ca } : {}), ...(typeof t.fingerprint === 'string' ? { fingerprint: t.fingerprint } : {}) };
  }
  return {
    name: o.name,
    command: url,
    url,
    protocol: service ? 'agent-service' : 'acp',
    ...(tls ? { tls } : {}),
    ...(o.headers !== undefined ? { headers: validHeaders(o.headers, where) } : {}),
    ...(typeof o.preset === 'string' && o.preset ? { preset: o.preset } : {}),
    ...(o.defaults !== undefined ? { defaults: validDefaults(o.defaults, where) } : {}),
    ...validMcpServers(o.mcpServers, where),
  };
}

function validDefaults(v: unknown, where: string): NonNullable<AgentConfig['defaults']> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${where}: "defaults" must be {mode?, model?, config?}`);
  const d = v as Record<string, unknown>;
  const out: NonNullable<AgentConfig['defaults']> = {};
  if (d.mode !== undefined) {
    if (typeof d.mode !== 'string') throw new Error(`${where}: "defaults.mode" must be a string`);
    out.mode = d.mode;
  }
  if (d.model !== undefined) {
    if (typeof d.model !== 'string') throw new Error(`${where}: "defaults.model" must be a string`);
    out.model = d.model;
  }
  if (d.config !== undefined) {
    const c = d.config;
    if (!c || typeof c !== 'object' || Array.isArray(c) || !Object.values(c).every((x) => typeof x === 'string' || typeof x === 'boolean')) {
      throw new Error(`${where}: "defaults.config" must map option ids to strings or booleans`);
    }
    out.config = c as Record<string, string | boolean>;
  }
  return out;
}

/**
 * The environment an agent runs with — and the one its terminal commands start from: the host's (unless
 * `inheritEnv` is false), then the configured `env`, then `extra` (API keys kept from sign-in).
 */
export function agentEnvironment(config: Pick<AgentConfig, 'env' | 'inheritEnv'>, extra: Record<string, string> = {}): Record<string, string> {
  const base = config.inheritEnv === false ? {} : Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  return { ...base, ...(config.env ?? {}), ...extra };
}

/** How to spawn a configured agent: its command and arguments, its env with `extra` on top, its folder (else `cwd`). */
export function spawnSpecOf(config: AgentConfig, cwd: string, extra: Record<string, string> = {}, sandbox?: SandboxLaunch): AgentSpawnSpec {
  return {
    ...(sandbox ? { sandbox } : {}),
    command: config.command,
    args: config.args ?? [],
    env: { ...(config.env ?? {}), ...extra },
    cwd: config.cwd ?? cwd,
    ...(config.inheritEnv === false ? { inheritEnv: false } : {}),
    ...(config.ignoresInputClose ? { ignoresInputClose: true } : {}),
  };
}
