/// <reference types="mocha" />
/**
 * Sessions that survive the agent's process, in the real extension host: real agents (opencode, codex,
 * claude) on the scripted model; a first turn, the agent's process group killed with SIGKILL, the manager
 * restarts it by itself (backoff) and reattaches the session (resume → load → new, said in the transcript);
 * the second prompt reaches a model that sees the first prompt again. And a crash loop: an agent that exits
 * at once is spawned three times, then the breaker opens and says why — no fourth spawn.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentHostApi } from '../../../src/extension';
import type { NoticeEntity } from '../../../src/session/sessionModel';
import { agentById } from '../../agents/catalog';
import { startScriptedModel, type ScriptedModel } from '../../../src/scriptedModel/scriptedModel';
import { stillAbsent, until } from '../../support/wait';

const CODE_WORD = 'HERON-2207';

function folder(): string {
  const f = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(f, 'no workspace folder is open');
  return f;
}

/** Whether a file called `name` exists anywhere under `dir`. */
/** Whether a file called `name` under `dir` holds `text` (a session file written up to that point). */
function fileNamedHolds(dir: string, name: string, text: string): boolean {
  try {
    const entry = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).find((e) => e.isFile() && e.name === name);
    return !!entry && fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8').includes(text);
  } catch {
    return false;
  }
}

/** The process-group leader whose environment holds `marker` (the agent we spawned in its own group). */
function groupLeaderWith(marker: string): number | undefined {
  return groupLeadersWith(marker)[0];
}

/** Live processes running `command` (argv[0]) whose environment holds `marker`. */
function processesOf(command: string, marker: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')[0] !== command) continue;
      if (!fs.readFileSync(`/proc/${name}/environ`, 'utf8').includes(marker)) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z') found.push(Number(name));
    } catch {
      /* gone or not ours */
    }
  }
  return found;
}

/** Every live process-group leader whose environment holds `marker`. */
function groupLeadersWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${name}/environ`, 'utf8');
      if (!environ.includes(marker)) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && Number(fields[2]) === Number(name)) found.push(Number(name));
    } catch {
      /* gone or not ours */
    }
  }
  return found;
}

describe('Sessions survive the agent: crash → restart → reattach; the crash breaker', () => {
  let api: AgentHostApi;
  let savedAgents: unknown;
  const config = () => vscode.workspace.getConfiguration('agentHost');

  before(async () => {
    const ext = vscode.extensions.getExtension<AgentHostApi>('agent-host.agent-host');
    assert.ok(ext);
    api = ext.isActive ? ext.exports : await ext.activate();
    savedAgents = config().inspect('agents')?.workspaceValue;
  });

  after(async () => {
    await api.manager.stop();
    await config().update('agents', savedAgents, vscode.ConfigurationTarget.Workspace);
  });

  for (const id of ['opencode', 'codex', 'claude']) {
    it(`${id}: SIGKILL mid-session → restarted and reattached; the model sees the first prompt in the second turn`, async function () {
      this.timeout(180_000);
      const agent = agentById(id)!;
      assert.ok(agent.installed(), `${id} is not installed`);
      let model: ScriptedModel | undefined;
      const scratch = fs.mkdtempSync(path.join(path.dirname(folder()), `reattach-${id}-`));
      try {
        model = await startScriptedModel();
        const spec = await agent.prepare({ scratch, modelUrl: model.url, workspace: folder() });
        const name = `reattach-${id}`;
        const others = api.manager.agents().filter((a) => a.name !== name);
        await config().update('agents', [...others, { name, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }], vscode.ConfigurationTarget.Workspace);
        await api.manager.stop();
        api.manager.select(name);
        const first = await api.manager.restart({ fresh: true });
        assert.equal(first.attach.how, 'new');
        assert.equal(await api.manager.prompt(`The code word is ${CODE_WORD}.\nSCENARIO: answer {"text": "Noted."}`), 'end_turn');
        // claude-agent-acp writes its transcript (CLAUDE_CONFIG_DIR/projects/…/<id>.jsonl) after the turn has
        // ended: a kill before that loses the session (seen once in CI: "Resource not found"). The test is about
        // a crash after the session was kept, so it waits until claude has kept it — the answer too (the file is
        // there from the prompt on: a kill between the two lost it in CI once more).
        if (id === 'claude')
          await until(() => fileNamedHolds(spec.env.CLAUDE_CONFIG_DIR!, `${first.sessionId}.jsonl`, 'Noted.'), { what: 'claude to write the turn into its session file', timeoutMs: 15_000 });

        // Killed from outside, the whole group at once.
        const leader = groupLeaderWith(scratch);
        assert.ok(leader, 'the agent process was not found');
        process.kill(-leader, 'SIGKILL');
        await until(() => api.manager.current !== first, { what: 'the agent to be seen gone' });
        assert.match(api.manager.error ?? '', /starting it again in 1 s/);

        const second = await until(() => (api.manager.state === 'ready' && api.manager.current !== first ? api.manager.current : undefined), { what: 'the restart', timeoutMs: 60_000 });
        assert.equal(second.attach.requested, first.sessionId);
        assert.notEqual(second.attach.how, 'new', `not reattached: ${second.attach.detail}`);
        assert.equal(second.sessionId, first.sessionId);
        const notice = second.model.timeline().find((e): e is NoticeEntity => e.kind === 'notice' && (e.detail ?? '').includes(first.sessionId));
        assert.match(notice?.title ?? '', /^Session (resumed|loaded)$/, 'the transcript says how the session came back');

        const before = model.requests.length;
        assert.equal(await api.manager.prompt('What was the code word?\nSCENARIO: answer {"text": "Said before."}'), 'end_turn');
        const bodies = model.requests.slice(before).map((r) => JSON.stringify(r.body ?? null));
        assert.ok(
          bodies.some((b) => b.includes(CODE_WORD) && b.includes('What was the code word?')),
          'the model did not see the first prompt again',
        );
      } finally {
        await api.manager.stop();
        await model?.close();
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    });
  }

  it('two tabs with one agent share its process (ACP sessions on one connection); closing a tab keeps it for the other', async function () {
    this.timeout(120_000);
    const agent = agentById('codex')!;
    assert.ok(agent.installed(), 'codex is not installed');
    const model = await startScriptedModel();
    const scratch = fs.mkdtempSync(path.join(path.dirname(folder()), 'shared-codex-'));
    try {
      const spec = await agent.prepare({ scratch, modelUrl: model.url, workspace: folder() });
      const name = 'shared-codex';
      const others = api.manager.agents().filter((a) => a.name !== name);
      await config().update('agents', [...others, { name, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }], vscode.ConfigurationTarget.Workspace);
      await api.manager.stop();
      api.manager.select(name);
      const first = await api.manager.restart({ fresh: true });
      const tab1 = api.manager.activeTabId;
      assert.equal(await api.manager.prompt('ALPHA-ONE\nSCENARIO: answer {"text": "alpha"}'), 'end_turn');
      const tab2 = api.manager.newTab(name);
      const second = await api.manager.ensureStarted();
      assert.notEqual(second.sessionId, first.sessionId);
      assert.equal(await api.manager.prompt('BRAVO-TWO\nSCENARIO: answer {"text": "bravo"}'), 'end_turn');
      const agentProcs = () => processesOf(spec.command, scratch);
      assert.equal(agentProcs().length, 1, 'one process for both tabs');
      const bravo = model.requests.map((r) => JSON.stringify(r.body ?? null)).filter((b) => b.includes('BRAVO-TWO'));
      assert.ok(bravo.length > 0 && bravo.every((b) => !b.includes('ALPHA-ONE')), 'the second session saw the first');
      // Closing tab 2 leaves the process to tab 1, which still answers.
      const [agentPid] = agentProcs();
      await api.manager.closeTab(tab2);
      assert.equal(api.manager.activeTabId, tab1);
      assert.deepEqual(agentProcs(), [agentPid], 'the shared process went with the tab');
      assert.equal(await api.manager.prompt('ALPHA-AGAIN\nSCENARIO: answer {"text": "alpha again"}'), 'end_turn');
      // The last session lets go: the process ends.
      await api.manager.stop();
      await until(() => agentProcs().length === 0, { what: 'the process to end', timeoutMs: 15_000 });
    } finally {
      await api.manager.stop();
      await model.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('a crash loop: the first exit is said with its stderr; three spawns (1 s, 2 s backoff), then the breaker says why; no fourth spawn', async function () {
    this.timeout(60_000);
    // In the temp folder: the agent runs sandboxed (the default), which lets it write there.
    const spawns = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'crashloop-')), 'spawns.log');
    const script = `require('fs').appendFileSync(process.env.SPAWN_LOG, 'x'); process.stderr.write('boom at start\\n'); process.exit(3)`;
    const name = 'crash-loop';
    const others = api.manager.agents().filter((a) => a.name !== name);
    await config().update(
      'agents',
      [...others, { name, command: process.execPath, args: ['-e', script], env: { ELECTRON_RUN_AS_NODE: '1', SPAWN_LOG: spawns } }],
      vscode.ConfigurationTarget.Workspace,
    );
    await api.manager.stop();
    api.manager.select(name);
    await assert.rejects(api.manager.restart({ fresh: true }));
    // The first exit already says why, as the chat's notice shows it: the exit code, then the stderr tail.
    assert.match(api.manager.error ?? '', /^Agent "crash-loop" exited \(Agent exited with code 3\); starting it again in 1 s\n--- last stderr ---\nboom at start$/);
    const message = await until(() => (/crashed 3 times/.test(api.manager.error ?? '') ? api.manager.error : undefined), { what: 'the breaker', timeoutMs: 20_000 });
    assert.match(message!, /within 60 s, so it is not started again\. Last exit: .*code 3/s);
    assert.match(message!, /boom at start/);
    // The breaker's point is that nothing happens: hold 5 s (beyond the 4 s backoff a fourth spawn would wait),
    // failing the moment one shows up.
    await stillAbsent(() => fs.readFileSync(spawns, 'utf8') !== 'xxx', 5000, 'a fourth spawn after the breaker opened');
    assert.equal(fs.readFileSync(spawns, 'utf8'), 'xxx', 'spawned again after the breaker opened');
    fs.rmSync(path.dirname(spawns), { recursive: true, force: true });
    assert.equal(api.manager.state, 'error');
  });
});
