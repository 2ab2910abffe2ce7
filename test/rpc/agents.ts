/**
 * The two real pi-family agents in RPC mode, configured against the scripted model (test/model):
 * upstream pi 0.73.1 on Node 20 (installed with pi-acp) and oh-my-pi 18.2.3 on Bun (`scripts/setup-agents.sh omp`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../../src/core/log';
import type { AgentConfig } from '../../src/session/agentConfig';
import { presetById } from '../../src/agents/presets';
import { scriptedSetup } from '../../src/agents/scripted';
import { agentsRoot, baseEnv, systemNode } from '../agents/catalog';

export interface RpcAgentFixture {
  id: 'pi' | 'omp';
  label: string;
  installed(): boolean;
  /** Writes the config under `scratch` and returns the agent config (a complete environment, nothing leaks in). */
  prepare(opts: { scratch: string; modelUrl: string; workspace: string; args?: string[]; env?: Record<string, string> }): AgentConfig;
}

const piCli = () => path.join(agentsRoot(), 'pi-acp', 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js');
export const piPackageDir = () => path.join(agentsRoot(), 'pi-acp', 'node_modules', '@mariozechner', 'pi-coding-agent');
const ompCli = () => path.join(agentsRoot(), 'omp', 'node_modules', '@oh-my-pi', 'pi-coding-agent', 'dist', 'cli.js');
const bunBin = () => path.join(path.dirname(agentsRoot()), 'bun', 'bin', 'bun');

/** The preset's args and env, then the scripted-model config of src/agents/scripted.ts, then the test's own. */
function rpcPrepare(id: 'pi' | 'omp', launch: () => { command: string; args: string[] }): RpcAgentFixture['prepare'] {
  return ({ scratch, modelUrl, workspace, args = [], env: extra = {} }) => {
    const l = launch();
    const preset = presetById(id)!;
    const env = baseEnv(scratch);
    const s = scriptedSetup(id, { scratch, modelUrl, workspace }, env);
    return {
      name: id,
      command: l.command,
      args: [...l.args, ...preset.args, ...s.args, ...args],
      env: { ...env, ...preset.env, ...s.env, ...extra },
      protocol: 'rpc',
      cwd: workspace,
    };
  };
}

/** How pi and omp are launched from .tools/agents, by preset id (the preset adds `--mode rpc`). */
export const RPC_LAUNCH: Record<'pi' | 'omp', () => { command: string; args: string[] }> = {
  pi: () => ({ command: systemNode(), args: [piCli()] }),
  omp: () => ({ command: bunBin(), args: [ompCli()] }),
};

export const PI_RPC: RpcAgentFixture = {
  id: 'pi',
  label: 'pi 0.73.1 (upstream, Node)',
  installed: () => fs.existsSync(piCli()),
  prepare: rpcPrepare('pi', RPC_LAUNCH.pi),
};

export const OMP_RPC: RpcAgentFixture = {
  id: 'omp',
  label: 'oh-my-pi 18.2.3 (fork, Bun)',
  installed: () => fs.existsSync(ompCli()) && fs.existsSync(bunBin()) && fs.existsSync(path.join(agentsRoot(), 'omp', '.stamp')),
  prepare: rpcPrepare('omp', RPC_LAUNCH.omp),
};

/** A logger that keeps every line (tests assert on what was logged); echoes when RPC_TEST_LOG=1. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (lvl: string) => (m: string | Error) => {
    const line = `[${lvl}] ${m instanceof Error ? m.message : m}`;
    lines.push(line);
    if (process.env.RPC_TEST_LOG) process.stderr.write(`${line}\n`);
  };
  return { lines, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A fresh scratch folder with a workspace copy of test/fixtures/sample-workspace. */
export function scratchDirs(prefix: string): { scratch: string; workspace: string } {
  const base = fs.mkdtempSync(path.join(process.env.RPC_TEST_TMP ?? '/tmp', `${prefix}-`));
  const workspace = path.join(base, 'ws');
  const sample = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'sample-workspace');
  fs.cpSync(sample, workspace, { recursive: true });
  return { scratch: path.join(base, 'scratch'), workspace };
}
