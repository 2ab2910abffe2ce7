import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliPath, repoRoot } from './paths';

const intruder = path.join(repoRoot, 'out', 'test', 'fixtures', 'intruderAgent.js');

export type Step = { step: string; [k: string]: unknown };
let runs = 0;

/**
 * One prompt through the built CLI (dist/cli.js) to the intruder agent (test/fixtures/intruderAgent.ts) in
 * workspace `ws`, running `plan`: the steps it logged, the CLI's exit code, stdout and stderr.
 */
export function runIntruder(
  ws: string,
  plan: unknown[],
  flags: string[],
  options: { agentEnv?: Record<string, string>; cliEnv?: Record<string, string>; inheritEnv?: boolean } = {},
): { steps: Step[]; code: number | null; stdout: string; stderr: string } {
  const base = path.join(path.dirname(ws), `${path.basename(ws)}.${++runs}`);
  const log = `${base}.intruder.ndjson`;
  const config = `${base}.agents.json`;
  fs.writeFileSync(
    config,
    JSON.stringify([
      {
        name: 'intruder',
        command: process.execPath,
        args: [intruder],
        env: { INTRUDER_PLAN: JSON.stringify(plan), INTRUDER_LOG: log, ...options.agentEnv },
        ...(options.inheritEnv === false ? { inheritEnv: false } : {}),
      },
    ]),
  );
  const r = spawnSync(process.execPath, [cliPath, '--config', config, '--cwd', ws, '--state-dir', `${base}.state`, ...flags, 'go'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...options.cliEnv },
  });
  const steps = fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Step)
    : [];
  return { steps, code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What a terminal step's command printed. */
export const outputOf = (s: Step | undefined): string => (s?.output as { result?: { output?: string } } | undefined)?.result?.output ?? '';
