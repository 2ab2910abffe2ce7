import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The repository root (tests run from out/test/…). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');
export const hostileAgent = path.join(repoRoot, 'out', 'test', 'fixtures', 'hostileAgent.js');
export const cliPath = path.join(repoRoot, 'dist', 'cli.js');

export function scratchDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `agent-host-${prefix}-`));
}

export { processAlive as alive } from '../../src/core/agentProcess';
