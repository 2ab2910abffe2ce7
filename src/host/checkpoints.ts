/**
 * Checkpoints: the workspace's files before each prompt, kept in a shadow git repository per workspace folder
 * in the extension's storage (`git --git-dir=<store> --work-tree=<folder>`), so any folder works, git or not,
 * and the user's own `.git` is never read or written. Each checkpoint is a parentless commit under
 * refs/checkpoints/; a restore brings the folder back to it byte for byte. No vscode.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '../core/log';

export interface CheckpointLimits {
  /** A file larger than this is not kept (and a restore never touches it). */
  maxFileBytes: number;
  /** A checkpoint whose new or changed files add up to more than this is not taken. */
  maxChangedBytes: number;
  /** Checkpoints kept per folder; older ones are pruned. */
  keep: number;
  /** Loose objects past this are packed after the operation (10,000 loose files took 41 MiB, their pack 2 MiB). */
  maxLoose: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = { maxFileBytes: 5 * 1024 * 1024, maxChangedBytes: 256 * 1024 * 1024, keep: 100, maxLoose: 2000 };

/** Never checkpointed: the folder's own repository (and nested ones), and installed dependencies. */
export const BUILT_IN_EXCLUDES = ['.git', 'node_modules/'];

/**
 * Attributes that win over the folder's .gitattributes (info/attributes comes first): no end-of-line
 * conversion, filter or ident expansion, so what is restored is the bytes that were kept.
 */
const RAW_ATTRIBUTES = '* -text -ident -filter !eol !working-tree-encoding\n';

/** Pruning runs when this many checkpoints past `keep` have piled up (a gc per prompt would cost too much). */
const PRUNE_SLACK = 10;

export interface Checkpoint {
  /** The commit (one folder's checkpoint). */
  id: string;
  /** Files left out for their size (relative to the folder). */
  skipped: string[];
}

export interface CheckpointInfo {
  id: string;
  label: string;
  time: number;
}

export class CheckpointTooLargeError extends Error {}

export class CheckpointStore {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    /** Where the shadow repositories live (the extension's global storage). */
    private readonly storageDir: string,
    private readonly log?: Logger,
    private readonly limits: CheckpointLimits = DEFAULT_CHECKPOINT_LIMITS,
  ) {}

  /** The shadow repository of one folder: one per folder path, whatever tab or window asks. */
  storeOf(folder: string): string {
    const key = createHash('sha256').update(path.resolve(folder)).digest('hex').slice(0, 16);
    return path.join(this.storageDir, 'checkpoints', key);
  }

  /**
   * Keeps the folder as it is now. `excludes`: gitignore patterns besides the folder's own .gitignore (the
   * files.exclude globs). Throws CheckpointTooLargeError when the changes since the last one exceed the bound.
   */
  create(folder: string, label: string, excludes: readonly string[] = []): Promise<Checkpoint> {
    return this.serial(folder, async () => {
      const git = await this.open(folder);
      const skipped = await this.skipLarge(git, folder, excludes);
      await addAll(git);
      const tree = (await git(['write-tree'])).trim();
      const id = (await git(['commit-tree', tree, '-m', label])).trim();
      await git(['update-ref', `refs/checkpoints/${refStamp()}`, id]);
      await this.prune(git);
      this.packLater(folder);
      return { id, skipped };
    });
  }

  /**
   * Reads the folder into the store without a checkpoint (when an agent starts): the first prompt's checkpoint
   * then writes only what changed since. A folder over the bound is left for the checkpoint to refuse.
   */
  warm(folder: string, excludes: readonly string[] = []): Promise<void> {
    return this.serial(folder, async () => {
      const git = await this.open(folder);
      await this.skipLarge(git, folder, excludes);
      await addAll(git);
      this.packLater(folder);
    }).catch((error: Error) => this.log?.info(`Checkpoints of ${folder} not prepared: ${error.message}`));
  }

  /**
   * Puts the folder back as the checkpoint kept it: modified files rewritten, created ones removed, deleted
   * ones written again. Files ignored, excluded or over the size bound now are left as they are, whether the
   * checkpoint kept them or not.
   */
  restoreFiles(folder: string, id: string): Promise<void> {
    return this.serial(folder, async () => {
      const git = await this.open(folder);
      if (!/^[0-9a-f]{40,64}$/.test(id)) throw new Error(`Not a checkpoint id: ${id}`);
      if (!(await this.refs(git)).some((r) => r.id === id)) throw new Error(`Checkpoint ${id.slice(0, 12)} is no longer kept for ${folder}`);
      // The index first takes what is on disk now, so read-tree removes what the checkpoint did not have.
      await addAll(git);
      const index = path.join(this.storeOf(folder), 'index');
      await fs.copyFile(index, `${index}.disk`);
      // The checkpoint's tree without what is ignored now; the index as the disk is (its stat data kept) then moves to it.
      await git(['read-tree', '--reset', id]);
      const ignored = (await git(['ls-files', '-z', '--cached', '--ignored', '--exclude-standard'])).split('\0').filter(Boolean);
      if (ignored.length) await git(['update-index', '--force-remove', '--', ...ignored]);
      const target = (await git(['write-tree'])).trim();
      await fs.rename(`${index}.disk`, index);
      await git(['read-tree', '--reset', '-u', target]);
      this.log?.info(`Checkpoint ${id.slice(0, 12)}: files of ${folder} restored`);
    });
  }

  /** The kept checkpoints of a folder, newest first. */
  list(folder: string): Promise<CheckpointInfo[]> {
    return this.serial(folder, async () => {
      return this.refs(await this.open(folder));
    });
  }

  /** Newest first: ref names are a millisecond stamp and a sequence number. */
  private async refs(git: Git): Promise<(CheckpointInfo & { ref: string })[]> {
    const out = await git(['for-each-ref', '--sort=-refname', '--format=%(refname) %(objectname) %(creatordate:unix) %(contents:subject)', 'refs/checkpoints/']);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref = '', id = '', time = '0', ...label] = line.split(' ');
        return { ref, id, time: Number(time) * 1000, label: label.join(' ') };
      });
  }

  /** Bytes the folder's store takes on disk. */
  async diskBytes(folder: string): Promise<number> {
    return dirBytes(this.storeOf(folder));
  }

  /** One operation at a time per folder (two tabs share a folder's store and its index). */
  private serial<T>(folder: string, run: () => Promise<T>): Promise<T> {
    const key = path.resolve(folder);
    const next = (this.queues.get(key) ?? Promise.resolve()).then(run, run);
    const settled = next.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  /** The store's git, created on first use, with the folder's `.git` and the built-in excludes left out. */
  private async open(folder: string): Promise<Git> {
    const stat = await fs.stat(folder).catch(() => undefined);
    if (!stat?.isDirectory()) throw new Error(`Not a folder: ${folder}`);
    const store = this.storeOf(folder);
    const git = gitIn(store, folder);
    if (!(await exists(path.join(store, 'HEAD')))) {
      await fs.mkdir(store, { recursive: true });
      await runGit(['init', '-q', '--bare', store], folder);
      for (const [key, value] of STORE_CONFIG) await git(['config', key, value]);
      await fs.mkdir(path.join(store, 'info'), { recursive: true });
      await fs.writeFile(path.join(store, 'info', 'attributes'), RAW_ATTRIBUTES);
      await fs.writeFile(path.join(store, 'folder'), `${path.resolve(folder)}\n`);
      this.log?.info(`Checkpoints of ${folder} are kept in ${store}`);
    }
    return git;
  }

  /** Writes the excludes (built-in, the caller's, and every file ever skipped for size) and finds new large files. */
  private async skipLarge(git: Git, folder: string, excludes: readonly string[]): Promise<string[]> {
    const store = this.storeOf(folder);
    const skippedFile = path.join(store, 'skipped');
    const known = new Set((await fs.readFile(skippedFile, 'utf8').catch(() => '')).split('\n').filter(Boolean));
    const writeExcludes = () => fs.writeFile(path.join(store, 'info', 'exclude'), `${[...BUILT_IN_EXCLUDES, ...excludes, ...[...known].map(anchored)].join('\n')}\n`);
    await writeExcludes();
    const candidates = (await git(['ls-files', '-z', '--others', '--modified', '--exclude-standard'])).split('\0').filter(Boolean);
    const skipped: string[] = [];
    let changed = 0;
    for (const rel of candidates) {
      const st = await fs.lstat(path.join(folder, rel)).catch(() => undefined);
      if (!st?.isFile()) continue;
      if (st.size > this.limits.maxFileBytes) skipped.push(rel);
      else changed += st.size;
    }
    if (changed > this.limits.maxChangedBytes) {
      throw new CheckpointTooLargeError(`No checkpoint of ${folder}: ${mib(changed)} changed since the last one (the bound is ${mib(this.limits.maxChangedBytes)})`);
    }
    if (skipped.length) {
      for (const rel of skipped) known.add(rel);
      await fs.writeFile(skippedFile, `${[...known].join('\n')}\n`);
      await writeExcludes();
      this.log?.warn(`Checkpoint of ${folder}: ${skipped.length} file(s) over ${mib(this.limits.maxFileBytes)} not kept: ${skipped.slice(0, 10).join(', ')}${skipped.length > 10 ? ', …' : ''}`);
    }
    return skipped;
  }

  /** Packs the loose objects once many have piled up; queued after the caller's operation, so no prompt waits for it. */
  private packLater(folder: string): void {
    void this.serial(folder, async () => {
      const git = await this.open(folder);
      const loose = Number(/^count: (\d+)/m.exec(await git(['count-objects', '-v']))?.[1] ?? 0);
      if (loose > this.limits.maxLoose) await git(['repack', '-d', '-q']);
    }).catch((error: Error) => this.log?.warn(`Checkpoints of ${folder}: packing failed: ${error.message}`));
  }

  /** Keeps the newest `keep` checkpoints; the objects only they held go with a gc. */
  private async prune(git: Git): Promise<void> {
    const refs = await this.refs(git);
    if (refs.length <= this.limits.keep + PRUNE_SLACK) return;
    const old = refs.slice(this.limits.keep);
    for (const r of old) await git(['update-ref', '-d', r.ref]);
    await git(['gc', '--quiet', '--prune=now']);
    this.log?.info(`Checkpoints: ${old.length} older than the last ${this.limits.keep} pruned`);
  }
}

type Git = (args: string[]) => Promise<string>;

/**
 * The index as the disk is now. A file kept before and ignored since (.gitignore, files.exclude, grown past the size
 * bound) leaves the index first: `add -A` keeps tracked files, and a restore would then delete or rewrite it.
 */
async function addAll(git: Git): Promise<void> {
  const ignored = (await git(['ls-files', '-z', '--cached', '--ignored', '--exclude-standard'])).split('\0').filter(Boolean);
  if (ignored.length) await git(['update-index', '--force-remove', '--', ...ignored]);
  await git(['add', '-A', '--', '.']);
}

/** The store's own settings: byte-exact files, no fsmonitor, and a committer without the user's config. */
const STORE_CONFIG: [string, string][] = [
  ['core.bare', 'false'],
  ['core.autocrlf', 'false'],
  ['core.safecrlf', 'false'],
  ['core.fsmonitor', 'false'],
  ['core.symlinks', 'true'],
  ['core.quotePath', 'false'],
  ['commit.gpgSign', 'false'],
  ['gc.auto', '0'],
  ['user.name', 'Atrium checkpoints'],
  ['user.email', 'checkpoints@atrium.invalid'],
];

function gitIn(store: string, folder: string): Git {
  return (args) => runGit([`--git-dir=${store}`, `--work-tree=${folder}`, ...args], folder);
}

/** Runs git without a shell, without the user's GIT_* variables (only `extraEnv`'s), global or system config, or hooks. */
export function runGit(args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' }, extraEnv);
  const full = ['-c', `core.hooksPath=${os.devNull}`, '-c', 'safe.directory=*', ...args];
  return new Promise((resolve, reject) => {
    execFile('git', full, { cwd, env, maxBuffer: 256 * 1024 * 1024, windowsHide: true }, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args.filter((a) => !a.startsWith('--git-dir') && !a.startsWith('--work-tree')).join(' ')}: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
  });
}

let sequence = 0;
/** A ref name that sorts by creation, within one millisecond too. */
const refStamp = () => `${String(Date.now()).padStart(15, '0')}.${String(sequence++ % 1e6).padStart(6, '0')}`;

/** A folder-relative path as an exclude pattern matching that one file (gitignore's special characters escaped). */
function anchored(rel: string): string {
  return `/${rel.replace(/[\\*?[\]!# ]/g, (c) => `\\${c}`)}`;
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

const exists = (p: string) =>
  fs.access(p).then(
    () => true,
    () => false,
  );

/** The disk a folder's files use (blocks where the file system says, else sizes); a file gone meanwhile counts nothing. */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await dirBytes(p);
    else {
      const st = await fs.lstat(p).catch(() => undefined);
      total += st ? (st.blocks ? st.blocks * 512 : st.size) : 0;
    }
  }
  return total;
}

/**
 * files.exclude globs (folder-relative, VS Code syntax) as gitignore patterns: one starting with two stars and a
 * slash as is, others anchored at the folder, braces expanded. Globs with a `when` clause are left out.
 */
export function excludePatterns(globs: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [glob, on] of Object.entries(globs)) {
    if (on !== true) continue;
    for (const g of expandBraces(glob)) out.push(g.startsWith('**/') ? g : `/${g.replace(/^\/+/, '')}`);
  }
  return out;
}

function expandBraces(glob: string): string[] {
  const m = /\{([^{}]*)\}/.exec(glob);
  if (!m) return [glob];
  return m[1]!.split(',').flatMap((alt) => expandBraces(glob.slice(0, m.index) + alt + glob.slice(m.index + m[0].length)));
}

/** A checkpoint of every workspace folder (folder → commit), each taken alone: one folder failing leaves the others. */
export async function checkpointFolders(store: CheckpointStore, folders: readonly string[], label: string, excludes: (folder: string) => string[], log?: Logger): Promise<Record<string, string>> {
  const taken: Record<string, string> = {};
  for (const folder of folders) {
    try {
      taken[folder] = (await store.create(folder, label, excludes(folder))).id;
    } catch (error) {
      log?.warn(`No checkpoint of ${folder}: ${(error as Error).message}`);
    }
  }
  return taken;
}

/** Restores each folder of a checkpoint that is still a workspace folder; returns the folders it could not restore, with why. */
export async function restoreFolders(store: CheckpointStore, checkpoint: Record<string, string>, folders: readonly string[]): Promise<string[]> {
  const failed: string[] = [];
  for (const [folder, id] of Object.entries(checkpoint)) {
    if (!folders.includes(folder)) failed.push(`${folder}: no longer a workspace folder`);
    else await store.restoreFiles(folder, id).catch((error: Error) => failed.push(error.message));
  }
  return failed;
}
