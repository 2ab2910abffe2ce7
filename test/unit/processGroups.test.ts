/**
 * Cleanup that cannot be dodged (security review 2, finding 9): a process started for an agent that leaves
 * its group with `setsid -f`, wipes its environment with `env -i` and is re-parented to init is still ended
 * when the host stops the terminal command, the agent, or itself. With the real spawn helpers and a real
 * process tree, in both ways the host finds such a process: its cgroup (where the host may make one; on
 * this machine it is probed and said in the test's name) and, with AGENT_HOST_CGROUP=off, the marker handle.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { AgentProcess } from '../../src/core/agentProcess';
import { silentLogger } from '../../src/core/log';
import { processAlive } from '../../src/core/processGroups';
import { TerminalService } from '../../src/host/terminalService';
import { cgroupsHere } from '../support/cgroups';
import { runIntruder } from '../support/intruderCli';
import { scratchDir } from '../support/paths';
import { until } from '../support/wait';

const dir = scratchDir('strays');
const strays: number[] = [];
after(() => {
  for (const pid of strays) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env.AGENT_HOST_CGROUP;
});

const withCgroup = cgroupsHere(dir);

let n = 0;
/** argv that leaves a `sleep 300` behind in a new session with an empty environment; its pid lands in the returned file. */
function escapee(extra = ''): { argv: string[]; pidFile: string } {
  const pidFile = path.join(dir, `stray-${++n}.pid`);
  return { argv: ['setsid', '-f', 'env', '-i', 'sh', '-c', `echo $$ > "$0"; exec sleep 300${extra}`, pidFile], pidFile };
}
async function strayPid(pidFile: string): Promise<number> {
  const text = await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim(), { what: `the stray's pid in ${pidFile}`, timeoutMs: 10_000, intervalMs: 20 });
  const pid = Number(text);
  strays.push(pid);
  return pid;
}
const gone = (pid: number) => until(() => !processAlive(pid), { what: `process ${pid} to be gone`, timeoutMs: 5_000, intervalMs: 20 });
/** A stray nothing but a cgroup can find: gone with one; without, the documented limit (it runs on; ended here). */
async function goneOnlyWithCgroup(pid: number, cgroup: boolean): Promise<void> {
  if (cgroup) return void (await gone(pid));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(processAlive(pid), true, 'found without a cgroup: update the documented limit');
  process.kill(pid, 'SIGKILL');
}

for (const mode of ['cgroup', 'off'] as const) {
  describe(`setsid -f env -i strays (${mode === 'cgroup' ? `cgroup: ${withCgroup ? 'made here' : 'not allowed here, the other signals'}` : 'AGENT_HOST_CGROUP=off'})`, () => {
    const setMode = () => {
      if (mode === 'off') process.env.AGENT_HOST_CGROUP = 'off';
    };

    it("a terminal command's stray is ended when the command is released", async () => {
      setMode();
      const terminals = new TerminalService(() => [dir]);
      const { argv, pidFile } = escapee(' </dev/null >/dev/null 2>&1');
      const { terminalId } = await terminals.create({ command: argv[0]!, args: argv.slice(1) });
      const pid = await strayPid(pidFile);
      assert.equal(processAlive(pid), true);
      await terminals.waitForExit(terminalId);
      await terminals.release(terminalId);
      await gone(pid);
    });

    // A node agent passes its children no handle but stdio: only the cgroup finds what they start with env -i.
    it("an agent's stray is ended when the agent is stopped (without a cgroup, only if it kept the marker variable)", async () => {
      setMode();
      const { argv, pidFile } = escapee();
      const script = `require('child_process').spawn(${JSON.stringify(argv[0])}, ${JSON.stringify(argv.slice(1))}, { stdio: 'ignore' }); process.stdin.resume();`;
      const agent = AgentProcess.spawn({ command: process.execPath, args: ['-e', script], cwd: dir, env: { PATH: process.env.PATH ?? '' }, inheritEnv: false }, silentLogger);
      const pid = await strayPid(pidFile);
      await agent.shutdown({ termAfterMs: 100, killAfterMs: 1000 });
      await goneOnlyWithCgroup(pid, mode === 'cgroup' && withCgroup);
    });

    it('a stray that also closes every handle it got is ended only through a cgroup', async () => {
      setMode();
      const terminals = new TerminalService(() => [dir]);
      const { argv, pidFile } = escapee(' </dev/null >/dev/null 2>&1 3>&-');
      const { terminalId } = await terminals.create({ command: argv[0]!, args: argv.slice(1) });
      const pid = await strayPid(pidFile);
      await terminals.waitForExit(terminalId);
      await terminals.release(terminalId);
      await goneOnlyWithCgroup(pid, mode === 'cgroup' && withCgroup);
    });

    it("a stray of a command the agent never released is ended when the CLI exits (the host's exit hook)", async () => {
      const ws = path.join(dir, `ws-${mode}`);
      fs.mkdirSync(ws);
      const { argv, pidFile } = escapee(' </dev/null >/dev/null 2>&1');
      // Unsandboxed: in the sandbox the stray's pid is its namespace's, and the namespace ends it with the agent.
      const r = runIntruder(ws, [{ terminal: { command: argv[0], args: argv.slice(1) }, keep: true }], ['--approve-all', '--sandbox', 'off'], {
        cliEnv: mode === 'off' ? { AGENT_HOST_CGROUP: 'off' } : {},
      });
      assert.equal(r.steps.length, 1, r.stderr);
      const pid = await strayPid(pidFile);
      await gone(pid);
    });
  });
}

it('a command that cannot start is still the spawn error it was (the host stepping into a cgroup does not hide it)', async () => {
  const agent = AgentProcess.spawn({ command: 'no-such-agent-host-command', cwd: dir, env: { PATH: '/usr/bin:/bin' }, inheritEnv: false }, silentLogger);
  const exit = await agent.exited;
  assert.match(exit.spawnError ?? '', /command not found: "no-such-agent-host-command"/);
});
