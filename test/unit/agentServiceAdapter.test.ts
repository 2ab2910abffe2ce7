/**
 * The agent service adapter (src/agentService) against the protocol-faithful test server (test/support/
 * agentServiceServer.ts), through the adapter factory as the extension and the CLI start it: models, a streamed
 * chat turn reassembled in order, the selection tasks' fields, the key refused each way a service may refuse it,
 * a dropped socket, a full queue, a task cancelled by a newer one, Stop, IDE-service callbacks, and wss.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { startAgentSession } from '../../src/adapters/factory';
import { AgentExitedError } from '../../src/core/agentProcess';
import { silentLogger } from '../../src/core/log';
import { workspaceFileTools } from '../../src/host/workspaceFileTools';
import type { AgentConfig } from '../../src/session/agentConfig';
import { AgentBusyError, type AgentSession } from '../../src/session/agentSession';
import { policyDecider } from '../../src/session/permissions';
import type { SelectionTaskRequest } from '../../src/session/selectionTask';
import type { AgentStartOptions } from '../../src/session/sessionHost';
import { AgentServiceServer, type AgentServiceServerOptions, QUEUE_FULL } from '../support/agentServiceServer';
import { until } from '../support/wait';

const KEY = 'simpletest2025_adapter';
let dir: string;
const source = 'def next_turn(board):\n    """Moves."""\n    return [row[:] for row in board]\n\n\ndef score(board):\n    return sum(map(sum, board))\n';

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agent-service-adapter-'));
  writeFileSync(path.join(dir, 'game.py'), source);
});
after(() => rmSync(dir, { recursive: true, force: true }));

function entry(server: AgentServiceServer, extra: Partial<AgentConfig> = {}): AgentConfig {
  return { name: 'team service', command: server.url, url: server.url, protocol: 'agent-service', ...extra };
}

function options(extra: Partial<AgentStartOptions> = {}): AgentStartOptions {
  return { logger: silentLogger, cwd: dir, decidePermission: policyDecider('deny-all'), apiKey: KEY, ...extra };
}

async function withServer(opts: AgentServiceServerOptions, body: (server: AgentServiceServer) => Promise<void>): Promise<void> {
  const server = await AgentServiceServer.start(opts);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

const sentOf = (server: AgentServiceServer, cmd: string) => server.received.map((r) => r.frame as Record<string, unknown>).filter((f) => f?.cmd === cmd);
const answer = (session: AgentSession) => session.model.messages('agent').at(-1)?.text ?? '';
const selection = (): SelectionTaskRequest & { task: 'explain' } => ({
  task: 'explain',
  language: 'en',
  selected: { filepath: path.join(dir, 'game.py'), range: { start: { line: 0, character: 0 }, end: { line: 2, character: 35 } }, text: source.split('\n').slice(0, 3).join('\n') },
  visible: { filepath: path.join(dir, 'game.py'), range: { start: { line: 0, character: 0 }, end: { line: 6, character: 0 } }, text: source },
});

test('list_model fills the model picker; a chat turn streams, frames sent out of order arrive in order', async () => {
  await withServer({ chunks: 12, shuffle: true, models: ['local qwen', 'remote big'] }, async (server) => {
    const session = await startAgentSession(entry(server), options());
    try {
      assert.equal(session.agentInfo.protocol, 'agent-service');
      assert.deepEqual(
        session.model.models?.availableModels.map((m) => m.modelId),
        ['local qwen', 'remote big'],
      );
      await session.setModel('remote big');
      const appended: string[] = [];
      session.model.on((e) => e.type === 'append' && appended.push(e.text));
      const { stopReason } = await session.prompt([{ type: 'text', text: 'What does next_turn do?' }]);
      assert.equal(stopReason, 'end_turn');
      const [chat] = sentOf(server, 'exec_chat');
      assert.equal(chat?.msg, 'What does next_turn do?');
      assert.equal(chat?.model, 'remote big');
      assert.equal(chat?.stream, true);
      assert.equal(typeof chat?.request_id, 'number');
      // What the server streamed, put back together: its frames in seq order.
      const frames = server.sent.filter((s) => s.frame.request_id === chat?.request_id).map((s) => s.frame);
      assert.ok(frames.length > 3, 'streamed in several frames');
      assert.notDeepEqual(
        frames.map((f) => f.stream_seq_id),
        [...frames].map((f) => f.stream_seq_id).sort((a, b) => Number(a) - Number(b)),
        'the server shuffled',
      );
      const whole = [...frames]
        .sort((a, b) => Number(a.stream_seq_id) - Number(b.stream_seq_id))
        .map((f) => f.msg)
        .join('');
      assert.equal(answer(session), whole);
      assert.match(whole, /What does next_turn do\?/);
    } finally {
      await session.shutdown();
    }
  });
});

test('Explain and the two unit-test steps send the document fields; the IDE service is answered from the host lookups', async () => {
  await withServer(
    {
      chunks: 3,
      ideCalls: {
        exec_unittest_recommend: (req) => [
          { cmd: 'get_document_symbols', abspath: req.filepath as string },
          { cmd: 'find_type_def_locations', abspath: req.filepath as string, line: 5, character: 4 },
        ],
      },
    },
    async (server) => {
      const session = await startAgentSession(entry(server), options({ ideTools: { tools: workspaceFileTools(dir), mcpServer: async () => undefined } }));
      try {
        const tasks = session.selectionTasks!;
        assert.ok(tasks, 'the service runs selection tasks itself');
        const request = selection();
        await tasks.run(request, [{ type: 'text', text: 'Explain: next_turn in game.py' }]);
        const [explain] = sentOf(server, 'exec_explain');
        assert.deepEqual(explain?.selected_text, request.selected);
        assert.deepEqual(explain?.visible_text, request.visible);
        assert.equal(explain?.language, 'en');
        assert.match(answer(session), /game\.py/);
        assert.equal(session.model.messages('user').at(-1)?.text, 'Explain: next_turn in game.py');

        await tasks.run(
          {
            task: 'testCases',
            language: 'zh',
            filepath: path.join(dir, 'game.py'),
            fileContent: source,
            funcName: 'next_turn',
            funcLocation: { start: { line: 0, character: 0 }, end: { line: 2, character: 35 } },
            funcSymbols: [{ name: 'next_turn', kind: 'Function', range: { start: { line: 0, character: 0 }, end: { line: 2, character: 35 } }, children: [] }],
          },
          [{ type: 'text', text: 'Test cases: next_turn' }],
        );
        const [recommend] = sentOf(server, 'exec_unittest_recommend');
        assert.equal(recommend?.func_name, 'next_turn');
        assert.equal(recommend?.file_content, source);
        assert.equal(recommend?.language, 'zh');
        // Its IDE calls: symbols from the host's lookups; a lookup the host has not (type definitions, headless) gets an error, not silence.
        await until(() => server.ideReplies.length === 2 && server.ideReplies.every((r) => r.reply), { what: 'both IDE replies' });
        const [symbols, typeDef] = server.ideReplies;
        assert.ok(symbols?.reply && 'result' in symbols.reply && Array.isArray(symbols.reply.result));
        assert.deepEqual(
          (symbols.reply.result as { name: string }[]).map((s) => s.name),
          ['next_turn', 'score'],
        );
        assert.ok(typeDef?.reply && 'error' in typeDef.reply, 'the headless host has no type definitions: said as an error');
        const cases = answer(session);

        await tasks.run({ task: 'testCode', language: 'en', testCasesStr: cases, functionName: 'next_turn', filePath: 'test_game.py' }, [{ type: 'text', text: 'Unit tests: next_turn' }]);
        const [code] = sentOf(server, 'exec_unittest_code');
        assert.equal(code?.test_cases_str, cases);
        assert.equal(code?.file_path, 'test_game.py');
        assert.match(answer(session), /```/);
      } finally {
        await session.shutdown();
      }
    },
  );
});

for (const authFailure of ['close', 'plain-close', 'terminate', 'http-401'] as const) {
  test(`a wrong key (${authFailure}) fails the start plainly and says the key was refused`, async () => {
    await withServer({ authFailure }, async (server) => {
      let refused = 0;
      await assert.rejects(startAgentSession(entry(server), options({ apiKey: 'wrong', onKeyRefused: () => refused++ })), /refused the API key/);
      assert.equal(refused, 1);
      assert.equal(server.connections(), 0);
    });
  });
}

test('no key: the start names where to give one', async () => {
  await withServer({}, async (server) => {
    const { apiKey: _, ...keyless } = options();
    await assert.rejects(startAgentSession(entry(server), keyless), /needs an API key.*AGENT_SERVICE_API_KEY/);
    assert.equal(server.received.length, 0);
  });
});

test('a socket dropped mid-task fails the turn as an exit, ends the session, and leaves nothing waiting', async () => {
  await withServer({ chunks: 8, dropAfterFrames: 3, frameDelayMs: 5 }, async (server) => {
    const session = await startAgentSession(entry(server), options());
    const exited = new Promise((resolve) => session.onExit(resolve));
    await assert.rejects(session.prompt([{ type: 'text', text: 'hello' }]), (error: Error) => error instanceof AgentExitedError && /dropped/.test(error.message));
    await exited;
    assert.equal(session.model.turn, 'idle');
    assert.ok(answer(session).length > 0, 'what arrived before the drop stays');
    await session.shutdown();
  });
});

test('a full queue is a busy error, not a failure of the agent; the next try goes through', async () => {
  await withServer({ workers: 1, taskMs: 600, maxQueue: 1 }, async (server) => {
    const first = await startAgentSession(entry(server), options());
    const waiting = await startAgentSession(entry(server), options());
    const second = await startAgentSession(entry(server), options());
    try {
      const running = first.prompt([{ type: 'text', text: 'long one' }]);
      await until(() => server.tasks.some((t) => t.state === 'running'), { what: 'the first task running' });
      const queued = waiting.prompt([{ type: 'text', text: 'queued one' }]);
      await until(() => server.tasks.some((t) => t.state === 'queued'), { what: 'a task waiting' });
      const busy = await second.prompt([{ type: 'text', text: 'second' }]).catch((e: Error) => e);
      assert.ok(busy instanceof AgentBusyError, `busy, got ${busy instanceof Error ? busy.message : JSON.stringify(busy)}`);
      assert.match(busy.message, new RegExp(QUEUE_FULL));
      assert.equal(second.model.turn, 'idle');
      await Promise.all([running, queued]);
      assert.equal((await second.prompt([{ type: 'text', text: 'again' }])).stopReason, 'end_turn');
    } finally {
      await Promise.all([first.shutdown(), waiting.shutdown(), second.shutdown()]);
    }
  });
});

test('a task sent while another runs cancels it, and the transcript says why', async () => {
  await withServer({ taskMs: 800 }, async (server) => {
    const session = await startAgentSession(entry(server), options());
    try {
      const chat = session.prompt([{ type: 'text', text: 'slow question' }]);
      await until(() => sentOf(server, 'exec_chat').length === 1, { what: 'the chat sent' });
      const explained = await session.selectionTasks!.run(selection(), [{ type: 'text', text: 'Explain: next_turn' }]);
      assert.equal((await chat).stopReason, 'cancelled');
      assert.equal(explained.stopReason, 'end_turn');
      const notice = session.model.timeline().find((e) => e.kind === 'notice' && e.title === 'Previous task cancelled');
      assert.ok(notice && notice.kind === 'notice' && /one task per connection/.test(notice.detail ?? ''), 'said in the transcript');
      assert.equal(session.model.timeline().filter((e) => e.kind === 'notice' && e.title === 'Stopped').length, 0, 'nobody pressed Stop: no "Stopped" line');
      await until(() => server.tasks.find((t) => t.cmd === 'exec_chat')?.state === 'cancelled', { what: 'the service cancelled the chat' });
    } finally {
      await session.shutdown();
    }
  });
});

test('Stop ends the turn here and swaps the connection (the service has no cancel); the next message goes through', async () => {
  await withServer({ taskMs: 2000 }, async (server) => {
    const session = await startAgentSession(entry(server), options());
    try {
      const chat = session.prompt([{ type: 'text', text: 'slow' }]);
      await until(() => server.tasks.some((t) => t.state === 'running'), { what: 'the task running' });
      let exited = false;
      session.onExit(() => (exited = true));
      await session.cancel();
      assert.equal((await chat).stopReason, 'cancelled');
      await until(() => server.tasks[0]?.state === 'aborted', { what: 'the closed connection dropped its task' });
      server.options.taskMs = 0;
      assert.equal((await session.prompt([{ type: 'text', text: 'quick' }])).stopReason, 'end_turn');
      assert.equal(new Set(server.received.map((r) => r.connection)).size, 2, 'a fresh connection');
      assert.equal(exited, false, "the swapped-out connection's close ended the session");
    } finally {
      await session.shutdown();
    }
  });
});

test('frames that never arrive are said once the finish is in', async () => {
  await withServer({ chunks: 6, dropSeq: 2 }, async (server) => {
    const session = await startAgentSession(entry(server), options());
    try {
      await session.prompt([{ type: 'text', text: 'gap please' }]);
      const notice = session.model.timeline().find((e) => e.kind === 'notice' && e.title === 'Parts of the answer are missing');
      assert.ok(notice && notice.kind === 'notice' && /pieces 2 /.test(notice.detail ?? ''), 'the gap is named');
    } finally {
      await session.shutdown();
    }
  });
});

test('wss with a self-signed certificate: refused with its fingerprint, taken when pinned or its CA given', async () => {
  await withServer({ tls: true }, async (server) => {
    const cert = server.certificate!;
    const offered: string[] = [];
    await assert.rejects(
      startAgentSession(entry(server), options({ onUntrustedCertificate: (fp) => offered.push(fp) })),
      (e: Error) => /not trusted/.test(e.message) && e.message.includes(cert.fingerprint256),
    );
    assert.deepEqual(offered, [cert.fingerprint256], 'the editor is handed the fingerprint to offer trusting it');
    assert.equal(server.received.length, 0, 'the key never went out');
    const pinned = await startAgentSession(entry(server, { tls: { fingerprint: cert.fingerprint256.replace(/:/g, '').toLowerCase() } }), options());
    await pinned.shutdown();
    writeFileSync(path.join(dir, 'ca.pem'), cert.pem);
    const withCa = await startAgentSession(entry(server, { tls: { ca: 'ca.pem' } }), options());
    await withCa.shutdown();
    await assert.rejects(startAgentSession(entry(server, { tls: { fingerprint: 'AB:CD' } }), options()), /not the one accepted/);
  });
});
