import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processAlive } from '../../src/core/agentProcess';

export { processAlive as alive };

/** The repository root (tests run from out/test/…). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');
export const hostileAgent = path.join(repoRoot, 'out', 'test', 'fixtures', 'hostileAgent.js');
export const cliPath = path.join(repoRoot, 'dist', 'cli.js');

export function scratchDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `agent-host-${prefix}-`));
}

/**
 * A scratch folder for a VS Code test under the repository's `.scratch` (served to the workbench; kept when the
 * test fails, for a look), with a copy of a fixture folder as its `workspace`.
 */
export function scratchWorkspace(prefix: string, fixture = 'sample-workspace'): { scratch: string; workspace: string } {
  mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
  const scratch = mkdtempSync(path.join(repoRoot, '.scratch', `${prefix}-`));
  const workspace = path.join(scratch, 'workspace');
  cpSync(path.join(repoRoot, 'test', 'fixtures', fixture), workspace, { recursive: true });
  return { scratch, workspace };
}

/** Run folders `<name>-<pid>` under `dir` left by earlier runs (kept when they failed, for a look) go, unless their run is alive. */
export function removeStaleRunFolders(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = Number(/-(\d+)$/.exec(name)?.[1]);
    if (!processAlive(pid)) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}
