/**
 * The ACP agent registry (`registry.json`: `{version, agents, extensions}`): its types, a validating parser
 * that reports and skips bad entries, the distribution to use on this platform, search, and loading with an
 * ETag cache that falls back to the cached copy, then to the snapshot bundled with Atrium.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REGISTRY_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json';

export type PlatformKey = 'darwin-aarch64' | 'darwin-x86_64' | 'linux-aarch64' | 'linux-x86_64' | 'windows-aarch64' | 'windows-x86_64';

const PLATFORMS: readonly PlatformKey[] = ['darwin-aarch64', 'darwin-x86_64', 'linux-aarch64', 'linux-x86_64', 'windows-aarch64', 'windows-x86_64'];

/** An npm (`npx`) or PyPI (`uvx`) package: `package` is `name@version` (the version may be missing). */
export interface PackageDistribution {
  package: string;
  args?: string[];
  env?: Record<string, string>;
}

export interface BinaryTarget {
  archive: string;
  cmd: string;
  args?: string[];
  env?: Record<string, string>;
  /** Not in the registry's schema (it has no checksum field); honoured when an entry carries one. */
  sha256?: string;
}

export interface Distribution {
  npx?: PackageDistribution;
  uvx?: PackageDistribution;
  binary?: Partial<Record<PlatformKey, BinaryTarget>>;
}

export interface RegistryAgent {
  id: string;
  name: string;
  version: string;
  description: string;
  repository?: string;
  website?: string;
  authors?: string[];
  license?: string;
  icon?: string;
  distribution: Distribution;
  preview?: { version: string; distribution: Distribution };
}

export interface Registry {
  version: string;
  agents: RegistryAgent[];
  extensions: RegistryAgent[];
}

export interface ParsedRegistry {
  registry: Registry;
  /** One line per entry that was skipped, and why. */
  problems: string[];
}

const ID = /^[a-z][a-z0-9-]*$/;
const SEMVER = /^[0-9]+\.[0-9]+\.[0-9]+/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function strings(v: unknown, where: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Error(`${where} must be a list of strings`);
  return v;
}

function stringMap(v: unknown, where: string): Record<string, string> | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v) || !Object.values(v).every((s) => typeof s === 'string')) throw new Error(`${where} must be an object of strings`);
  return v as Record<string, string>;
}

function packageDist(v: unknown, where: string): PackageDistribution {
  if (!isObj(v) || typeof v.package !== 'string' || !v.package) throw new Error(`${where}.package must be a non-empty string`);
  const args = strings(v.args, `${where}.args`);
  const env = stringMap(v.env, `${where}.env`);
  return { package: v.package, ...(args ? { args } : {}), ...(env ? { env } : {}) };
}

function binaryDist(v: unknown, where: string): Partial<Record<PlatformKey, BinaryTarget>> {
  if (!isObj(v) || Object.keys(v).length === 0) throw new Error(`${where} must name at least one platform`);
  const out: Partial<Record<PlatformKey, BinaryTarget>> = {};
  for (const [key, t] of Object.entries(v)) {
    const at = `${where}.${key}`;
    if (!PLATFORMS.includes(key as PlatformKey)) throw new Error(`${where}: unknown platform "${key}" (known: ${PLATFORMS.join(', ')})`);
    if (!isObj(t)) throw new Error(`${at} must be an object`);
    if (typeof t.archive !== 'string' || !/^https?:\/\//.test(t.archive)) throw new Error(`${at}.archive must be an http(s) URL`);
    if (typeof t.cmd !== 'string' || !t.cmd) throw new Error(`${at}.cmd must be a non-empty string`);
    if (t.sha256 !== undefined && !(typeof t.sha256 === 'string' && /^[0-9a-fA-F]{64}$/.test(t.sha256))) throw new Error(`${at}.sha256 must be 64 hex digits`);
    const args = strings(t.args, `${at}.args`);
    const env = stringMap(t.env, `${at}.env`);
    out[key as PlatformKey] = {
      archive: t.archive,
      cmd: t.cmd,
      ...(args ? { args } : {}),
      ...(env ? { env } : {}),
      ...(typeof t.sha256 === 'string' ? { sha256: t.sha256.toLowerCase() } : {}),
    };
  }
  return out;
}

function distribution(v: unknown, where: string): Distribution {
  if (!isObj(v)) throw new Error(`${where} must be an object`);
  const unknown = Object.keys(v).filter((k) => k !== 'npx' && k !== 'uvx' && k !== 'binary');
  if (unknown.length) throw new Error(`${where}: unknown kind ${unknown.map((k) => `"${k}"`).join(', ')} (known: npx, uvx, binary)`);
  if (Object.keys(v).length === 0) throw new Error(`${where} is empty`);
  return {
    ...(v.npx !== undefined ? { npx: packageDist(v.npx, `${where}.npx`) } : {}),
    ...(v.uvx !== undefined ? { uvx: packageDist(v.uvx, `${where}.uvx`) } : {}),
    ...(v.binary !== undefined ? { binary: binaryDist(v.binary, `${where}.binary`) } : {}),
  };
}

/** Validates one entry; throws an Error naming the first problem. */
export function parseAgent(v: unknown, where = 'agent'): RegistryAgent {
  if (!isObj(v)) throw new Error(`${where}: expected an object`);
  const at = typeof v.id === 'string' ? `${where} "${v.id}"` : where;
  if (typeof v.id !== 'string' || !ID.test(v.id)) throw new Error(`${at}: "id" must be lowercase letters, digits and hyphens`);
  if (typeof v.name !== 'string' || !v.name) throw new Error(`${at}: "name" must be a non-empty string`);
  if (typeof v.version !== 'string' || !SEMVER.test(v.version)) throw new Error(`${at}: "version" must be a semantic version`);
  if (typeof v.description !== 'string' || !v.description) throw new Error(`${at}: "description" must be a non-empty string`);
  const agent: RegistryAgent = { id: v.id, name: v.name, version: v.version, description: v.description, distribution: distribution(v.distribution, `${at}: distribution`) };
  for (const k of ['repository', 'website', 'license', 'icon'] as const) if (typeof v[k] === 'string') agent[k] = v[k];
  const authors = strings(v.authors, `${at}: authors`);
  if (authors) agent.authors = authors;
  if (v.preview !== undefined) {
    const p = v.preview;
    if (!isObj(p) || typeof p.version !== 'string' || !SEMVER.test(p.version)) throw new Error(`${at}: preview.version must be a semantic version`);
    agent.preview = { version: p.version, distribution: distribution(p.distribution, `${at}: preview.distribution`) };
  }
  return agent;
}

/**
 * Parses `registry.json` (text or value). The top level must be right (else it throws); a bad agent or
 * extension entry is reported in `problems` and skipped, as is a second entry with an id already seen.
 */
export function parseRegistry(json: string | unknown): ParsedRegistry {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (e) {
      throw new Error(`the registry is not JSON: ${(e as Error).message}`);
    }
  }
  if (!isObj(value)) throw new Error('the registry must be an object {version, agents, extensions}');
  if (typeof value.version !== 'string') throw new Error('the registry has no "version"');
  if (!Array.isArray(value.agents)) throw new Error('the registry has no "agents" list');
  const problems: string[] = [];
  const list = (items: unknown[], name: string): RegistryAgent[] => {
    const seen = new Set<string>();
    const out: RegistryAgent[] = [];
    items.forEach((item, i) => {
      try {
        const agent = parseAgent(item, `${name}[${i}]`);
        if (seen.has(agent.id)) throw new Error(`${name}[${i}] "${agent.id}": duplicate id`);
        seen.add(agent.id);
        out.push(agent);
      } catch (e) {
        problems.push(`skipped ${(e as Error).message}`);
      }
    });
    return out;
  };
  const extensions = Array.isArray(value.extensions) ? value.extensions : [];
  return { registry: { version: value.version, agents: list(value.agents, 'agents'), extensions: list(extensions, 'extensions') }, problems };
}

/** The registry's platform key of this machine (or of the given platform/arch). */
export function platformKey(platform: string = process.platform, arch: string = process.arch): PlatformKey | undefined {
  const os = platform === 'darwin' ? 'darwin' : platform === 'linux' ? 'linux' : platform === 'win32' ? 'windows' : undefined;
  const cpu = arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : undefined;
  return os && cpu ? (`${os}-${cpu}` as PlatformKey) : undefined;
}

/** What one install takes: the kind, the version it pins, and that kind's parameters. */
export type ChosenDistribution =
  | { kind: 'npx'; version: string; npx: PackageDistribution }
  | { kind: 'binary'; version: string; platform: PlatformKey; binary: BinaryTarget }
  | { kind: 'uvx'; version: string; uvx: PackageDistribution };

/**
 * The distribution to install on `platform`: npx first (npm checks the package's integrity), then this
 * platform's binary, then uvx. `preview` takes the entry's preview version instead (an error without one).
 * Throws an Error that says what the entry offers when nothing fits.
 */
export function distributionFor(entry: RegistryAgent, platform: PlatformKey | undefined, opts: { preview?: boolean } = {}): ChosenDistribution {
  if (opts.preview && !entry.preview) throw new Error(`${entry.id} has no preview version`);
  const { version, distribution: d } = opts.preview ? entry.preview! : entry;
  if (d.npx) return { kind: 'npx', version, npx: d.npx };
  const target = platform ? d.binary?.[platform] : undefined;
  if (target && platform) return { kind: 'binary', version, platform, binary: target };
  if (d.uvx) return { kind: 'uvx', version, uvx: d.uvx };
  const offered = Object.keys(d.binary ?? {});
  throw new Error(`${entry.id} ${version} has no build for ${platform ?? `${process.platform}-${process.arch}`} (binaries for: ${offered.join(', ') || 'none'})`);
}

/**
 * Entries matching every word of `query` (case-insensitive) in id, name or description; ranked: id or
 * name matches before description-only matches, then by id. An empty query returns all.
 */
export function searchRegistry(agents: RegistryAgent[], query: string): RegistryAgent[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const rank = (a: RegistryAgent): number => {
    const head = `${a.id} ${a.name}`.toLowerCase();
    const all = `${head} ${a.description.toLowerCase()}`;
    if (!words.every((w) => all.includes(w))) return -1;
    return words.every((w) => head.includes(w)) ? 2 : 1;
  };
  return agents
    .map((a) => ({ a, r: rank(a) }))
    .filter((x) => x.r > 0)
    .sort((x, y) => y.r - x.r || x.a.id.localeCompare(y.a.id))
    .map((x) => x.a);
}

/** The snapshot shipped with Atrium: `resources/acp-registry/registry.json` above this module (dist/ or out/src/agents/). */
export function bundledRegistryPath(): string {
  let dir = __dirname;
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'resources', 'acp-registry', 'registry.json');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return path.join(__dirname, '..', 'resources', 'acp-registry', 'registry.json');
}

/** Where the downloaded registry is cached: `$XDG_CACHE_HOME/agent-host/registry`, else `~/.cache/agent-host/registry`. */
export function defaultRegistryCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agent-host', 'registry');
}

export type RegistrySource = 'network' | 'cache' | 'bundled' | 'file';

export interface LoadedRegistry extends ParsedRegistry {
  source: RegistrySource;
  /** The URL or path the registry came from. */
  from: string;
  /** Why the network was not used (offline, an HTTP error, a bad answer), when it was not. */
  fallbackReason?: string;
}

export interface LoadRegistryOptions {
  /** An http(s) URL or a file path (default: the public registry). */
  url?: string;
  /** Where the downloaded copy and its ETag are kept. */
  cacheDir: string;
  fetchImpl?: typeof fetch;
  bundledPath?: string;
  timeoutMs?: number;
}

interface CacheMeta {
  url: string;
  etag?: string;
  fetchedAt: string;
}

/**
 * Loads the registry. A file path is read as is (`file`). A URL is fetched with `If-None-Match` when a
 * cached copy has an ETag: 200 → parsed, then cached (`network`); 304 → the cached copy (`cache`). Offline,
 * an HTTP error or an unparsable answer → the cached copy (`cache`), else the bundled snapshot (`bundled`),
 * with the reason in `fallbackReason`.
 */
export async function loadRegistry(opts: LoadRegistryOptions): Promise<LoadedRegistry> {
  const url = opts.url ?? REGISTRY_URL;
  if (!/^https?:\/\//.test(url)) {
    const file = url.startsWith('file://') ? new URL(url).pathname : path.resolve(url);
    return { ...parseRegistry(fs.readFileSync(file, 'utf8')), source: 'file', from: file };
  }
  const key = createHash('sha256').update(url).digest('hex').slice(0, 16);
  const bodyFile = path.join(opts.cacheDir, `registry-${key}.json`);
  const metaFile = path.join(opts.cacheDir, `registry-${key}.meta.json`);
  const cached = readCache(bodyFile, metaFile);
  let reason: string;
  try {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (cached?.meta.etag) headers['if-none-match'] = cached.meta.etag;
    const res = await (opts.fetchImpl ?? fetch)(url, { headers, signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000) });
    if (res.status === 304 && cached) return { ...cached.parsed, source: 'cache', from: url };
    if (res.status === 200) {
      const text = await res.text();
      const parsed = parseRegistry(text);
      writeCache(opts.cacheDir, bodyFile, metaFile, text, { url, ...(res.headers.get('etag') ? { etag: res.headers.get('etag')! } : {}), fetchedAt: new Date().toISOString() });
      return { ...parsed, source: 'network', from: url };
    }
    reason = `${url} answered HTTP ${res.status}`;
  } catch (e) {
    reason = `${url}: ${(e as Error).message}${(e as { cause?: Error }).cause?.message ? ` (${(e as { cause: Error }).cause.message})` : ''}`;
  }
  if (cached) return { ...cached.parsed, source: 'cache', from: bodyFile, fallbackReason: reason };
  const bundled = opts.bundledPath ?? bundledRegistryPath();
  return { ...parseRegistry(fs.readFileSync(bundled, 'utf8')), source: 'bundled', from: bundled, fallbackReason: reason };
}

function readCache(bodyFile: string, metaFile: string): { parsed: ParsedRegistry; meta: CacheMeta } | undefined {
  try {
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as CacheMeta;
    return { parsed: parseRegistry(fs.readFileSync(bodyFile, 'utf8')), meta };
  } catch {
    return undefined; // no cache, or a damaged one: treated as none
  }
}

function writeCache(dir: string, bodyFile: string, metaFile: string, body: string, meta: CacheMeta): void {
  fs.mkdirSync(dir, { recursive: true });
  // Body first, then the meta that vouches for it; each by rename so a reader never sees half a file.
  for (const [file, text] of [
    [bodyFile, body],
    [metaFile, JSON.stringify(meta, null, 2)],
  ] as const) {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  }
}
