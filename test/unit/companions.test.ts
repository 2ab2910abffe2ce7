/**
 * A preset's agent that starts another program itself (pi-acp starts `pi`), through the real start path (the
 * CLI, `dist/cli.js`, which starts agents as the extension does): without that program the start fails at once
 * with "command not found: pi" and what installs it — never the agent's own "sign in" (pi-acp asks to sign in
 * before it looks for pi) — and the agent is not run; with it (PI_ACP_PI_COMMAND, as Add Agent installs it)
 * a whole turn runs against the scripted model.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ACP_LAUNCH, agentById, baseEnv, piBin, writePiConfig } from '../agents/catalog';
import { type ScriptedModel, startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const root = scratchDir('companions');
let model: ScriptedModel;
before(async () => {
  model = await startScriptedModel();
});
after(async () => {
  await model.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** PATH without any folder that has `pi` or `pi-acp` in it. */
const pathWithoutPi = () =>
  (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => d && !fs.existsSync(path.join(d, 'pi')) && !fs.existsSync(path.join(d, 'pi-acp')))
    .join(path.delimiter);

/** The CLI with one configured agent (written as settings would hold it), in a sandboxed HOME without pi's sign-in; async, as the scripted model answers in this process. */
function cli(name: string, agent: Record<string, unknown>, prompt: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const dir = fs.mkdtempSync(path.join(root, `${name}-`));
  const env = { ...baseEnv(path.join(dir, 'sandbox')), PATH: pathWithoutPi() };
  const config = path.join(dir, 'agents.json');
  fs.writeFileSync(config, JSON.stringify([{ name, ...agent }]));
  const work = path.join(dir, 'work');
  fs.mkdirSync(work);
  const args = [cliPath, '--config', config, '--agent', name, '--cwd', work, '--state-dir', path.join(dir, 'state'), prompt];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8', env, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('a preset agent without the program it starts', () => {
  it('pi-acp without pi: "command not found: pi" and what installs it, not a sign-in; the agent never runs', async () => {
    const started = path.join(root, 'hostile-started');
    const r = await cli('pi (ACP)', { command: process.execPath, args: [hostileAgent], env: { HOSTILE_STARTED: started }, preset: 'pi-acp' }, 'hello');
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /"pi \(ACP\)" cannot start: command not found: pi\n/);
    assert.match(r.stderr, /pi-acp runs pi \(@mariozechner\/pi-coding-agent 0\.73\.1\): pi is not on PATH \(.*\) and PI_ACP_PI_COMMAND is not set\./);
    assert.match(r.stderr, /"Atrium: Add Agent…" → pi \(ACP\) installs both, pinned/);
    assert.equal(fs.existsSync(started), false, 'the agent was started');
  });

  it('the real pi-acp 0.0.24 without pi and without pi sign-in: said as "command not found: pi", never as "sign in"', async () => {
    const piAcp = agentById('pi-acp')!;
    assert.ok(piAcp.installed(), 'pi-acp must be installed: scripts/setup-agents.sh pi-acp');
    const launch = ACP_LAUNCH['pi-acp']!();
    const r = await cli('pi-acp', { command: launch.command, args: launch.args, env: { PI_CODING_AGENT_DIR: path.join(root, 'no-pi-config') }, preset: 'pi-acp' }, 'hello');
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /command not found: pi\n/);
    assert.doesNotMatch(r.stderr, /sign in/i);
  });

  it('PI_ACP_PI_COMMAND naming no program: said with the variable', async () => {
    const r = await cli('pi (ACP)', { command: process.execPath, args: [hostileAgent], env: { PI_ACP_PI_COMMAND: path.join(root, 'no-such', 'pi') }, preset: 'pi-acp' }, 'hello');
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /command not found: .*no-such\/pi \(from PI_ACP_PI_COMMAND\)\n/);
  });

  it('with pi named in PI_ACP_PI_COMMAND (as Add Agent installs it), the real pi-acp runs a whole turn', async () => {
    const launch = ACP_LAUNCH['pi-acp']!();
    const piDir = path.join(root, 'pi-config');
    writePiConfig(piDir, model.url);
    const env = { PI_ACP_PI_COMMAND: piBin(), PI_CODING_AGENT_DIR: piDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' };
    const r = await cli('pi-acp', { command: launch.command, args: launch.args, env, preset: 'pi-acp' }, `SCENARIO: answer ${JSON.stringify({ text: 'pi runs beside pi-acp.' })}`);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /pi runs beside pi-acp\./);
  });
});
