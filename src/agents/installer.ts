/**
 * Installs a registry agent pinned to its version into `<storage>/<id>/<version>/` and says how to run it
 * (an agent config: command, args, env). npx entries are installed with npm into that folder; binary
 * entries are downloaded, checked against a sha256 (the entry's, else the one recorded at the first
 * install of that id and version) and extracted there; uvx entries are run by uv, nothing is downloaded by
 * us. Everything is built in a staging folder beside the version folder and renamed into place at the
 * end, so a failed or cancelled install leaves nothing installed.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentConfig } from '../session/agentConfig';
import { downloadFile } from './download';
import { packageSpec, type PackageRegistry } from './packageSpec';
import type { Companion } from './presets';
import { distributionFor, platformKey, type ChosenDistribution, type PlatformKey, type RegistryAgent } from './registry';
import { runTool, findOnPath } from './tools';

export type InstallPhase = 'download' | 'verify' | 'extract' | 'npm' | 'resolve';

/** An install that failed in one phase; `cancelled` when the AbortSignal ended it. */
export class InstallError extends Error {
  constructor(
    readonly phase: InstallPhase,
    message: string,
    readonly cancelled = false,
  ) {
    super(message);
    this.name = 'InstallError';
  }
}

export interface InstallProgress {
  phase: InstallPhase;
  message: string;
  /** Bytes so far (download). */
  received?: number;
  total?: number;
}

/** The record kept in `<storage>/<id>/<version>/install.json`. */
export interface InstalledAgent {
  id: string;
  name: string;
  version: string;
  kind: ChosenDistribution['kind'];
  command: string;
  args: string[];
  env: Record<string, string>;
  /** File (relative to the version folder, or "archive") → sha256 hex. */
  sha256s: Record<string, string>;
  installedAt: string;
  /** The version folder (not stored; filled in when read). */
  dir: string;
}

export interface InstallOptions {
  storage: string;
  platform?: PlatformKey | undefined;
  /** Install the entry's preview version. */
  preview?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: InstallProgress) => void;
  /** Environment for npm, tar, unzip and the PATH searched for uvx (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The Node that runs a JavaScript bin (default: this process's, or `node` inside an editor). */
  node?: string;
  /** npm packages installed beside an npx agent, pinned; each one's bin goes into the agent's env under its `env`. */
  with?: Companion[];
}

export interface InstallResult {
  installed: InstalledAgent;
  /** That version was already in place: nothing was done. */
  already: boolean;
}

/** Where installs go unless told: `$XDG_DATA_HOME/agent-host/agents`, else `~/.local/share/agent-host/agents`. */
export function defaultStorageDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share'), 'agent-host', 'agents');
}

const SAFE_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]*$/;
const INSTALL_JSON = 'install.json';

/** The agent config to paste into `agentHost.agents`. */
export function agentConfigOf(i: InstalledAgent): AgentConfig {
  return { name: i.name, command: i.command, args: i.args, env: i.env };
}

export async function install(entry: RegistryAgent, opts: InstallOptions): Promise<InstallResult> {
  let chosen: ChosenDistribution;
  try {
    chosen = distributionFor(entry, opts.platform ?? platformKey(), opts.preview ? { preview: true } : {});
  } catch (e) {
    throw new InstallError('resolve', (e as Error).message);
  }
  if (!SAFE_VERSION.test(chosen.version) || chosen.version.includes('..')) throw new InstallError('resolve', `${entry.id}: version "${chosen.version}" cannot name a folder`);
  const idDir = path.join(opts.storage, entry.id);
  const finalDir = path.join(idDir, chosen.version);
  const existing = readInstalled(finalDir);
  // An install from before the agent came with its companions (pi-acp without pi) is replaced, not reused.
  const complete = (i: InstalledAgent) => (opts.with ?? []).every((c) => i.env[c.env]);
  if (existing && complete(existing)) return { installed: existing, already: true };
  fs.mkdirSync(idDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(idDir, `.staging-${chosen.version}-`));
  try {
    const partial = await build(entry, chosen, staging, finalDir, opts);
    if (opts.signal?.aborted) throw cancelled('resolve', opts.signal);
    const installed: InstalledAgent = { id: entry.id, name: entry.name, version: chosen.version, kind: chosen.kind, ...partial, installedAt: new Date().toISOString(), dir: finalDir };
    const { dir: _dir, ...record } = installed;
    fs.writeFileSync(path.join(staging, INSTALL_JSON), `${JSON.stringify(record, null, 2)}\n`);
    const old = `${staging}.replaced`;
    try {
      if (existing) fs.renameSync(finalDir, old);
      fs.renameSync(staging, finalDir);
    } catch (e) {
      if (existing && !fs.existsSync(finalDir) && fs.existsSync(old)) fs.renameSync(old, finalDir);
      // Another install of the same version finished first: keep its folder.
      const other = readInstalled(finalDir);
      if (other && complete(other)) return { installed: other, already: true };
      throw new InstallError('resolve', `cannot move the install into ${finalDir}: ${(e as Error).message}`);
    }
    if (chosen.kind === 'binary' && partial.sha256s.archive) recordChecksum(opts.storage, checksumKey(entry.id, chosen), partial.sha256s.archive);
    return { installed, already: false };
  } catch (e) {
    throw e instanceof InstallError ? e : new InstallError('resolve', (e as Error).message);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.rmSync(`${staging}.replaced`, { recursive: true, force: true });
    if (fs.existsSync(idDir) && fs.readdirSync(idDir).length === 0) fs.rmdirSync(idDir);
  }
}

type Built = Pick<InstalledAgent, 'command' | 'args' | 'env' | 'sha256s'>;

function build(entry: RegistryAgent, chosen: ChosenDistribution, staging: string, finalDir: string, opts: InstallOptions): Promise<Built> {
  switch (chosen.kind) {
    case 'npx':
      return installNpm(chosen, staging, finalDir, opts);
    case 'binary':
      return installBinary(entry, chosen, staging, finalDir, opts);
    case 'uvx':
      return Promise.resolve(resolveUvx(chosen, opts));
  }
}

function cancelled(phase: InstallPhase, signal: AbortSignal): InstallError {
  const reason = signal.reason as unknown;
  return new InstallError(phase, `cancelled${reason instanceof Error && reason.name !== 'AbortError' ? `: ${reason.message}` : ''}`, true);
}

/** The entry's package as `name@version`, or an InstallError before npm or uv is run with it. */
function checkedSpec(registry: PackageRegistry, pkg: string, pinned: string): { name: string; spec: string } {
  try {
    return packageSpec(registry, pkg, pinned);
  } catch (e) {
    throw new InstallError('resolve', `${(e as Error).message}; nothing was run`);
  }
}

async function installNpm(chosen: Extract<ChosenDistribution, { kind: 'npx' }>, staging: string, finalDir: string, opts: InstallOptions): Promise<Built> {
  const { name, spec } = checkedSpec('npm', chosen.npx.package, chosen.version);
  const companions = (opts.with ?? []).map((c) => ({ c, ...checkedSpec('npm', `${c.package}@${c.version}`, c.version) }));
  const specs = [spec, ...companions.map((c) => c.spec)];
  const env: NodeJS.ProcessEnv = { ...(opts.env ?? process.env), npm_config_update_notifier: 'false' };
  opts.onProgress?.({ phase: 'npm', message: `npm install ${specs.join(' ')}` });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  let result;
  try {
    result = await runTool(npm, ['install', '--prefix', staging, '--no-audit', '--no-fund', '--', ...specs], {
      cwd: staging,
      env,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onLine: (line) => opts.onProgress?.({ phase: 'npm', message: line }),
    });
  } catch (e) {
    if (opts.signal?.aborted) throw cancelled('npm', opts.signal);
    throw new InstallError('npm', `cannot run npm (${(e as Error).message}); npm must be on PATH (${env.PATH ?? ''})`);
  }
  if (opts.signal?.aborted) throw cancelled('npm', opts.signal);
  if (result.code !== 0) throw new InstallError('npm', `npm install ${specs.join(' ')} failed (exit ${result.code ?? result.signal}):\n${result.tail}`);

  const { binName, rel, file } = npmBin(staging, name, spec, name.split('/').pop()!);
  const js = isJavaScript(file);
  if (!js) fs.chmodSync(file, 0o755);
  // The command is npm's own link (`node_modules/.bin/opencode`), not the file it points to: opencode-ai's
  // bin is `bin/opencode.exe` on every platform, and the command is what the picker and the log show.
  const link = path.join('node_modules', '.bin', binName);
  const viaLink = !js && process.platform !== 'win32' && fs.existsSync(path.join(staging, link)) && fs.realpathSync(path.join(staging, link)) === fs.realpathSync(file);
  const target = path.join(finalDir, viaLink ? link : rel);
  const node = opts.node ?? (process.versions.electron ? 'node' : process.execPath);
  const sha256s = { [rel.split(path.sep).join('/')]: sha256File(file) };
  const companionEnv: Record<string, string> = {};
  for (const { c, name: cName, spec: cSpec } of companions) {
    const bin = npmBin(staging, cName, cSpec, c.bin);
    // The agent spawns it by itself: its own file (executable, with its shebang), or npm's .cmd shim on Windows.
    fs.chmodSync(bin.file, 0o755);
    const runs = process.platform === 'win32' ? path.join('node_modules', '.bin', `${bin.binName}.cmd`) : bin.rel;
    companionEnv[c.env] = path.join(finalDir, runs);
    sha256s[bin.rel.split(path.sep).join('/')] = sha256File(bin.file);
  }
  return {
    command: js ? node : target,
    args: [...(js ? [target] : []), ...(chosen.npx.args ?? [])],
    env: { ...(chosen.npx.env ?? {}), ...companionEnv },
    sha256s,
  };
}

/** The bin `wanted` (else the package's only one) of an installed npm package, checked to stay inside `staging`. */
function npmBin(staging: string, name: string, spec: string, wanted: string): { binName: string; rel: string; file: string } {
  let pkg: { bin?: string | Record<string, string> };
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(staging, 'node_modules', ...name.split('/'), 'package.json'), 'utf8')) as typeof pkg;
  } catch (e) {
    throw new InstallError('resolve', `${spec}: no package.json after npm install (${(e as Error).message})`);
  }
  const bins = typeof pkg.bin === 'string' ? { [name.split('/').pop()!]: pkg.bin } : (pkg.bin ?? {});
  const names = Object.keys(bins);
  const binName = names.includes(wanted) ? wanted : names.length === 1 ? names[0] : undefined;
  if (!binName) throw new InstallError('resolve', `${spec} declares ${names.length ? `several commands (${names.join(', ')}) and none named ${wanted}` : 'no command ("bin")'}`);
  const rel = path.join('node_modules', ...name.split('/'), bins[binName]!);
  return { binName, rel, file: inside(staging, rel, `${spec}'s bin "${binName}"`) };
}

function isJavaScript(file: string): boolean {
  if (/\.[cm]?js$/.test(file)) return true;
  const head = Buffer.alloc(128);
  const fd = fs.openSync(file, 'r');
  try {
    const n = fs.readSync(fd, head, 0, head.length, 0);
    const first = head.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    return first.startsWith('#!') && /\bnode\b/.test(first);
  } finally {
    fs.closeSync(fd);
  }
}

/** `rel` resolved inside `dir`; refuses absolute paths, `..` and symlinks leading out. Must exist. */
function inside(dir: string, rel: string, what: string): string {
  const file = path.resolve(dir, rel);
  const out = (p: string, root: string) => {
    const r = path.relative(root, p);
    return r === '' || r.startsWith('..') || path.isAbsolute(r);
  };
  if (path.isAbsolute(rel) || out(file, dir)) throw new InstallError('resolve', `${what} "${rel}" points outside the install folder`);
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    throw new InstallError('resolve', `${what} "${rel}" does not exist in the install folder`);
  }
  if (out(real, fs.realpathSync(dir))) throw new InstallError('resolve', `${what} "${rel}" leads outside the install folder (to ${real})`);
  if (!fs.statSync(real).isFile()) throw new InstallError('resolve', `${what} "${rel}" is not a file`);
  return file;
}

function sha256File(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

const checksumKey = (id: string, c: Extract<ChosenDistribution, { kind: 'binary' }>) => `${id}@${c.version}/${c.platform}`;

function checksumsFile(storage: string): string {
  return path.join(storage, 'checksums.json');
}

function readChecksums(storage: string): Record<string, string> {
  try {
    return JSON.parse(fs.readFileSync(checksumsFile(storage), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

function recordChecksum(storage: string, key: string, sha: string): void {
  const all = readChecksums(storage);
  if (all[key]) return;
  all[key] = sha;
  const tmp = `${checksumsFile(storage)}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`);
  fs.renameSync(tmp, checksumsFile(storage));
}

async function installBinary(entry: RegistryAgent, chosen: Extract<ChosenDistribution, { kind: 'binary' }>, staging: string, finalDir: string, opts: InstallOptions): Promise<Built> {
  const { archive, cmd } = chosen.binary;
  const base = decodeURIComponent(new URL(archive).pathname.split('/').pop() || 'download');
  const download = path.join(path.dirname(staging), `.download-${randomBytes(6).toString('hex')}`);
  try {
    opts.onProgress?.({ phase: 'download', message: `downloading ${archive}` });
    let sha: string;
    try {
      sha = (
        await downloadFile(archive, download, {
          ...(opts.signal ? { signal: opts.signal } : {}),
          onProgress: (p) => opts.onProgress?.({ phase: 'download', message: `${p.received}${p.total ? ` of ${p.total}` : ''} bytes`, ...p }),
        })
      ).sha256;
    } catch (e) {
      if (opts.signal?.aborted) throw cancelled('download', opts.signal);
      throw new InstallError('download', (e as Error).message);
    }
    const key = checksumKey(entry.id, chosen);
    const expected = chosen.binary.sha256 ?? readChecksums(opts.storage)[key];
    const whose = chosen.binary.sha256 ? 'the registry entry gives' : `was recorded at the first install of ${key} (${checksumsFile(opts.storage)})`;
    if (expected && expected !== sha) {
      throw new InstallError('verify', `${archive}: sha256 ${sha} does not match ${expected}, which ${whose}; nothing was installed`);
    }
    opts.onProgress?.({ phase: 'verify', message: expected ? `sha256 ${sha} matches` : `sha256 ${sha} (recorded for later installs)` });
    await extract(download, base, cmd, staging, opts);
    const file = inside(staging, cmd, `the entry's cmd`);
    fs.chmodSync(file, 0o755);
    const rel = path.relative(staging, file);
    return {
      command: path.join(finalDir, rel),
      args: chosen.binary.args ?? [],
      env: chosen.binary.env ?? {},
      sha256s: { archive: sha, [rel.split(path.sep).join('/')]: sha256File(file) },
    };
  } finally {
    fs.rmSync(download, { force: true });
  }
}

async function extract(archive: string, name: string, cmd: string, into: string, opts: InstallOptions): Promise<void> {
  const env = opts.env ?? process.env;
  const lower = name.toLowerCase();
  const tarFlag = /\.(tar\.gz|tgz)$/.test(lower) ? 'z' : /\.(tar\.bz2|tbz2?)$/.test(lower) ? 'j' : /\.(tar\.xz|txz)$/.test(lower) ? 'J' : /\.tar$/.test(lower) ? '' : undefined;
  let tool: [string, string[]] | undefined;
  if (tarFlag !== undefined) tool = ['tar', [`-x${tarFlag}f`, archive, '-C', into]];
  else if (lower.endsWith('.zip')) {
    const unzip = findOnPath('unzip', env);
    if (!unzip) throw new InstallError('extract', `${name} is a .zip and "unzip" was not found on PATH (${env.PATH ?? ''}); install unzip and try again`);
    tool = [unzip, ['-q', '-o', archive, '-d', into]];
  }
  if (!tool) {
    // A raw binary: it becomes the entry's cmd (checked to stay inside the folder).
    const target = path.resolve(into, cmd);
    const rel = path.relative(into, target);
    if (path.isAbsolute(cmd) || rel.startsWith('..') || rel === '') throw new InstallError('resolve', `the entry's cmd "${cmd}" points outside the install folder`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(archive, target);
    return;
  }
  opts.onProgress?.({ phase: 'extract', message: `extracting ${name}` });
  let result;
  try {
    result = await runTool(tool[0], tool[1], { cwd: into, env, ...(opts.signal ? { signal: opts.signal } : {}) });
  } catch (e) {
    throw new InstallError('extract', `cannot run ${tool[0]} (${(e as Error).message})`);
  }
  if (opts.signal?.aborted) throw cancelled('extract', opts.signal);
  if (result.code !== 0) throw new InstallError('extract', `${path.basename(tool[0])} could not extract ${name} (exit ${result.code ?? result.signal}):\n${result.tail}`);
}

function resolveUvx(chosen: Extract<ChosenDistribution, { kind: 'uvx' }>, opts: InstallOptions): Built {
  const { spec } = checkedSpec('PyPI', chosen.uvx.package, chosen.version);
  const env = opts.env ?? process.env;
  const uvx = findOnPath('uvx', env);
  if (!uvx) {
    throw new InstallError('resolve', `this agent runs with uvx, which was not found on PATH (${env.PATH ?? ''}); install uv (https://docs.astral.sh/uv/) and try again`);
  }
  return { command: uvx, args: [spec, ...(chosen.uvx.args ?? [])], env: chosen.uvx.env ?? {}, sha256s: {} };
}

function readInstalled(dir: string): InstalledAgent | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(dir, INSTALL_JSON), 'utf8')) as Omit<InstalledAgent, 'dir'>;
    return typeof record.id === 'string' && typeof record.command === 'string' ? { ...record, dir } : undefined;
  } catch {
    return undefined;
  }
}

/** Every installed version in `storage`, by id, then newest version first. */
export function listInstalled(storage: string): InstalledAgent[] {
  const out: InstalledAgent[] = [];
  const dirs = (p: string) => (fs.existsSync(p) ? fs.readdirSync(p, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.')) : []);
  for (const id of dirs(storage)) {
    for (const v of dirs(path.join(storage, id.name))) {
      const record = readInstalled(path.join(storage, id.name, v.name));
      if (record) out.push(record);
    }
  }
  return out.sort((a, b) => a.id.localeCompare(b.id) || compareVersions(b.version, a.version));
}

/** Removes one version (or every version) of `id`; resolves with the versions removed (none: nothing was installed). */
export function uninstall(storage: string, id: string, version?: string): string[] {
  const versions = listInstalled(storage).filter((i) => i.id === id && (version === undefined || i.version === version));
  for (const i of versions) fs.rmSync(i.dir, { recursive: true, force: true });
  const idDir = path.join(storage, id);
  if (versions.length && fs.existsSync(idDir) && fs.readdirSync(idDir).length === 0) fs.rmdirSync(idDir);
  return versions.map((i) => i.version);
}

/** The registry's version when it is newer than every installed version of that agent, else undefined. */
export function updateAvailable(installed: InstalledAgent | InstalledAgent[], entry: RegistryAgent): string | undefined {
  const mine = (Array.isArray(installed) ? installed : [installed]).filter((i) => i.id === entry.id);
  if (!mine.length) return undefined;
  return mine.every((i) => compareVersions(entry.version, i.version) > 0) ? entry.version : undefined;
}

/** Semantic version order: numeric major.minor.patch; a pre-release sorts before its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('+')[0]!.split(/-(.*)/s);
    return { nums: core.split('.').map((n) => Number(n) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre.localeCompare(y.pre, 'en', { numeric: true });
}
