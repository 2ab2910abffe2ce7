/**
 * A conversation restored to a checkpoint with claude-agent-acp 0.23.1 (ACP `session/fork` at a message, through
 * the Claude Agent SDK's `resumeSessionAt`) against the scripted model: after going back to before the second
 * prompt, the model's next request lacks the second and third turns, the transcript lacks them too, the session
 * goes on under the fork's id and the old one is closed. Going back to before the first prompt leaves nothing.
 * Run: npx tsc -p . && node --test out/test/agents/claudeFork.test.js
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AcpSession } from '../../src/acp/acpSession';
import { streamLogger } from '../../src/core/log';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { conversationFork } from '../../src/session/conversationFork';
import { plainHost } from '../support/plainHost';
import { repoRoot } from '../support/paths';
import { agentById } from './catalog';

const claude = agentById('claude')!;

describe('conversation restore with claude-agent-acp (ACP session/fork at a message)', () => {
  let model: ScriptedModel | undefined;
  let session: AcpSession | undefined;
  after(async () => {
    await session?.shutdown();
    await model?.close();
  });

  it("the model's next request lacks the turns after the restored message; the session goes on as the fork", { timeout: 180_000 }, async () => {
    assert.ok(claude.installed(), 'claude-agent-acp is not installed: run scripts/setup-agents.sh claude');
    model = await startScriptedModel();
    fs.mkdirSync(path.join(repoRoot, '.scratch'), { recursive: true });
    const scratch = fs.mkdtempSync(path.join(repoRoot, '.scratch', 'claude-fork-'));
    const workspace = path.join(scratch, 'workspace');
    fs.mkdirSync(workspace);
    const spec = await claude.prepare({ scratch, modelUrl: model.url, workspace });
    const frames: Record<string, unknown>[] = [];
    const log: string[] = [];
    session = await AcpSession.start(
      { name: 'claude', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false },
      {
        logger: streamLogger((l) => log.push(l), 'debug'),
        cwd: workspace,
        ...plainHost(workspace),
        decidePermission: async () => ({ outcome: 'cancelled', by: 'policy' }),
        requestTimeoutMs: 60_000,
        frameTap: (dir, msg) => {
          if (dir === 'out') frames.push(msg as Record<string, unknown>);
        },
      },
    );
    const say = (word: string) => session!.prompt([{ type: 'text', text: `Remember ${word}.\nSCENARIO: answer {"text":"noted ${word}"}` }]);
    for (const word of ['ALPHA', 'BRAVO', 'CHARLIE']) assert.equal((await say(word)).stopReason, 'end_turn');
    const body = (i: number) => JSON.stringify(model!.requests[i]?.body ?? '');
    assert.match(body(model.requests.length - 1), /BRAVO[\s\S]*CHARLIE/, 'before the restore the model sees every turn');

    const fork = conversationFork(session);
    assert.ok(fork, 'claude-agent-acp offers a fork at a message');
    const first = session.sessionId;
    const second = session.model.messages('user')[1]!;
    assert.match(second.text, /BRAVO/);
    await fork.fork(second);
    const sent = frames.find((f) => f.method === 'session/fork') as { params: { sessionId: string; _meta?: { claudeCode?: { options?: { resumeSessionAt?: string } } } } } | undefined;
    assert.equal(sent?.params.sessionId, first, 'session/fork names the running session');
    assert.match(sent?.params._meta?.claudeCode?.options?.resumeSessionAt ?? '', /^[0-9a-f-]{36}$/, 'at a message id of its session file');
    assert.notEqual(session.sessionId, first, 'the session goes on under the fork id');
    assert.equal(session.model.sessionId, session.sessionId);
    assert.ok(
      frames.some((f) => f.method === 'session/close' && (f.params as { sessionId?: string }).sessionId === first),
      'the old session is closed',
    );
    assert.deepEqual(
      session.model.messages('user').map((m) => m.text.split('\n')[0]),
      ['Remember ALPHA.'],
      'the transcript drops the message and what followed',
    );

    let from = model.requests.length;
    assert.equal((await say('DELTA')).stopReason, 'end_turn');
    const next = model.requests.slice(from).map((r) => JSON.stringify(r.body ?? ''));
    assert.ok(next.length >= 1, 'the model got the next request');
    for (const request of next) {
      assert.match(request, /ALPHA[\s\S]*DELTA/);
      assert.doesNotMatch(request, /BRAVO|CHARLIE/, 'the later turns are gone from what the model receives');
    }

    // Back to before the first message: nothing of the conversation is left.
    await fork.fork(session.model.messages('user')[0]!);
    assert.deepEqual(session.model.messages('user'), []);
    from = model.requests.length;
    assert.equal((await say('ECHO')).stopReason, 'end_turn');
    for (const request of model.requests.slice(from).map((r) => JSON.stringify(r.body ?? ''))) {
      assert.match(request, /ECHO/);
      assert.doesNotMatch(request, /ALPHA|DELTA/, 'nothing before the first message is left');
    }
  });
});
