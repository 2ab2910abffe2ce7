import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The repository root (tests run from out/test/…). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');
export const hostileAgent = path.join(repoRoot, 'out', 'test', 'fixtures', 'hostileAgent.js');
export const cliPath = path.join(repoRoot, 'dist', 'cli.js');

export function scratchDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `agent-host-${prefix}-`));
}

import { processAlive } from '../../src/core/agentProcess';

export { processAlive as alive };

/** Run folders `<name>-<pid>` under `dir` left by earlier runs (kept when they failed, for a look) go, unless their run is alive. */
export function removeStaleRunFolders(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = Number(/-(\d+)$/.exec(name)?.[1]);
    if (!processAlive(pid)) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}
