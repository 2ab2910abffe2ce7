/**
 * A crash mid-turn through the headless CLI with a real agent: the agent is killed while its turn runs a
 * command, the CLI starts it again once (said on stderr and as a JSON "restart" event), reattaches the same
 * session and tells it to carry on; the scripted model's next request carries the first prompt's text, which
 * only the reattached session can know. The run ends with the turn, and the agent (codex-acp ignores its
 * stdin closing) is stopped with SIGTERM at once.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { CONTINUE_PROMPT } from '../../src/cli/runPrompt';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { cliPath, repoRoot } from '../support/paths';
import { until } from '../support/wait';
import { agentById } from './catalog';

const SCRATCH_ROOT = path.join(repoRoot, '.scratch', 'cli-restart');
const CODE_WORD = 'HERON-5821';
const only = (process.env.AGENTS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const AGENT_IDS = ['codex'].filter((id) => only.length === 0 || only.includes(id));

/** The direct children of `pid` (the agent the CLI spawned, in its own process group). */
const childrenOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);

for (const id of AGENT_IDS) {
  test(`${id}: killed mid-turn, the CLI starts it again once, reattaches the session and the model sees the first prompt again`, { timeout: 240_000 }, async (t) => {
    const agent = agentById(id)!;
    assert.ok(agent.installed(), `${id} is not installed: run scripts/setup-agents.sh`);
    const model = await startScriptedModel();
    fs.mkdirSync(SCRATCH_ROOT, { recursive: true });
    const scratch = fs.mkdtempSync(path.join(SCRATCH_ROOT, `${id}-`));
    let cli: ReturnType<typeof spawn> | undefined;
    try {
      const workspace = path.join(scratch, 'workspace');
      fs.mkdirSync(workspace);
      const spec = await agent.prepare({ scratch, modelUrl: model.url, workspace });
      const cfgFile = path.join(scratch, 'agents.json');
      fs.writeFileSync(cfgFile, JSON.stringify([{ name: id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }]));
      const args = ['--config', cfgFile, '--agent', id, '--cwd', workspace, '--state-dir', path.join(scratch, 'state'), '--approve-all', '--format', 'json', '--log-level', 'debug'];
      const prompt = `The code word is ${CODE_WORD}. Keep it.\nSCENARIO: shell {"command": "sleep 60"}`;
      const child = spawn(process.execPath, [cliPath, ...args, prompt], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] });
      cli = child;
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

      // Mid-turn: the model has asked for the command, which runs for a minute.
      await until(() => model.requests.some((r) => r.tool !== undefined), { what: 'the model to call the shell tool', timeoutMs: 90_000 });
      await until(() => /sleep 60/.test(stdout), { what: 'the tool call to show', timeoutMs: 30_000 });
      const [agentPid] = childrenOf(child.pid!);
      assert.ok(agentPid, 'no agent process under the CLI');
      const before = model.requests.length;
      process.kill(agentPid, 'SIGKILL');

      const code = await exited;
      const events = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const sessions = events.filter((e) => e.type === 'session');
      const restarts = events.filter((e) => e.type === 'restart');
      t.diagnostic(`sessions: ${JSON.stringify(sessions.map((s) => [s.sessionId, s.attach]))}`);
      assert.equal(restarts.length, 1, `restart events: ${JSON.stringify(restarts)}`);
      assert.deepEqual(restarts[0]!.exit, { code: null, signal: 'SIGKILL' });
      assert.match(
        stderr,
        /agent-host: the agent exited mid-turn \(Agent "[^"]+" exited during the turn, which is lost: Agent was killed by SIGKILL\); starting it again once and reattaching session /,
      );
      assert.equal(sessions.length, 2);
      assert.equal(sessions[1]!.sessionId, sessions[0]!.sessionId, 'a different session after the restart');
      assert.equal(sessions[1]!.requested, sessions[0]!.sessionId);
      assert.notEqual(sessions[1]!.attach, 'new');
      const result = events.at(-1)!;
      assert.deepEqual([result.type, result.outcome], ['result', 'end_turn'], stderr.slice(-3000));
      assert.equal(code, 0);

      // The reattached session carries the first prompt: the model sees it beside the request to carry on.
      const later = model.requests.slice(before).map((r) => JSON.stringify(r.body ?? null));
      assert.ok(
        later.some((b) => b.includes(CODE_WORD) && b.includes(CONTINUE_PROMPT.slice(0, 40))),
        `no request after the restart carried the first prompt: ${later.map((b) => b.slice(0, 200)).join('\n')}`,
      );
      // The run's end stops the agent at once: it ignores its stdin closing.
      assert.match(stderr, /does not exit when stdin closes: SIGTERM to its group/);
    } finally {
      if (cli?.exitCode === null) cli.kill('SIGKILL');
      await model.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
}
