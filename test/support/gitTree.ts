/**
 * A test's git repository (the fan-out tests, docs/fanout.md): git with a throwaway identity, and what "unchanged"
 * means for the user's tree — every file but .git with its bytes, the index's bytes and HEAD.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });

export function treeState(repo: string): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.name === '.git') continue;
      if (e.isDirectory()) walk(p);
      else out.push(`${path.relative(repo, p)}\n${fs.readFileSync(p, 'base64')}`);
    }
  };
  walk(repo);
  out.push(`index\n${fs.readFileSync(path.join(repo, '.git', 'index'), 'base64')}`, `HEAD\n${git(repo, 'rev-parse', 'HEAD')}`);
  return out.join('\n');
}
