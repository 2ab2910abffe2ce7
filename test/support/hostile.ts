/**
 * The hostile test agent (test/fixtures/hostileAgent.ts) in `mode`, logging every frame it sees to a file in a
 * scratch folder: its agent config, and the frames read back.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { hostileAgent, scratchDir } from './paths';

export function hostile(mode: string, extra: string[] = [], dir = scratchDir('hostile')) {
  const log = path.join(dir, 'frames.ndjson');
  return {
    dir,
    log,
    config: { name: 'hostile', command: process.execPath, args: [hostileAgent, mode, ...extra], env: { HOSTILE_LOG: log } },
    frames: (): Record<string, unknown>[] =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
  };
}
