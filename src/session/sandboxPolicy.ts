/**
 * An agent's sandbox policy (docs/sandbox.md): which folders the agent process and everything it starts may write,
 * which it may not read, which hosts it may reach — turned into the settings of `@anthropic-ai/sandbox-runtime`,
 * which src/sandbox/launcher.ts enforces around the agent. Pure: the caller gives the folders and the environment.
 *
 * - `workspace-write`: writes in the workspace folders, the temp folders and the agent's own state folders only.
 * - `read-only`: writes in the temp folders and the agent's state folders only (it can still read the workspace).
 * - `off`: no sandbox; the agent runs as the user.
 * In both sandboxed modes the credential stores are unreadable and the network reaches only the agent's model
 * hosts, loopback, and the hosts the entry adds.
 */
import * as path from 'node:path';
import type { McpServerEntry } from './mcpConfig';

export type SandboxMode = 'workspace-write' | 'read-only' | 'off';
export const SANDBOX_MODES: readonly SandboxMode[] = ['workspace-write', 'read-only', 'off'];

/** An agent entry's `sandbox`: a mode, or a mode with additions. */
export interface SandboxEntry {
  mode?: SandboxMode;
  /** More folders (or files) the agent may write; `~` is the home folder. */
  allowWrite?: string[];
  /** More paths the agent may not read. */
  denyRead?: string[];
  /** More hosts the agent may reach (`example.com`, `*.example.com`, `host:port`). */
  allowHosts?: string[];
}

/** What an agent's preset knows it needs (src/agents/presets.ts): its state folders and its model hosts. */
export interface SandboxNeeds {
  /**
   * `~/x` (home), `xdg-data:x` / `xdg-config:x` / `xdg-state:x` / `xdg-cache:x` (XDG folders), `env:NAME` (a
   * variable's folder), `arg:--flag` (the folder its command line names after `--flag` or in `--flag=…`).
   */
  state: readonly string[];
  hosts: readonly string[];
  /**
   * It talks to servers of its own on loopback (OpenCode): loopback stays inside the sandbox, and the host's loopback
   * is reached only on the ports forwarded to it (see SandboxRuntimeSettings.loopback).
   */
  ownLoopback?: boolean;
  /** Its configuration files (same forms as `state`; `cwd:x` in the session's folder): a loopback URL in one has its port forwarded. */
  configs?: readonly string[];
}

/** Credential stores no sandboxed agent may read (the entry's `denyRead` adds to them). */
export const CREDENTIAL_PATHS: readonly string[] = [
  '~/.ssh',
  '~/.aws',
  '~/.azure',
  '~/.config/gcloud',
  '~/.config/gh',
  '~/.kube',
  '~/.gnupg',
  '~/.netrc',
  '~/.git-credentials',
  '~/.docker/config.json',
  '~/.npmrc',
  '~/.pypirc',
  '~/.password-store',
  '~/.local/share/keyrings',
  '~/Library/Keychains',
];

/** Written by nearly every agent's tools (package managers' caches): allowed for all. */
const COMMON_STATE = ['xdg-cache:', '~/.npm', '~/.bun/install/cache'];

/** Loopback: a local model server, our own MCP servers over HTTP. Reached through the sandbox's proxy. */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '::1'];

export interface SandboxContext {
  /** The session's folder and the workspace's other folders. */
  cwd: string;
  roots?: readonly string[];
  /** The environment the agent runs with (its HOME, TMPDIR, XDG_* decide where `~` and its state folders are). */
  env: Readonly<Record<string, string | undefined>>;
  /** The agent's command-line arguments (`arg:--flag` state folders are read from them). */
  args?: readonly string[];
  /** The user's home folder (os.homedir()): its credential stores are denied too when the agent's HOME differs. */
  userHome: string;
  /** The system's temp folder (os.tmpdir()). */
  tmpdir: string;
}

/** The settings `@anthropic-ai/sandbox-runtime` takes (the parts we set). */
export interface SandboxRuntimeSettings {
  filesystem: { denyRead: string[]; allowWrite: string[]; denyWrite: string[] };
  network: { allowedDomains: string[]; deniedDomains: string[] };
  /** Our IDE tools bridge and the user's stdio MCP servers talk over Unix sockets (see docs/sandbox.md). */
  allowAllUnixSockets: boolean;
  /**
   * How the agent reaches this machine's loopback (the launcher's part, not the runtime's): by default through the
   * proxy (`direct: false`: NO_PROXY cleared); for an agent with servers of its own on loopback, directly inside the
   * sandbox, with each of `ports` forwarded through the proxy to the same port of the host.
   */
  loopback: { direct: boolean; ports: number[] };
  /** The workspace folders, whose files that run code the launcher keeps unwritable (the launcher's part too). */
  protect: string[];
}

/** The mode an entry asks for; without one, `fallback` (the setting's default). */
export function sandboxModeOf(entry: SandboxMode | SandboxEntry | undefined, fallback: SandboxMode): SandboxMode {
  if (typeof entry === 'string') return entry;
  return entry?.mode ?? fallback;
}

function homes(ctx: SandboxContext): string[] {
  const agentHome = ctx.env.HOME || ctx.userHome;
  return [...new Set([agentHome, ctx.userHome])];
}

/** A `~/…` path for each home (the agent's and the user's), an absolute one as is. */
function expand(p: string, ctx: SandboxContext): string[] {
  if (p === '~' || p.startsWith('~/')) return homes(ctx).map((h) => path.join(h, p.slice(1)));
  return [p];
}

/** A need's path (`~/x`, `xdg-…:x`, `env:NAME`, `cwd:x`, or absolute) for this context; none when its variable is unset. */
export function needPath(spec: string, ctx: SandboxContext): string[] {
  if (spec.startsWith('cwd:')) return [path.join(ctx.cwd, spec.slice(4))];
  return stateFolder(spec, ctx);
}

function stateFolder(spec: string, ctx: SandboxContext): string[] {
  const home = ctx.env.HOME || ctx.userHome;
  const xdg = /^xdg-(data|config|state|cache):(.*)$/.exec(spec);
  if (xdg) {
    const [, kind, rest] = xdg;
    const variable = { data: 'XDG_DATA_HOME', config: 'XDG_CONFIG_HOME', state: 'XDG_STATE_HOME', cache: 'XDG_CACHE_HOME' }[kind as 'data'];
    const fallback = { data: '.local/share', config: '.config', state: '.local/state', cache: '.cache' }[kind as 'data'];
    return [path.join(ctx.env[variable] || path.join(home, fallback), rest ?? '')];
  }
  if (spec.startsWith('env:')) {
    const value = ctx.env[spec.slice(4)];
    return value ? [value] : [];
  }
  if (spec.startsWith('arg:')) {
    const flag = spec.slice(4);
    const args = ctx.args ?? [];
    const out: string[] = [];
    for (const [i, a] of args.entries()) {
      const value = a === flag ? args[i + 1] : a.startsWith(`${flag}=`) ? a.slice(flag.length + 1) : undefined;
      if (value) out.push(path.resolve(ctx.cwd, value));
    }
    return out;
  }
  if (spec === '~' || spec.startsWith('~/')) return [path.join(home, spec.slice(1))];
  return [spec];
}

const unique = (xs: string[]) => [...new Set(xs)];

/** The runtime's settings for a sandboxed mode (`off` has none). */
export function sandboxRuntimeSettings(mode: Exclude<SandboxMode, 'off'>, entry: SandboxEntry | undefined, needs: SandboxNeeds | undefined, ctx: SandboxContext): SandboxRuntimeSettings {
  const temp = unique([ctx.tmpdir, '/tmp', ...(ctx.env.TMPDIR ? [ctx.env.TMPDIR] : [])]);
  const state = [...COMMON_STATE, ...(needs?.state ?? [])].flatMap((s) => stateFolder(s, ctx));
  const workspace = mode === 'workspace-write' ? [ctx.cwd, ...(ctx.roots ?? [])] : [];
  const userWrites = (entry?.allowWrite ?? []).flatMap((p) => expand(p, ctx));
  return {
    filesystem: {
      denyRead: unique([...CREDENTIAL_PATHS, ...(entry?.denyRead ?? [])].flatMap((p) => expand(p, ctx))),
      allowWrite: unique([...workspace, ...temp, ...state, ...userWrites]),
      denyWrite: [],
    },
    network: { allowedDomains: unique([...LOOPBACK_HOSTS, ...(needs?.hosts ?? []), ...(entry?.allowHosts ?? [])]), deniedDomains: [] },
    allowAllUnixSockets: true,
    loopback: { direct: needs?.ownLoopback === true, ports: loopbackPorts(entry?.allowHosts ?? [], ctx.env) },
    protect: unique([ctx.cwd, ...(ctx.roots ?? [])]),
  };
}

const LOOPBACK_URL = /\bhttps?:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})\b/g;

/** The host loopback ports the agent is told of: `127.0.0.1:PORT` / `localhost:PORT` allowed, and loopback URLs in its environment. */
export function loopbackPorts(allowHosts: readonly string[], env: Readonly<Record<string, string | undefined>>): number[] {
  const ports = new Set<number>();
  for (const h of allowHosts) {
    const m = /^(?:127\.0\.0\.1|localhost):(\d{1,5})$/.exec(h);
    if (m) ports.add(Number(m[1]));
  }
  for (const value of Object.values(env)) if (value) for (const m of value.matchAll(LOOPBACK_URL)) ports.add(Number(m[1]));
  return [...ports].filter((p) => p > 0 && p < 65536).sort((a, b) => a - b);
}

/**
 * `launch` with the ports of the loopback HTTP and SSE MCP servers the agent is given forwarded too: an agent whose
 * loopback stays inside the sandbox (OpenCode) reaches this machine's only on forwarded ports. Others reach loopback
 * through the proxy already: unchanged.
 */
export function withMcpLoopback<L extends { settings: object }>(launch: L, servers: readonly McpServerEntry[]): L {
  const settings = launch.settings as Partial<SandboxRuntimeSettings>;
  if (!settings.loopback?.direct) return launch;
  const ports = new Set(settings.loopback.ports);
  for (const s of servers) {
    if (s.type === 'stdio' || !s.url) continue;
    try {
      const u = new URL(s.url);
      if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) continue;
      ports.add(Number(u.port || (u.protocol === 'https:' ? 443 : 80)));
    } catch {
      /* not a URL: the agent will say */
    }
  }
  if (ports.size === settings.loopback.ports.length) return launch;
  return { ...launch, settings: { ...settings, loopback: { ...settings.loopback, ports: [...ports].sort((a, b) => a - b) } } };
}

/** One line for the header's tooltip and the log: what the policy allows. */
export function describeSandbox(mode: SandboxMode, settings: SandboxRuntimeSettings | undefined): string {
  if (mode === 'off' || !settings) return 'No sandbox: the agent runs as you.';
  const writes = mode === 'workspace-write' ? 'writes in the workspace, temp and its own folders' : 'writes only in temp and its own folders';
  return `${mode}: ${writes}; credential stores unreadable; network to ${settings.network.allowedDomains.filter((h) => !LOOPBACK_HOSTS.includes(h)).join(', ') || 'no host'} and loopback only.`;
}
