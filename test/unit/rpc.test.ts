/**
 * RPC mode transport, dialect mapping, extension UI and host tools against a fake agent
 * (test/fixtures/rpcFakeAgent.ts): framing, id and id-less matching, timeouts, exits, fault injection.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AgentExitedError, groupAlive } from '../../src/core/agentProcess';
import type { Logger } from '../../src/core/log';
import { detectDialect, RpcDialect, RPC_COMMANDS } from '../../src/rpc/dialect';
import { headlessRpcUi, type RpcUiHandlers } from '../../src/rpc/extensionUi';
import { RpcConnection, RpcTimeoutError } from '../../src/rpc/rpcConnection';
import { phasesToPlan, RpcSession } from '../../src/rpc/rpcSession';
import { outlineSymbols } from '../../src/host/workspaceFileTools';
import type { HostToolProvider } from '../../src/session/hostTools';
import { repoRoot } from '../support/paths';

const fake = path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js');

function memLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (l: string) => (m: string | Error) => void lines.push(`[${l}] ${m instanceof Error ? m.message : m}`);
  return { lines, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const live: { shutdown(): Promise<unknown>; pid: number }[] = [];
function connect(mode = 'upstream', timeoutMs = 5000) {
  const logger = memLogger();
  const conn = RpcConnection.spawn({ command: process.execPath, args: [fake, mode], cwd: repoRoot }, { logger, commandTimeoutMs: timeoutMs });
  live.push({ shutdown: () => conn.shutdown(), pid: conn.process.pid! });
  return { conn, logger };
}
async function session(mode: string, extra: { rpcUi?: RpcUiHandlers; hostTools?: HostToolProvider } = {}) {
  const logger = memLogger();
  const s = await RpcSession.start({ name: 'fake', command: process.execPath, args: [fake, mode], protocol: 'rpc' }, { logger, cwd: repoRoot, requestTimeoutMs: 5000, ...extra });
  live.push({ shutdown: () => s.shutdown(), pid: s.connection.process.pid! });
  return { s, logger };
}

after(async () => {
  for (const l of live) await l.shutdown();
  for (const l of live) assert.equal(groupAlive(l.pid), false, `fake agent ${l.pid} left behind`);
});

describe('RPC dialect table', () => {
  it('detects fork by ready frame or get_state fields, upstream by pendingMessageCount', () => {
    assert.equal(detectDialect(true, undefined).name, 'fork');
    assert.equal(detectDialect(false, { todoPhases: [] }).name, 'fork');
    assert.equal(detectDialect(false, { queuedMessageCount: 0 }).detectedBy, 'get_state has queuedMessageCount');
    assert.equal(detectDialect(false, { pendingMessageCount: 0 }).name, 'upstream');
    assert.match(detectDialect(false, {}).detectedBy, /assumed upstream/);
  });

  it('maps names both ways and gives a reason for every unsupported command', () => {
    const fork = new RpcDialect('fork', 't');
    const up = new RpcDialect('upstream', 't');
    assert.equal(up.wireName('branch'), 'fork');
    assert.equal(up.wireName('get_branch_messages'), 'get_fork_messages');
    assert.equal(fork.wireName('branch'), 'branch');
    assert.equal(up.supports('abort_and_prompt').emulated, true);
    assert.equal(fork.supports('abort_and_prompt').wire, 'abort_and_prompt');
    assert.equal(up.eventName('compaction_start'), 'auto_compaction_start');
    assert.equal(up.eventName('compaction_end'), 'auto_compaction_end');
    assert.equal(fork.eventName('auto_compaction_end'), 'auto_compaction_end');
    assert.deepEqual(up.normalizeState({ pendingMessageCount: 4 }), { queuedMessageCount: 4 });
    assert.deepEqual(fork.normalizeState({ queuedMessageCount: 1 }), { queuedMessageCount: 1 });
    for (const d of [fork, up]) {
      for (const c of RPC_COMMANDS) {
        const s = d.supports(c);
        if (!s.supported) assert.ok(s.reason && s.reason.length > 10, `${d.name} ${c} has a reason`);
      }
    }
    assert.throws(() => up.wireName('set_todos'), /not supported.*todo/);
    assert.equal(up.supports('nope').supported, false);
  });

  it('flattens todo phases into plan entries keeping the phase', () => {
    assert.deepEqual(
      phasesToPlan([
        { name: 'A', tasks: [{ content: 'x', status: 'pending' }] },
        { name: 'B', tasks: [] },
      ]),
      [{ content: 'x', status: 'pending', phase: 'A' }],
    );
  });
});

describe('RpcConnection against a fake agent', () => {
  it('matches responses by id, with generated ids, concurrently', async () => {
    const { conn } = connect();
    const [a, b] = await Promise.all([conn.call<{ n: number }>({ type: 'echo', n: 1 }), conn.call<{ n: number }>({ type: 'echo', n: 2 })]);
    assert.equal(a.n, 1);
    assert.equal(b.n, 2);
    assert.notEqual((a as unknown as { id: string }).id, (b as unknown as { id: string }).id);
  });

  it('matches id-less "Unknown command" answers to the oldest pending command of that name', async () => {
    const { conn, logger } = connect();
    const order: string[] = [];
    const noting =
      (name: string) =>
      <T>(r: T): T => {
        order.push(name);
        return r;
      };
    const first = conn.send({ type: 'frobnicate' }).then(noting('first'));
    const other = conn.send({ type: 'zap' }).then(noting('zap'));
    const second = conn.send({ type: 'frobnicate' }).then(noting('second'));
    const rs = await Promise.all([first, other, second]);
    assert.deepEqual(order, ['first', 'zap', 'second']);
    for (const r of rs) assert.match(r.error ?? '', /Unknown command/);
    assert.equal(rs[0]!.command, 'frobnicate');
    assert.equal(conn.pendingCommands().length, 0);
    assert.ok(logger.lines.some((l) => /id-less frobnicate response matched/.test(l)));
  });

  it('times a command out without disturbing the others', async () => {
    const { conn } = connect('upstream', 200);
    const health: string[] = [];
    conn.onHealth((h) => health.push(h));
    const t0 = Date.now();
    await assert.rejects(conn.call({ type: 'silent' }), (e: unknown) => e instanceof RpcTimeoutError && e.command === 'silent');
    assert.ok(Date.now() - t0 < 1500);
    await assert.rejects(conn.call({ type: 'silent' }), (e: unknown) => e instanceof RpcTimeoutError);
    assert.equal((await conn.call<{ type: string }>({ type: 'echo' }, { timeoutMs: 2000 })).type, 'echo');
    // Reported unresponsive at each timeout (the traffic view counts them), answering again at the next response.
    assert.deepEqual(health, ['unresponsive', 'unresponsive', 'ok']);
  });

  it('keeps U+2028/U+2029 inside a line, drops garbage lines, logs parse errors and late answers', async () => {
    const { conn, logger } = connect();
    const d = await conn.call<{ text: string }>({ type: 'u2028' });
    assert.equal(d.text, 'line\u2028separator\u2029paragraph');
    await conn.call({ type: 'garbage' });
    assert.ok(logger.lines.some((l) => /\[error\] Malformed JSON from agent/.test(l)));
    assert.ok(logger.lines.some((l) => /not an RPC frame/.test(l)));
    conn.process.child.stdin.write('{broken\n');
    const late: unknown[] = [];
    conn.onFrame((f) => f.type === 'response' && late.push(f));
    await conn.call({ type: 'late_error' });
    await new Promise((r) => setTimeout(r, 150));
    assert.ok(logger.lines.some((l) => /\[error\] The agent could not parse a line we sent/.test(l)));
    assert.equal(late.length, 1, 'a second answer for a settled id reaches the listeners');
  });

  it('fails every pending command at once when the agent exits, with code and stderr tail', async () => {
    const { conn } = connect();
    const pending = conn.call({ type: 'silent' }, { timeoutMs: 0 });
    const t0 = Date.now();
    void conn.send({ type: 'crash' }).catch(() => undefined);
    await assert.rejects(pending, (e: unknown) => e instanceof AgentExitedError && e.exit.code === 3 && /crashed on purpose/.test(e.message));
    assert.ok(Date.now() - t0 < 2000);
    await assert.rejects(conn.call({ type: 'echo' }), AgentExitedError);
  });
});

describe('RpcSession against a fake agent', () => {
  it('answers an extension dialog that arrives before the first response', async () => {
    const ui = headlessRpcUi();
    const { s } = await session('ui-early', { rpcUi: ui });
    assert.equal(s.dialect.name, 'upstream');
    assert.equal(ui.events[0]?.method, 'confirm');
    assert.equal(ui.events[1]?.method, 'notify');
    assert.equal(s.model.agentState.queuedMessageCount, 3, 'pendingMessageCount mapped');
  });

  it('fork: todoPhases become the plan, host tools are registered', async () => {
    const provider: HostToolProvider = {
      definitions: () => [{ name: 'echo_host', label: 'Echo', description: 'Echo', parameters: { type: 'object' } }],
      call: async () => ({ content: [{ type: 'text', text: 'x' }] }),
    };
    const { s } = await session('fork', { hostTools: provider });
    assert.equal(s.dialect.detectedBy, 'ready frame');
    assert.deepEqual(s.model.plan, [{ content: 'first', status: 'pending', phase: 'Phase A' }]);
    assert.deepEqual((s.model.agentState.hostTools as { registered: string[] }).registered, ['echo_host']);
  });

  it('dialogs: answered, dismissed, timed out (default), withdrawn by the agent', async () => {
    let dismiss = false;
    const base = headlessRpcUi({ inputs: { Name: 'Ada' } });
    const ui: RpcUiHandlers = {
      ...base,
      input: (req, signal) => (dismiss ? Promise.resolve(undefined) : base.input(req, signal)),
      // Never answers by itself: only the timeout or a withdrawal ends it.
      editor: (_req, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('too late'))),
    };
    const { s } = await session('upstream', { rpcUi: ui });
    const ask = async (request: Record<string, unknown>, waitMs?: number) =>
      ((await s.raw({ type: 'ui', request, ...(waitMs ? { waitMs } : {}) })).data as { answer: Record<string, unknown> | null }).answer;
    assert.deepEqual(await ask({ method: 'select', title: 'Pick', options: ['a', 'b'] }), { type: 'extension_ui_response', id: 'ui-1', value: 'a' });
    assert.equal((await ask({ method: 'confirm', title: 'Sure?', message: 'm' }))?.confirmed, true);
    assert.equal((await ask({ method: 'input', title: 'Name' }))?.value, 'Ada');
    dismiss = true;
    assert.equal((await ask({ method: 'input', title: 'Name' }))?.cancelled, true);
    const t0 = Date.now();
    const timedOut = await ask({ method: 'editor', title: 'Edit', prefill: 'x', timeout: 150 });
    assert.deepEqual({ c: timedOut?.cancelled, t: timedOut?.timedOut }, { c: true, t: true });
    assert.ok(Date.now() - t0 < 2000);
    const withdrawn = (await s.raw({ type: 'ui_withdraw' })).data as { answer: unknown };
    assert.equal(withdrawn.answer, null, 'no answer to a withdrawn dialog');
    // Fire-and-forget methods reach the model as well.
    assert.equal(await ask({ method: 'setStatus', statusKey: 'k', statusText: 'busy' }, 50), null, 'fire-and-forget: no answer');
    await ask({ method: 'setWidget', widgetKey: 'w', widgetLines: ['l1'] }, 50);
    await ask({ method: 'setTitle', title: 'T' }, 50);
    assert.deepEqual(s.model.agentState.extensionStatus, { k: 'busy' });
    assert.equal(s.model.info.title, 'T');
    assert.deepEqual(
      base.events.map((e) => e.method).filter((m) => m.startsWith('set')),
      ['setStatus', 'setWidget', 'setTitle'],
    );
  });

  it('host tools: result with streamed updates, errors as isError, cancel aborts the call', async () => {
    let aborted = false;
    const provider: HostToolProvider = {
      definitions: () => [],
      call: async (name, args, signal, onUpdate) => {
        if (name === 'boom') throw new Error('tool exploded');
        if (name === 'slow') {
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve();
            }),
          );
          return { content: [{ type: 'text', text: 'late' }] };
        }
        onUpdate({ content: [{ type: 'text', text: 'working' }] });
        return { content: [{ type: 'text', text: `symbols of ${String(args.abspath)}: ${JSON.stringify(outlineSymbols('export function hello() {}'))}` }] };
      },
    };
    const { s } = await session('fork', { hostTools: provider });
    const run = async (cmd: Record<string, unknown>) => (await s.raw({ type: 'host', ...cmd })).data as { result: Record<string, unknown> | null; updates: Record<string, unknown>[] };
    const good = await run({ toolName: 'symbols', arguments: { abspath: '/x.ts' } });
    assert.match(JSON.stringify(good.result), /"name\\":\\"hello\\"/);
    assert.equal(good.result?.isError, undefined);
    assert.equal(good.updates.length, 1);
    const bad = await run({ toolName: 'boom' });
    assert.equal(bad.result?.isError, true);
    assert.match(JSON.stringify(bad.result), /tool exploded/);
    const cancelled = await run({ toolName: 'slow', cancelAfterMs: 50, waitMs: 300 });
    assert.equal(cancelled.result, null, 'no result after host_tool_cancel');
    assert.equal(aborted, true);
  });

  it('refuses an empty session name locally', async () => {
    const { s } = await session('upstream');
    await assert.rejects(s.setSessionName('  '), /Session name cannot be empty/);
  });
});
