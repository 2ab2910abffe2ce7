/**
 * The git worktrees of fan-out runs (docs/fanout.md): each run works in a worktree of the user's repository made
 * from a snapshot of the user's tree — HEAD plus the uncommitted changes, tracked and untracked (.gitignore
 * honoured) — kept outside the user's tree. What a run changed is the difference between that snapshot and a
 * snapshot of its worktree; applying it touches only the files it changed, and refuses where the user changed the
 * same lines meanwhile. The user's index, HEAD and branches are never written: snapshots go through an index file
 * of their own. Every git command runs without the user's hooks, GIT_* variables or global config. No vscode.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dirBytes, runGit } from '../host/checkpoints';
import { DEFAULT_PROTECTED_PATTERNS, protectedBy } from '../host/protectedPaths';

/** The ref namespace that keeps each run's snapshots (base and result) reachable until the run is removed. */
const REF_ROOT = 'refs/atrium-runs';
/** A committer that does not need the user's config. */
const IDENTITY = ['-c', 'user.name=Atrium fan-out', '-c', 'user.email=fanout@atrium.invalid', '-c', 'commit.gpgSign=false'];

export class NotAGitRepositoryError extends Error {
  constructor(readonly folder: string) {
    super(`${folder} is not in a git repository: runs on several agents need git (each run works in a git worktree; "git init" makes one)`);
  }
}

export interface RunWorktree {
  /** The run's id: also the worktree folder's name and its refs' name. */
  id: string;
  /** The worktree folder (the run's cwd). */
  path: string;
  /** The user's repository (its top-level folder). */
  repo: string;
  /** The snapshot the run started from. */
  base: string;
}

export interface FileChange {
  /** Path relative to the repository. */
  file: string;
  added: number;
  removed: number;
  binary: boolean;
}

export interface RunChanges {
  /** The snapshot of the worktree as the run left it. */
  result: string;
  files: FileChange[];
  added: number;
  removed: number;
}

/** How a run's changes go into the user's tree. */
export interface ApplyOptions {
  /** Only these of the files the run changed (all when not given). */
  only?: readonly string[];
  /**
   * Protected files (src/host/protectedPaths.ts: git config and hooks, editor settings, CI workflows, env files…)
   * that the run changed are refused — nothing written — unless this is true.
   */
  allowProtected?: boolean;
  /** The protected patterns (relative to the repository); DEFAULT_PROTECTED_PATTERNS when not given. */
  protectedPatterns?: readonly string[];
}

/** A protected file a run changed, and the pattern that protects it. */
export interface ProtectedChange {
  file: string;
  pattern: string;
}

/** Which of `files` (relative to `repo`) are protected, each with its pattern. */
export function protectedChanges(repo: string, files: readonly string[], patterns: readonly string[] = DEFAULT_PROTECTED_PATTERNS): ProtectedChange[] {
  return files.flatMap((file) => {
    const pattern = protectedBy(path.join(repo, file), [repo], patterns);
    return pattern ? [{ file, pattern }] : [];
  });
}

/** A run changed protected files and the apply was not told to allow them: nothing was written. */
export class ProtectedFilesError extends Error {
  constructor(readonly files: ProtectedChange[]) {
    super(`the run changed protected files, which run code or configure tools when they change: ${files.map((f) => `${f.file} (${f.pattern})`).join(', ')} (nothing was written)`);
  }
}

type Git = (args: string[]) => Promise<string>;

const gitAt =
  (cwd: string): Git =>
  (args) =>
    runGit(args, cwd);

/** The top-level folder of the repository `folder` is in; throws NotAGitRepositoryError outside one. */
export async function repositoryOf(folder: string): Promise<string> {
  try {
    return path.resolve((await runGit(['rev-parse', '--show-toplevel'], folder)).trim());
  } catch {
    throw new NotAGitRepositoryError(folder);
  }
}

/**
 * A commit of `folder`'s tree as it is on disk now (tracked files as they are, untracked ones not ignored), with
 * `parent` as its parent when given. Uses an index of its own, seeded from the folder's (so unchanged files are
 * not read again): the folder's own index is left as it was.
 */
async function snapshotOf(folder: string, message: string, parent: string | undefined): Promise<string> {
  const git = gitAt(folder);
  const own = path.resolve(folder, (await git(['rev-parse', '--git-path', 'index'])).trim());
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'atrium-index-'));
  const index = path.join(tmp, 'index');
  try {
    // A repository without commits has no index yet. The copy keeps the index's time: git trusts an entry's
    // size and time only when the file is older than its index, so a fresh time on the copy would hide a
    // same-size edit made in the second the index was written.
    await fs
      .copyFile(own, index)
      .then(async () => {
        const { atime, mtime } = await fs.stat(own);
        await fs.utimes(index, atime, mtime);
      })
      .catch(() => undefined);
    const withIndex: Git = (args) => runGit(args, folder, { GIT_INDEX_FILE: index });
    await withIndex(['add', '-A', '--', '.']);
    const tree = (await withIndex(['write-tree'])).trim();
    return (await git([...IDENTITY, 'commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message])).trim();
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

export class RunWorktrees {
  constructor(
    /** Where worktrees are kept: one folder per repository under it, one per run under that. */
    readonly root: string,
  ) {}

  /** The folder of one repository's runs. */
  folderOf(repo: string): string {
    const key = createHash('sha256').update(path.resolve(repo)).digest('hex').slice(0, 12);
    return path.join(this.root, `${path.basename(repo)}-${key}`);
  }

  /** The user's tree as it is now (HEAD plus uncommitted and untracked changes): the base of every run of one start. */
  async snapshot(repo: string): Promise<string> {
    const head = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], repo).then(
      (s) => s.trim(),
      () => undefined,
    );
    return snapshotOf(repo, 'Atrium fan-out: the tree the runs started from', head);
  }

  /** A worktree for run `id` at `base`, detached (no branch is made). */
  async create(repo: string, base: string, id: string): Promise<RunWorktree> {
    if (!/^[A-Za-z0-9._-]+$/.test(id)) throw new Error(`a run id is letters, digits, ".", "_" and "-": ${id}`);
    const folder = path.join(this.folderOf(repo), id);
    await fs.mkdir(path.dirname(folder), { recursive: true });
    await runGit(['worktree', 'add', '--detach', folder, base], repo);
    await runGit(['update-ref', `${REF_ROOT}/${id}/base`, base], repo);
    return { id, path: folder, repo, base };
  }

  /** What the run changed: its worktree now against its base, file by file. */
  async changes(run: RunWorktree): Promise<RunChanges> {
    const result = await snapshotOf(run.path, `Atrium fan-out: run ${run.id}`, run.base);
    await runGit(['update-ref', `${REF_ROOT}/${run.id}/result`, result], run.repo);
    const files = parseNumstat(await runGit(['diff', '--numstat', '-z', '--no-renames', run.base, result], run.repo));
    return { result, files, added: sum(files, 'added'), removed: sum(files, 'removed') };
  }

  /** A unified diff between two snapshots (a run's base and result, or two runs' results). */
  diff(repo: string, from: string, to: string, files: readonly string[] = []): Promise<string> {
    // Literal paths: a file named `*.ts` is that file, not a glob.
    return runGit(['diff', '--no-color', '--no-renames', '--binary', from, to, '--', ...files.map((f) => `:(literal)${f}`)], repo);
  }

  /** The files the run changed between its base and `result` (relative to the repository), chosen by `only`. */
  private async chosen(run: RunWorktree, result: string, o: ApplyOptions): Promise<string[]> {
    const changed = parseNumstat(await runGit(['diff', '--numstat', '-z', '--no-renames', run.base, result], run.repo)).map((f) => f.file);
    const files = o.only ? changed.filter((f) => o.only?.includes(f)) : changed;
    if (!o.allowProtected) {
      const refused = protectedChanges(run.repo, files, o.protectedPatterns);
      if (refused.length) throw new ProtectedFilesError(refused);
    }
    return files;
  }

  /**
   * Puts a run's changes into the user's working tree (not its index). Refuses — changing nothing — when a file the
   * run changed was changed by the user meanwhile in the same lines (or created, or deleted): ApplyConflictError
   * names the files. Refuses protected files the same way unless `o.allowProtected` (ProtectedFilesError).
   */
  async apply(run: RunWorktree, result: string, o: ApplyOptions = {}): Promise<void> {
    const files = await this.chosen(run, result, o);
    if (!files.length) return; // `only` named none of its files: nothing, not all of them
    await this.applyFiles(run, result, o.only ? files : []);
  }

  /** `files` of the run's changes (all when none are named), checked then applied as one patch, or none of it. */
  private async applyFiles(run: RunWorktree, result: string, files: readonly string[]): Promise<void> {
    const patch = await this.diff(run.repo, run.base, result, files);
    if (!patch.trim()) return;
    await withTempFile(patch, async (file) => {
      try {
        await runGit(['apply', '--check', '--whitespace=nowarn', file], run.repo);
      } catch (error) {
        throw new ApplyConflictError(conflictsOf((error as Error).message), (error as Error).message);
      }
      await runGit(['apply', '--whitespace=nowarn', file], run.repo);
    });
  }

  /**
   * Puts a run's changes into the user's working tree where they apply cleanly, and merges the rest file by file
   * (`git merge-file`): a file the user changed in the same lines meanwhile gets both sides between conflict
   * markers, nothing lost. The index is not touched. Returns the files applied and those left with conflicts.
   * Protected files as in apply: refused, nothing written, unless `o.allowProtected`.
   */
  async applyMerging(run: RunWorktree, result: string, o: ApplyOptions = {}): Promise<{ applied: string[]; conflicted: string[] }> {
    const changed = await this.chosen(run, result, o);
    if (!changed.length) return { applied: [], conflicted: [] };
    try {
      await this.applyFiles(run, result, o.only ? changed : []);
      return { applied: changed, conflicted: [] };
    } catch (error) {
      if (!(error instanceof ApplyConflictError)) throw error;
      const conflicting = error.files.length ? error.files : changed;
      const clean = changed.filter((f) => !conflicting.includes(f));
      if (clean.length) {
        const patch = await this.diff(run.repo, run.base, result, clean);
        await withTempFile(patch, (file) => runGit(['apply', '--whitespace=nowarn', file], run.repo));
      }
      const conflicted: string[] = [];
      for (const file of conflicting) {
        const base = await blobText(run.repo, run.base, file);
        const theirs = await blobText(run.repo, result, file);
        const target = path.join(run.repo, file);
        const mine = await fs.readFile(target, 'utf8').catch(() => '');
        const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'atrium-merge-'));
        try {
          const [m, b, t] = ['mine', 'base', 'theirs'].map((n) => path.join(tmp, n)) as [string, string, string];
          await Promise.all([fs.writeFile(m, mine), fs.writeFile(b, base), fs.writeFile(t, theirs)]);
          // Exit status: the number of conflicts (runGit rejects on any but 0).
          const clash = await runGit(['merge-file', '-L', 'yours', '-L', 'the runs’ start', '-L', `run ${run.id}`, m, b, t], run.repo).then(
            () => false,
            () => true,
          );
          await fs.mkdir(path.dirname(target), { recursive: true });
          await fs.writeFile(target, await fs.readFile(m));
          if (clash) conflicted.push(file);
        } finally {
          await fs.rm(tmp, { recursive: true, force: true });
        }
      }
      return { applied: changed.filter((f) => !conflicted.includes(f)), conflicted };
    }
  }

  /** Removes a run's worktree (whatever is in it), its refs, and what git keeps of worktrees that are gone. */
  async remove(run: Pick<RunWorktree, 'id' | 'path' | 'repo'>): Promise<void> {
    await runGit(['worktree', 'remove', '--force', '--force', run.path], run.repo).catch(() => fs.rm(run.path, { recursive: true, force: true }));
    for (const which of ['base', 'result']) await runGit(['update-ref', '-d', `${REF_ROOT}/${run.id}/${which}`], run.repo).catch(() => undefined);
    await runGit(['worktree', 'prune'], run.repo);
    await fs.rmdir(this.folderOf(run.repo)).catch(() => undefined);
  }

  /** The runs of `repo` still on disk (left by a run kept, or by a window that closed), with the bytes each uses. */
  async list(repo: string): Promise<Array<RunWorktree & { bytes: number }>> {
    const mine = this.folderOf(repo);
    const out: Array<RunWorktree & { bytes: number }> = [];
    const porcelain = await runGit(['worktree', 'list', '--porcelain', '-z'], repo);
    for (const record of porcelain.split('\0\0')) {
      const wt = /(?:^|\0)worktree ([^\0]+)/.exec(record)?.[1];
      if (!wt || path.dirname(path.resolve(wt)) !== mine) continue;
      const id = path.basename(wt);
      const base = await runGit(['rev-parse', '--verify', '--quiet', `${REF_ROOT}/${id}/base`], repo).then(
        (s) => s.trim(),
        () => '',
      );
      out.push({ id, path: wt, repo, base, bytes: await dirBytes(wt) });
    }
    return out;
  }
}

export class ApplyConflictError extends Error {
  constructor(
    readonly files: string[],
    detail: string,
  ) {
    super(`the run's changes do not apply: ${files.length ? files.join(', ') : 'the working tree'} changed meanwhile (nothing was written)\n${detail}`);
  }
}

/** The files `git apply --check` named as not applying. */
function conflictsOf(message: string): string[] {
  const files = new Set<string>();
  for (const m of message.matchAll(/error: (?:patch failed: ([^:\n]+):\d+|([^:\n]+): (?:already exists in working directory|does not exist in working directory|patch does not apply))/g)) {
    const f = m[1] ?? m[2];
    if (f) files.add(f.trim());
  }
  return [...files];
}

/** A file as a commit has it ('' when it has none). */
export function blobText(repo: string, commit: string, file: string): Promise<string> {
  return runGit(['show', `${commit}:${file}`], repo).catch(() => '');
}

async function withTempFile<T>(text: string, fn: (file: string) => Promise<T>): Promise<T> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'atrium-patch-'));
  try {
    const file = path.join(tmp, 'run.patch');
    await fs.writeFile(file, text);
    return await fn(file);
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

function parseNumstat(out: string): FileChange[] {
  const files: FileChange[] = [];
  for (const record of out.split('\0')) {
    const m = /^(-|\d+)\t(-|\d+)\t(.+)$/s.exec(record);
    if (!m) continue;
    const binary = m[1] === '-';
    files.push({ file: m[3]!, added: binary ? 0 : Number(m[1]), removed: binary ? 0 : Number(m[2]), binary });
  }
  return files;
}

const sum = (files: FileChange[], key: 'added' | 'removed') => files.reduce((n, f) => n + f[key], 0);
