/**
 * Upstream pi 0.73.1 in RPC mode (upstream dialect) against the scripted model: the common command surface.
 * Run: npx tsc -p . && node --test out/test/rpc/
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { groupAlive } from '../../src/core/agentProcess';
import { headlessRpcUi } from '../../src/rpc/extensionUi';
import { RpcCommandError } from '../../src/rpc/rpcConnection';
import { RpcSession } from '../../src/rpc/rpcSession';
import type { MessageEntity, ToolCallEntity } from '../../src/session/sessionModel';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { sleep, until } from '../support/wait';
import { memoryLogger, PI_RPC, piPackageDir, scratchDirs } from './agents';

// Under npm test (AGENT_HOST_REQUIRE_AGENTS=1) a missing agent fails the suite instead of skipping it.
const skip = PI_RPC.installed() || process.env.AGENT_HOST_REQUIRE_AGENTS === '1' ? false : 'pi-coding-agent 0.73.1 not installed (scripts/setup-agents.sh pi-acp)';
const T = { timeout: 60_000 };

function agentText(session: RpcSession): string {
  return session.model
    .messages('agent')
    .map((m: MessageEntity) => m.text)
    .join('\n');
}

describe('pi (upstream) RPC mode', { skip }, () => {
  let model: ScriptedModel;
  let session: RpcSession;
  let workspace: string;
  let scratch: string;
  const logger = memoryLogger();
  const pids: number[] = [];

  before(async () => {
    assert.ok(PI_RPC.installed(), 'pi-coding-agent is not installed: run scripts/setup-agents.sh pi-acp');
    model = await startScriptedModel();
    ({ scratch, workspace } = scratchDirs('rpc-pi'));
    // A project prompt template: get_commands must list it (and the session model must take it).
    fs.mkdirSync(path.join(workspace, '.pi', 'prompts'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.pi', 'prompts', 'review-this.md'), '---\ndescription: Review the change\n---\nReview $@ for bugs.\n');
    const config = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--session-dir', path.join(scratch, 'sessions')] });
    session = await RpcSession.start(config, { logger, cwd: workspace, rpcUi: headlessRpcUi(), requestTimeoutMs: 20_000 });
    pids.push(session.connection.process.pid!);
  });

  after(async () => {
    await session?.shutdown();
    await model?.close();
    for (const pid of pids) assert.equal(groupAlive(pid), false, `agent group ${pid} left behind`);
  });

  it('detects the upstream dialect and maps commands', () => {
    assert.equal(session.dialect.name, 'upstream');
    assert.match(session.dialect.detectedBy, /pendingMessageCount/);
    assert.equal(session.supports('branch').wire, 'fork');
    assert.equal(session.supports('get_branch_messages').wire, 'get_fork_messages');
    assert.equal(session.supports('abort_and_prompt').emulated, true);
    assert.equal(session.supports('set_todos').supported, false);
    assert.match(session.supports('set_host_tools').reason ?? '', /host tools/);
    assert.equal(typeof session.model.agentState.queuedMessageCount, 'number');
    assert.equal(session.model.models?.currentModelId, 'scripted/scripted-model');
  });

  it('streams an answer with a tool call that writes a file', T, async () => {
    const file = path.join(workspace, 'hello.txt');
    const r = await session.prompt([{ type: 'text', text: `Write it.\nSCENARIO: write {"path":"${file}","content":"hello from pi"}` }]);
    assert.equal(r.stopReason, 'end_turn');
    assert.equal(fs.readFileSync(file, 'utf8'), 'hello from pi');
    const tools = session.model.timeline().filter((e): e is ToolCallEntity => e.kind === 'tool_call');
    assert.equal(tools.length, 1);
    assert.equal(tools[0]!.status, 'completed');
    assert.equal(tools[0]!.toolKind, 'edit');
    assert.deepEqual((tools[0]!.rawInput as { path: string }).path, file);
    assert.match(JSON.stringify(tools[0]!.content), /Successfully wrote/);
    assert.match(agentText(session), /Done: wrote hello\.txt/);
    assert.equal(session.model.messages('user').length, 1, 'the user message is shown once');
    assert.equal(session.model.turn, 'idle');
    assert.equal(session.model.lastStopReason, 'end_turn');
  });

  it('a prompt with a display: the transcript shows the short label and chip, the model gets the whole text', T, async () => {
    const display = [
      { type: 'text' as const, text: 'Explain: cart_total in pricing.py' },
      { type: 'resource_link' as const, uri: 'file:///ws/pricing.py#L1-3', name: 'pricing.py:1-3' },
    ];
    const asked = model.requests.length;
    const r = await session.prompt([{ type: 'text', text: 'Explain the code long-instruction-text.\nSCENARIO: answer {"text":"explained"}' }], display);
    assert.equal(r.stopReason, 'end_turn');
    const last = session.model.messages('user').at(-1)!;
    assert.deepEqual(last.parts, display, 'the label and chip, not the instruction text');
    assert.doesNotMatch(JSON.stringify(session.model.messages('user').map((m) => m.parts)), /long-instruction-text/);
    assert.match(JSON.stringify(model.requests.slice(asked).map((q) => q.body)), /long-instruction-text/, 'the model got the instructions');
    // The next prompt without a display shows its own text again.
    await session.prompt([{ type: 'text', text: 'plain-prompt\nSCENARIO: answer {"text":"plain"}' }]);
    assert.match(session.model.messages('user').at(-1)!.text, /^plain-prompt/);
  });

  it('steers and queues a follow-up while streaming', T, async () => {
    const turn = session.prompt([{ type: 'text', text: 'Wait a bit.\nSCENARIO: shell {"command":"sleep 1.5"}' }]);
    await until(() => session.model.timeline().some((e) => e.kind === 'tool_call' && e.status === 'in_progress' && /sleep/.test(e.title)), {
      what: 'the sleep tool',
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    await session.steer('Steer now.\nSCENARIO: answer {"text":"steered-answer"}');
    await session.promptWhileStreaming('Afterwards.\nSCENARIO: answer {"text":"follow-up-answer"}', 'followUp');
    await assert.rejects(session.prompt([{ type: 'text', text: 'no' }]), /already running/);
    const r = await turn;
    assert.equal(r.stopReason, 'end_turn');
    const text = agentText(session);
    assert.ok(text.indexOf('steered-answer') >= 0, text);
    assert.ok(text.indexOf('follow-up-answer') > text.indexOf('steered-answer'), 'the follow-up comes after the steering answer');
    const users = session.model.messages('user').map((m) => m.text);
    assert.ok(users.some((t) => t.startsWith('Steer now.')) && users.some((t) => t.startsWith('Afterwards.')));
    await session.followUp('unused');
    // Idle: a follow_up is queued for the next run; the queue count shows it.
    const state = await session.getState();
    assert.equal(state.queuedMessageCount, 1);
    assert.equal(session.model.agentState.queuedMessageCount, 1);
    // Run it off so later tests start clean.
    await session.prompt([{ type: 'text', text: 'SCENARIO: answer {"text":"drained"}' }]);
    assert.equal((await session.getState()).queuedMessageCount, 0);
  });

  it('aborts a running turn: the prompt resolves cancelled', T, async () => {
    const started = Date.now();
    const turn = session.prompt([{ type: 'text', text: 'Long.\nSCENARIO: shell {"command":"sleep 20"}' }]);
    await until(() => session.model.timeline().some((e) => e.kind === 'tool_call' && e.status === 'in_progress' && /sleep 20/.test(e.title)), { what: 'sleep 20', timeoutMs: 15_000, intervalMs: 20 });
    await session.cancel();
    const r = await turn;
    assert.equal(r.stopReason, 'cancelled');
    assert.ok(Date.now() - started < 10_000, 'did not wait for the sleep');
    assert.equal(session.model.turn, 'idle');
  });

  it('aborts a prompt before its run starts: it resolves cancelled and the next prompt runs normally', T, async () => {
    const t0 = Date.now();
    const turn = session.prompt([{ type: 'text', text: 'Long.\nSCENARIO: shell {"command":"sleep 20"}' }]);
    await session.cancel();
    assert.equal((await turn).stopReason, 'cancelled');
    assert.ok(Date.now() - t0 < 10_000, 'the aborted run did not go on');
    assert.equal(session.model.turn, 'idle');
    const next = await session.prompt([{ type: 'text', text: 'SCENARIO: answer {"text":"after the early abort"}' }]);
    assert.equal(next.stopReason, 'end_turn');
    assert.match(agentText(session), /after the early abort/);
  });

  it('answers an unknown command (id-less reply) without hanging', T, async () => {
    const t0 = Date.now();
    const r = await session.raw({ type: 'definitely_not_a_command' });
    assert.equal(r.success, false);
    assert.match(r.error ?? '', /Unknown command/);
    assert.equal(r.id, undefined, 'the agent answers without our id');
    assert.ok(Date.now() - t0 < 5000);
    assert.ok(logger.lines.some((l) => /id-less definitely_not_a_command response matched/.test(l)));
    // A command the dialect table knows but this agent lacks is refused locally with the reason.
    await assert.rejects(session.setTodos([]), /not supported.*todo/);
  });

  it('survives a malformed line: the parse error is logged and the agent keeps reading', T, async () => {
    session.connection.process.child.stdin.write('{"type": "get_state", oops\n');
    await until(() => logger.lines.some((l) => /could not parse a line we sent/.test(l)), { what: 'the parse error log', timeoutMs: 5000, intervalMs: 20 });
    const state = await session.getState();
    assert.equal(typeof state.sessionId, 'string');
  });

  it('covers the rest of the command surface', T, async () => {
    const s = session;
    // Models and thinking.
    const models = await s.getAvailableModels();
    assert.deepEqual(
      models.map((m) => `${m.provider}/${m.id}`),
      ['scripted/scripted-model'],
    );
    await s.setModel('scripted/scripted-model');
    assert.equal((await s.getState()).model?.id, 'scripted-model');
    await assert.rejects(s.setModelById('scripted', 'nope'), (e: unknown) => e instanceof RpcCommandError && /Model not found/.test(e.message));
    assert.equal(await s.cycleModel(), null, 'one model: nothing to cycle to');
    await s.setThinkingLevel('off');
    assert.equal((await s.getState()).thinkingLevel, 'off');
    assert.equal(await s.cycleThinkingLevel(), null, 'a non-reasoning model has no levels to cycle');
    // Queue modes and switches.
    await s.setSteeringMode('all');
    await s.setFollowUpMode('all');
    let st = await s.getState();
    assert.equal(st.steeringMode, 'all');
    assert.equal(st.followUpMode, 'all');
    await s.setSteeringMode('one-at-a-time');
    await s.setFollowUpMode('one-at-a-time');
    await assert.rejects(s.setInterruptMode('immediate'), /not supported.*interrupt/);
    await s.setAutoCompaction(false);
    assert.equal((await s.getState()).autoCompactionEnabled, false);
    await s.setAutoCompaction(true);
    await s.setAutoRetry(false);
    await s.setAutoRetry(true);
    await s.abortRetry();
    assert.ok((s.model.configOptions as { id: string }[]).some((o) => o.id === 'steering_mode'));
    // Shell.
    const b = await s.bash('echo rpc-bash-ok');
    assert.match(String(b.output), /rpc-bash-ok/);
    assert.equal(b.exitCode, 0);
    const longBash = s.bash('sleep 20; echo never');
    await sleep(300);
    await s.abortBash();
    const aborted = await longBash;
    assert.equal(aborted.cancelled, true);
    // Session data.
    const stats = await s.getSessionStats();
    assert.ok((stats.userMessages as number) >= 3);
    assert.ok(s.model.usage && s.model.usage.size === 128000);
    await s.prompt([{ type: 'text', text: 'SCENARIO: answer {"text":"last words"}' }]);
    assert.equal(await s.getLastAssistantText(), 'last words');
    const messages = await s.getMessages();
    assert.ok(messages.length >= 6);
    await assert.rejects(s.setSessionName('   '), /Session name cannot be empty/);
    await s.setSessionName('RPC test session');
    assert.equal(s.model.info.title, 'RPC test session');
    assert.equal((await s.getState()).sessionName, 'RPC test session');
    const htmlPath = await s.exportHtml(path.join(scratch, 'export.html'));
    assert.ok(fs.readFileSync(htmlPath, 'utf8').includes('<html'));
    // Branching (upstream: fork / get_fork_messages).
    const branchable = await s.getBranchMessages();
    assert.ok(branchable.length >= 2, JSON.stringify(branchable));
    const first = branchable[0]!;
    const fileBefore = (await s.getState()).sessionFile;
    const br = await s.branch(first.entryId);
    assert.equal(br.cancelled, false);
    assert.match(br.text, /Write it\./);
    st = await s.getState();
    assert.notEqual(st.sessionFile, fileBefore, 'a fork is a new session file');
    // Switching back to the first session file.
    const sw = await s.switchSession(fileBefore!);
    assert.equal(sw.cancelled, false);
    assert.equal((await s.getState()).sessionFile, fileBefore);
    // New session, then compaction of a short conversation.
    await s.prompt([{ type: 'text', text: 'SCENARIO: answer {"text":"before compaction"}' }]);
    const compacted = (await s.compact('Keep it short')) as { summary?: string; tokensBefore?: number };
    assert.equal(typeof compacted.summary, 'string');
    const ns = await s.newSession();
    assert.equal(ns.cancelled, false);
    assert.equal((await s.getState()).messageCount, 0);
    const cmds = await s.getCommands();
    const template = cmds.find((c) => c.name === 'review-this');
    assert.ok(template, `the project's prompt template is listed: ${JSON.stringify(cmds)}`);
    assert.equal(template.description, 'Review the change');
    assert.deepEqual(
      s.model.commands.find((c) => c.name === 'review-this'),
      { name: 'review-this', description: 'Review the change' },
      'the session model took the commands',
    );
  });
});

describe('pi (upstream) retries and compaction', { skip }, () => {
  let model: ScriptedModel;
  let session: RpcSession;
  const pids: number[] = [];
  const notices = () => session.model.timeline().flatMap((e) => (e.kind === 'notice' ? [`${e.severity}: ${e.title}${e.detail ? ` (${e.detail})` : ''}`] : []));

  before(async () => {
    model = await startScriptedModel();
    const { scratch, workspace } = scratchDirs('rpc-pi-retry');
    const config = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--no-session'] });
    // A window of 17,000 tokens: past pi's reserve of 16,384, so a conversation of a few turns is compacted.
    const models = path.join(config.env!.PI_CODING_AGENT_DIR!, 'models.json');
    const cfg = JSON.parse(fs.readFileSync(models, 'utf8'));
    cfg.providers.scripted.models[0].contextWindow = 17_000;
    fs.writeFileSync(models, JSON.stringify(cfg));
    session = await RpcSession.start(config, { logger: memoryLogger(), cwd: workspace, rpcUi: headlessRpcUi(), requestTimeoutMs: 20_000 });
    pids.push(session.connection.process.pid!);
  });

  after(async () => {
    await session?.shutdown();
    await model?.close();
    for (const pid of pids) assert.equal(groupAlive(pid), false, `agent group ${pid} left behind`);
  });

  it('a transient model error pi retries by itself: the turn goes on and ends with the answer, never "failed"', T, async () => {
    // Four 503s: the model client's own two retries take three, pi's auto-retry (after 2 s) the fourth.
    const r = await session.prompt([{ type: 'text', text: 'SCENARIO: flaky {"fail": 4, "status": 503, "text": "Answered after a retry."}' }]);
    assert.equal(r.stopReason, 'end_turn');
    assert.match(agentText(session), /Answered after a retry\./);
    assert.deepEqual(
      model.requests.map((q) => q.decision),
      ['flaky-error:503', 'flaky-error:503', 'flaky-error:503', 'flaky-error:503', 'answer'],
    );
    const said = notices();
    assert.ok(
      said.some((n) => /^warning: Retrying after an error \(attempt 1\/3, in 2 s\) \(503 scripted model: overloaded/.test(n)),
      said.join('\n'),
    );
    await until(() => notices().includes('info: Retry succeeded (attempt 1)') || undefined, { what: 'the retry succeeded notice', timeoutMs: 5000, intervalMs: 20 });
    assert.ok(!said.some((n) => /The turn failed/.test(n)), `a retried turn said it failed: ${said.join('\n')}`);
    assert.equal(session.model.turn, 'idle');
  });

  it('compaction after a run: the next prompt waits for it, shown once, never a second compaction that fails', T, async () => {
    const from = session.model.timeline().length;
    // Each prompt right after the last turn ended (a queued prompt does the same).
    for (const text of ['one', 'two', 'three']) {
      const r = await session.prompt([{ type: 'text', text: `SCENARIO: answer {"text": "compacted ${text}"}` }]);
      assert.equal(r.stopReason, 'end_turn');
    }
    await until(() => (session.model.agentState.isCompacting === true ? undefined : true), { what: 'the last compaction to end', timeoutMs: 10_000, intervalMs: 20 });
    const said = session.model
      .timeline()
      .slice(from)
      .flatMap((e) => (e.kind === 'notice' ? [`${e.severity}: ${e.title}`] : []));
    assert.ok(said.includes('info: Context compacted'), said.join('\n'));
    assert.ok(!said.some((n) => /Compaction failed/.test(n)), said.join('\n'));
    // No compaction started while another ran (one started after the last test's turn may end first here).
    let open = false;
    for (const n of said) {
      if (n === 'info: Compacting the context…') {
        assert.equal(open, false, `a compaction started inside another: ${said.join('\n')}`);
        open = true;
      } else if (n === 'info: Context compacted') open = false;
    }
    assert.match(agentText(session), /compacted three/);
  });
});

describe('pi (upstream) extension UI', { skip }, () => {
  it('answers every extension UI method of the rpc-demo extension', { timeout: 60_000 }, async () => {
    assert.ok(PI_RPC.installed(), 'pi-coding-agent is not installed: run scripts/setup-agents.sh pi-acp');
    const model = await startScriptedModel();
    const { scratch, workspace } = scratchDirs('rpc-pi-ui');
    const ext = path.join(piPackageDir(), 'examples', 'extensions', 'rpc-demo.ts');
    const config = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--no-session', '-e', ext] });
    const ui = headlessRpcUi({ inputs: { 'Enter a value': 'typed by the host' }, editorText: (r) => `${r.prefill ?? ''}\nLine 4` });
    const logger = memoryLogger();
    const session = await RpcSession.start(config, { logger, cwd: workspace, rpcUi: ui });
    const pid = session.connection.process.pid!;
    try {
      // session_start: setTitle, setWidget, setStatus (may arrive before the first response).
      await until(() => ui.events.some((e) => e.method === 'setWidget'), { what: 'setWidget', timeoutMs: 10_000, intervalMs: 20 });
      assert.ok(ui.events.some((e) => e.method === 'setTitle'));
      assert.deepEqual(ui.widgets.get('rpc-demo'), ['--- RPC Extension UI Demo ---', 'Loaded and ready.']);
      // input (answered) → notify
      await session.prompt([{ type: 'text', text: '/rpc-input' }]);
      assert.ok(ui.events.some((e) => e.method === 'input' && e.answer === 'typed by the host'));
      await until(() => ui.events.some((e) => e.method === 'notify' && /You entered: typed by the host/.test(String(e.request.message))), { what: 'notify', timeoutMs: 5000, intervalMs: 20 });
      // editor
      await session.prompt([{ type: 'text', text: '/rpc-editor' }]);
      await until(() => ui.events.some((e) => e.method === 'notify' && /Editor submitted \(4 lines\)/.test(String(e.request.message))), { what: 'editor notify', timeoutMs: 5000, intervalMs: 20 });
      // set_editor_text
      await session.prompt([{ type: 'text', text: '/rpc-prefill' }]);
      assert.ok(ui.events.some((e) => e.method === 'setEditorText' && /rpc-demo extension/.test(String(e.request.text))));
      assert.match(String(session.model.agentState.editorText), /rpc-demo extension/);
      // select on a dangerous command (the headless UI picks the first option, "Allow")
      const r = await session.prompt([{ type: 'text', text: `SCENARIO: shell {"command":"rm -rf ${path.join(workspace, 'nothing-here')}"}` }]);
      assert.equal(r.stopReason, 'end_turn');
      const sel = ui.events.find((e) => e.method === 'select');
      assert.ok(sel, 'select asked');
      assert.deepEqual(sel.request.options, ['Allow', 'Block']);
      assert.equal(sel.answer, 'Allow');
      assert.ok(ui.events.some((e) => e.method === 'setStatus' && /Turn \d+ done/.test(String(e.request.text))));
      // Each dialog's question and answer stay in the transcript.
      const asked = session.model.timeline().flatMap((e) => (e.kind === 'notice' && e.title.includes(' asked: ') ? [`${e.title} → ${e.detail ?? ''}`] : []));
      assert.ok(
        asked.some((n) => / asked: .+ → Answer: typed by the host$/.test(n)),
        `the input's question and answer are not in the transcript: ${JSON.stringify(asked)}`,
      );
      assert.ok(
        asked.some((n) => / asked: .+ → Answer: Allow$/.test(n)),
        `the select's question and answer are not in the transcript: ${JSON.stringify(asked)}`,
      );
      // confirm on new_session
      const ns = await session.newSession();
      assert.equal(ns.cancelled, false);
      assert.ok(ui.events.some((e) => e.method === 'confirm' && e.answer === true));
      // dismissed input → {cancelled:true} → the extension says so
      ui.events.length = 0;
      delete (ui as unknown as { inputs?: unknown }).inputs;
      const ui2 = headlessRpcUi();
      Object.assign(ui, { input: ui2.input });
      await session.prompt([{ type: 'text', text: '/rpc-input' }]);
      await until(() => ui.events.some((e) => e.method === 'notify' && /Input cancelled/.test(String(e.request.message))), { what: 'cancel notify', timeoutMs: 5000, intervalMs: 20 });
      // notices in the model too
      assert.ok(session.model.timeline().some((e) => e.kind === 'notice' && /Editor submitted/.test(e.title)));
    } finally {
      await session.shutdown();
      await model.close();
    }
    assert.equal(groupAlive(pid), false);
  });
});
