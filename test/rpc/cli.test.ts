/**
 * The headless CLI with `--protocol rpc` (out/src/cli/main.js, no bundle needed) against upstream pi.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot } from '../support/paths';
import { PI_RPC, scratchDirs } from './agents';

const cli = path.join(repoRoot, 'out', 'src', 'cli', 'main.js');
// Under npm test (AGENT_HOST_REQUIRE_AGENTS=1) a missing agent fails the suite instead of skipping it.
const skip = PI_RPC.installed() || process.env.AGENT_HOST_REQUIRE_AGENTS === '1' ? false : 'pi-coding-agent not installed';

describe('agent-host CLI --protocol rpc', { skip }, () => {
  it('runs one turn against pi in RPC mode and exits 0', { timeout: 60_000 }, async () => {
    assert.ok(PI_RPC.installed(), 'pi-coding-agent is not installed: run scripts/setup-agents.sh pi-acp');
    const model = await startScriptedModel();
    try {
      const { scratch, workspace } = scratchDirs('rpc-cli');
      const c = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--no-session'] });
      const file = path.join(workspace, 'cli.txt');
      const args = [
        cli,
        '--command',
        c.command,
        ...(c.args ?? []).map((a) => `--arg=${a}`),
        ...Object.entries(c.env ?? {}).map(([k, v]) => `--env=${k}=${v}`),
        '--protocol',
        'rpc',
        '--cwd',
        workspace,
        '--approve-all',
        '--format',
        'json',
        `SCENARIO: write {"path":"${file}","content":"via cli"}`,
      ];
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      const events = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(code, 0, out);
      assert.equal(fs.readFileSync(file, 'utf8'), 'via cli');
      const session = events.find((e) => e.type === 'session') as { agent: { protocol: string } };
      assert.equal(session.agent.protocol, 'rpc');
      assert.deepEqual(
        events.find((e) => e.type === 'result'),
        { type: 'result', outcome: 'end_turn', exitCode: 0 },
      );
    } finally {
      await model.close();
    }
  });
});
