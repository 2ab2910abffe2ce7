/**
 * The agent matrix: every pinned real agent, driven by Atrium's own ACP client and by its
 * headless CLI, against the scripted model. Asserts on files on disk and on the frames exchanged.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { plainHost } from '../support/plainHost';
import { AcpSession } from '../../src/acp/acpSession';
import { streamLogger } from '../../src/core/log';
import type { AgentConfig } from '../../src/session/agentConfig';
import { policyDecider, type PermissionDecider, type PolicyName } from '../../src/session/permissions';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';
import { AGENTS, type AgentFixture } from './catalog';

type Frame = { dir: 'in' | 'out'; at: number; msg: Record<string, unknown> };
type Row = { agent: string; case: string; ok: boolean; ms: number; initializeMs?: number; stopReason?: string; note?: string };

const SCRATCH_ROOT = path.join(repoRoot, '.scratch', 'matrix');
const rows: Row[] = [];
const only = (process.env.AGENTS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const requireAll = process.env.AGENT_HOST_REQUIRE_AGENTS === '1';
const selected = AGENTS.filter((a) => only.length === 0 || only.includes(a.id));

const scenario = (name: string, args: object) => `Please do what the scenario says.\nSCENARIO: ${name} ${JSON.stringify(args)}`;

async function prepared(agent: AgentFixture, model: ScriptedModel, name: string) {
  fs.mkdirSync(SCRATCH_ROOT, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(SCRATCH_ROOT, `${agent.id}-${name}-`));
  const workspace = path.join(scratch, 'workspace');
  fs.mkdirSync(workspace);
  const spec = await agent.prepare({ scratch, modelUrl: model.url, workspace });
  const config: AgentConfig = { name: agent.id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false };
  return { scratch, workspace, config };
}

/** Runs one prompt through AcpSession, recording every frame. */
/** `dialog-cancel`: the person closes the permission dialog (Cancel, Escape), which stops the turn. */
async function runTurn(agent: AgentFixture, name: string, policy: PolicyName | 'dialog-cancel', prompt: (ws: string) => string, setup?: (ws: string) => void) {
  const model = await startScriptedModel();
  const { scratch, workspace, config } = await prepared(agent, model, name);
  setup?.(workspace);
  const frames: Frame[] = [];
  const asked: string[][] = [];
  const base = policyDecider(policy === 'dialog-cancel' ? 'deny-all' : policy);
  const decide: PermissionDecider = async (req, signal) => {
    asked.push(req.options.map((o) => o.optionId));
    if (policy === 'dialog-cancel') return { outcome: 'cancelled', by: 'user' };
    return base(req, signal);
  };
  const logLines: string[] = [];
  const t0 = Date.now();
  const session = await AcpSession.start(config, {
    logger: streamLogger((l) => logLines.push(l), 'debug'),
    cwd: workspace,
    ...plainHost(workspace),
    decidePermission: decide,
    requestTimeoutMs: 60_000,
    frameTap: (dir, msg) => frames.push({ dir, at: Date.now(), msg: msg as Record<string, unknown> }),
  });
  const initOut = frames.find((f) => f.dir === 'out' && f.msg.method === 'initialize');
  const initIn = frames.find((f) => f.dir === 'in' && f.msg.id === initOut?.msg.id && 'result' in f.msg);
  const initializeMs = initIn ? initIn.at - t0 : undefined;
  let stopReason: string;
  try {
    stopReason = (await session.prompt([{ type: 'text', text: prompt(workspace) }])).stopReason;
  } finally {
    await session.shutdown();
    await model.close();
  }
  const cleanup = () => fs.rmSync(scratch, { recursive: true, force: true });
  return { workspace, frames, asked, stopReason, session, model, initializeMs, ms: Date.now() - t0, logLines, cleanup };
}

/**
 * A write the person refuses (`deny-all`, or `dialog-cancel`): a new file — or, for agents that cannot create
 * files through client fs, an edit of an existing one, so they do ask. `untouched` asserts the refusal held.
 */
async function refusedWrite(agent: AgentFixture, name: string, policy: 'deny-all' | 'dialog-cancel', file: string) {
  const original = 'keep = me\n';
  const editInstead = agent.quirks.createViaClientFsBroken;
  const run = editInstead
    ? await runTurn(
        agent,
        name,
        policy,
        (ws) => scenario('edit', { path: path.join(ws, file), old: 'keep', new: 'lose' }),
        (ws) => fs.writeFileSync(path.join(ws, file), original),
      )
    : await runTurn(agent, name, policy, (ws) => scenario('write', { path: path.join(ws, file), content: 'must not exist\n' }));
  const target = path.join(run.workspace, file);
  const untouched = () => (editInstead ? assert.equal(fs.readFileSync(target, 'utf8'), original) : assert.equal(fs.existsSync(target), false));
  return { run, untouched };
}

function agentText(run: { session: AcpSession }): string {
  return run.session.model
    .messages('agent')
    .map((m) => m.text)
    .join('');
}

describe('agent matrix: real agents through Atrium', { concurrency: false }, () => {
  after(() => {
    if (!rows.length) return;
    const out = path.join(repoRoot, 'test-artifacts', 'agents-matrix.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(rows, null, 2)}\n`);
    process.stdout.write(
      `\nagent matrix (${path.relative(repoRoot, out)})\n${rows
        .map(
          (r) =>
            `${r.ok ? 'ok  ' : 'FAIL'} ${r.agent.padEnd(9)} ${r.case.padEnd(12)} init=${String(r.initializeMs ?? '-').padStart(5)} ms turn=${String(r.ms).padStart(6)} ms stop=${r.stopReason ?? '-'}${r.note ? ` (${r.note})` : ''}`,
        )
        .join('\n')}\n`,
    );
  });

  for (const agent of selected) {
    const skip = agent.installed() ? false : requireAll ? false : `${agent.id} not installed: run scripts/setup-agents.sh`;
    const opts = { skip, timeout: 120_000 };
    const q = agent.quirks;

    test(`${agent.label}: allow → the file is written, the turn ends with end_turn`, opts, async () => {
      assert.ok(agent.installed(), `${agent.id} is not installed`);
      const row: Row = { agent: agent.id, case: 'allow-write', ok: false, ms: 0 };
      rows.push(row);
      const content = `hello from ${agent.id}\n`;
      const run = await runTurn(
        agent,
        'allow',
        'approve-all',
        (ws) => scenario('write', { path: path.join(ws, 'notes', 'hello.txt'), content }),
        (ws) => fs.mkdirSync(path.join(ws, 'notes')),
      );
      Object.assign(row, { ms: run.ms, initializeMs: run.initializeMs, stopReason: run.stopReason });
      assert.equal(run.stopReason, 'end_turn');
      const target = path.join(run.workspace, 'notes', 'hello.txt');
      if (q.createViaClientFsBroken) {
        // Known agent bug (gemini 0.61): our -32002 "not found" answer to its existence check is misread as a
        // failure, so it never gets to ask or write. Documented in docs/agents.md; the edit case covers writes.
        assert.equal(fs.existsSync(target), false, 'the known gemini bug seems fixed: update the quirk');
        const read = run.frames.find((f) => f.dir === 'in' && f.msg.method === 'fs/read_text_file');
        const answer = run.frames.find((f) => f.dir === 'out' && f.msg.id === read?.msg.id && 'error' in f.msg);
        assert.ok(answer, 'the read was answered with an error');
        assert.equal((answer.msg.error as { code: number }).code, -32002);
        assert.match(agentText(run), /not allowed/);
        row.note = 'known bug: cannot create a new file through client fs';
      } else {
        assert.equal(fs.readFileSync(target, 'utf8'), content);
        assert.match(agentText(run), /Done/);
      }
      if (!q.noPermissionRequests && !q.createViaClientFsBroken) {
        const req = run.frames.find((f) => f.dir === 'in' && f.msg.method === 'session/request_permission');
        assert.ok(req, 'the agent asked for permission');
        const answer = run.frames.find((f) => f.dir === 'out' && f.msg.id === req.msg.id && 'result' in f.msg);
        assert.ok(answer, 'the permission request was answered');
        const offered = (req.msg.params as { options: { optionId: string; kind: string }[] }).options;
        const chosen = (answer.msg.result as { outcome: { optionId: string } }).outcome.optionId;
        assert.ok(
          offered.some((o) => o.optionId === chosen && o.kind.startsWith('allow')),
          `answered with an offered allow option (${chosen})`,
        );
        const toolCall = run.session.model.toolCall((req.msg.params as { toolCall: { toolCallId: string } }).toolCall.toolCallId);
        assert.equal(toolCall?.permission?.optionId, chosen);
      }
      if (q.writesViaClientFs && !q.createViaClientFsBroken) {
        assert.ok(
          run.frames.some((f) => f.dir === 'in' && f.msg.method === 'fs/write_text_file'),
          'wrote through client fs',
        );
      }
      // Every agent→client request got exactly one answer.
      const requests = run.frames.filter((f) => f.dir === 'in' && typeof f.msg.method === 'string' && 'id' in f.msg);
      for (const r of requests) {
        assert.equal(run.frames.filter((f) => f.dir === 'out' && f.msg.id === r.msg.id && !('method' in f.msg)).length, 1, `answered ${String(r.msg.method)}`);
      }
      row.ok = true;
      run.cleanup();
    });

    test(`${agent.label}: reject → the file is untouched`, opts, async () => {
      if (q.noPermissionRequests) {
        // No permission system (docs/agents.md): it never asks, so --deny-all cannot stop its own file tool. Asserted,
        // not skipped: the day it asks, this fails and the quirk goes.
        const run = await runTurn(agent, 'reject', 'deny-all', (ws) => scenario('write', { path: path.join(ws, 'unasked.txt'), content: 'written unasked\n' }));
        assert.equal(run.asked.length, 0, `${agent.id} asked for permission after all`);
        assert.equal(fs.readFileSync(path.join(run.workspace, 'unasked.txt'), 'utf8'), 'written unasked\n');
        run.cleanup();
        return;
      }
      const row: Row = { agent: agent.id, case: 'reject-write', ok: false, ms: 0 };
      rows.push(row);
      const { run, untouched } = await refusedWrite(agent, 'reject', 'deny-all', 'denied.txt');
      Object.assign(row, { ms: run.ms, initializeMs: run.initializeMs, stopReason: run.stopReason });
      untouched();
      assert.equal(run.stopReason, q.rejectStopReason ?? 'end_turn');
      // The model was never told the tool succeeded (some agents end the turn without asking it again).
      assert.ok(!run.model.requests.some((r) => r.decision === 'final'), 'the model saw a successful tool result');
      assert.ok(run.asked.length >= 1, 'the agent asked');
      row.ok = true;
      run.cleanup();
    });

    // An agent with no permission system never asks (its reject case asserts exactly that): no dialog to cancel.
    if (!q.noPermissionRequests)
      test(`${agent.label}: Cancel in the permission dialog stops the turn`, opts, async () => {
        const row: Row = { agent: agent.id, case: 'dialog-cancel', ok: false, ms: 0 };
        rows.push(row);
        const { run, untouched } = await refusedWrite(agent, 'dialog-cancel', 'dialog-cancel', 'kept.txt');
        Object.assign(row, { ms: run.ms, initializeMs: run.initializeMs, stopReason: run.stopReason });
        const req = run.frames.find((f) => f.dir === 'in' && f.msg.method === 'session/request_permission');
        assert.ok(req, 'the agent asked for permission');
        const answer = run.frames.find((f) => f.dir === 'out' && f.msg.id === req.msg.id && 'result' in f.msg);
        assert.ok(answer, 'the permission request was answered');
        assert.deepEqual((answer.msg.result as { outcome: unknown }).outcome, { outcome: 'cancelled' });
        // The answer goes out first, then session/cancel, and the turn ends `cancelled` (not the agent's end_turn).
        const cancel = run.frames.find((f) => f.dir === 'out' && f.msg.method === 'session/cancel');
        assert.ok(cancel && cancel.at >= answer.at, 'no session/cancel after the cancelled answer');
        assert.equal(run.stopReason, 'cancelled');
        untouched();
        assert.ok(!run.model.requests.some((r) => r.decision === 'final' && /Done/.test(JSON.stringify(r))), 'the model was told the edit succeeded');
        row.ok = true;
        run.cleanup();
      });

    test(`${agent.label}: edits an existing file`, opts, async () => {
      const row: Row = { agent: agent.id, case: 'edit', ok: false, ms: 0 };
      rows.push(row);
      const run = await runTurn(
        agent,
        'edit',
        'approve-all',
        (ws) => scenario('edit', { path: path.join(ws, 'app.txt'), old: 'colour = red', new: 'colour = blue' }),
        (ws) => fs.writeFileSync(path.join(ws, 'app.txt'), 'name = demo\ncolour = red\n'),
      );
      Object.assign(row, { ms: run.ms, initializeMs: run.initializeMs, stopReason: run.stopReason });
      assert.equal(run.stopReason, 'end_turn');
      assert.equal(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8'), 'name = demo\ncolour = blue\n');
      row.ok = true;
      run.cleanup();
    });

    test(`${agent.label}: runs a shell command after permission`, opts, async () => {
      const row: Row = { agent: agent.id, case: 'shell', ok: false, ms: 0 };
      rows.push(row);
      const run = await runTurn(agent, 'shell', 'approve-all', () => scenario('shell', { command: 'echo shell-ok > shell.txt' }));
      Object.assign(row, { ms: run.ms, initializeMs: run.initializeMs, stopReason: run.stopReason });
      assert.equal(run.stopReason, 'end_turn');
      assert.equal(fs.readFileSync(path.join(run.workspace, 'shell.txt'), 'utf8').trim(), 'shell-ok');
      const kinds = run.session.model.timeline().flatMap((e) => (e.kind === 'tool_call' ? [e.toolKind] : []));
      assert.ok(kinds.length > 0, 'a tool call card was recorded');
      row.ok = true;
      run.cleanup();
    });

    test(`${agent.label}: the headless CLI runs the same turn and exits 0`, opts, async () => {
      const row: Row = { agent: agent.id, case: 'cli-allow', ok: false, ms: 0 };
      rows.push(row);
      const model = await startScriptedModel();
      try {
        const { scratch, workspace, config } = await prepared(agent, model, 'cli');
        const cfgFile = path.join(scratch, 'agents.json');
        fs.writeFileSync(cfgFile, JSON.stringify({ agent_servers: { [agent.id]: config } }));
        const target = path.join(workspace, q.createViaClientFsBroken ? 'existing.txt' : 'cli.txt');
        let prompt = scenario('write', { path: target, content: 'from the cli\n' });
        if (q.createViaClientFsBroken) {
          fs.writeFileSync(target, 'old\n');
          prompt = scenario('edit', { path: target, old: 'old', new: 'from the cli' });
        }
        const t0 = Date.now();
        const r = await runCli(['--config', cfgFile, '--agent', agent.id, '--approve-all', '--format', 'json', '--cwd', workspace, prompt], workspace);
        row.ms = Date.now() - t0;
        const events = r.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const result = events.find((e) => e.type === 'result');
        row.stopReason = String(result?.outcome);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(result?.outcome, 'end_turn');
        assert.equal(fs.readFileSync(target, 'utf8'), 'from the cli\n');
        assert.ok(events.some((e) => e.type === 'entity' && (e.entity as { kind: string }).kind === 'tool_call'));
        row.ok = true;
        fs.rmSync(scratch, { recursive: true, force: true });
      } finally {
        await model.close();
      }
    });
  }
});
