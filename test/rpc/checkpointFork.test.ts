/**
 * A conversation restored to a checkpoint with pi 0.73.1 (RPC, upstream `fork`) against the scripted model:
 * after going back to before the second prompt, the model's next request lacks the second and third turns,
 * and the session's transcript lacks them too. Run: npx tsc -p . && node --test out/test/rpc/checkpointFork.test.js
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { headlessRpcUi } from '../../src/rpc/extensionUi';
import { RpcAgentSession } from '../../src/rpc/rpcAgentSession';
import { RpcSession } from '../../src/rpc/rpcSession';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { conversationFork } from '../../src/session/conversationFork';
import { memoryLogger, PI_RPC, scratchDirs } from './agents';

const skip = PI_RPC.installed() || process.env.AGENT_HOST_REQUIRE_AGENTS === '1' ? false : 'pi-coding-agent 0.73.1 not installed (scripts/setup-agents.sh pi-acp)';

describe('conversation restore with pi (RPC)', { skip }, () => {
  let model: ScriptedModel | undefined;
  let session: RpcAgentSession | undefined;
  after(async () => {
    await session?.shutdown();
    await model?.close();
  });

  it("the model's next request lacks the turns after the restored message; the transcript drops them", { timeout: 90_000 }, async () => {
    model = await startScriptedModel();
    const { scratch, workspace } = scratchDirs('rpc-checkpoint');
    const config = PI_RPC.prepare({ scratch, modelUrl: model.url, workspace, args: ['--session-dir', path.join(scratch, 'sessions')] });
    session = new RpcAgentSession(await RpcSession.start(config, { logger: memoryLogger(), cwd: workspace, rpcUi: headlessRpcUi(), requestTimeoutMs: 20_000 }));
    const say = (word: string) => session!.prompt([{ type: 'text', text: `Remember ${word}.\nSCENARIO: answer {"text":"noted ${word}"}` }]);
    for (const word of ['ALPHA', 'BRAVO', 'CHARLIE']) await say(word);
    const body = (i: number) => JSON.stringify(model!.requests[i]?.body ?? '');
    assert.match(body(model.requests.length - 1), /BRAVO[\s\S]*CHARLIE/, 'before the restore the model sees every turn');

    const fork = conversationFork(session);
    assert.ok(fork, 'pi offers a fork of its session');
    const second = session.model.messages('user')[1]!;
    assert.match(second.text, /BRAVO/);
    await fork.fork(second);
    assert.deepEqual(
      session.model.messages('user').map((m) => m.text.split('\n')[0]),
      ['Remember ALPHA.'],
      'the transcript drops the message and what followed',
    );

    const sent = model.requests.length;
    await say('DELTA');
    const next = model.requests.slice(sent).map((r) => JSON.stringify(r.body ?? ''));
    assert.ok(next.length >= 1, 'the model got the next request');
    for (const request of next) {
      assert.match(request, /ALPHA/);
      assert.match(request, /DELTA/);
      assert.doesNotMatch(request, /BRAVO|CHARLIE/, 'the later turns are gone from what the model receives');
    }
  });
});
