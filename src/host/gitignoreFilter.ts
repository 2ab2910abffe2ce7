/**
 * What the workspace's `.gitignore` files leave out, for the `@` file search: the folder's own `.gitignore` and
 * `.git/info/exclude`, and each nested `.gitignore` for the paths below it (the `ignore` package reads the
 * patterns as git does). No vscode.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ignore, { type Ignore } from 'ignore';

/** A filter over paths relative to `root` (with `/`): true when git would ignore the path. */
export function gitignoreFilter(root: string, nested: readonly string[] = []): (rel: string) => boolean {
  const rules: { dir: string; ig: Ignore }[] = [];
  const read = (dir: string, file: string) => {
    try {
      rules.push({ dir, ig: ignore().add(fs.readFileSync(path.join(root, file), 'utf8')) });
    } catch {
      // no such file: nothing to ignore there
    }
  };
  read('', '.gitignore');
  read('', path.join('.git', 'info', 'exclude'));
  for (const file of nested) if (path.posix.basename(file) === '.gitignore' && file !== '.gitignore') read(path.posix.dirname(file), file);
  return (rel) =>
    rules.some(({ dir, ig }) => {
      if (!dir) return ig.ignores(rel);
      return rel.startsWith(`${dir}/`) && ig.ignores(rel.slice(dir.length + 1));
    });
}
