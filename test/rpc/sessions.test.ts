/**
 * pi-family RPC agents keep each session in a file (`<time>_<id>.jsonl`): `--resume ID` through the CLI
 * finds it beside the new session's file and `switch_session`es to it, so the model's next request carries
 * the first run's prompt; an id with no file gets a new session, said as such (in the stored transcript too, with
 * the notice catalog's phrase beside the English).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import type { NoticeEntity } from '../../src/session/sessionModel';
import { SessionStore } from '../../src/session/sessionStore';
import { runCli } from '../support/cli';
import { OMP_RPC, PI_RPC, scratchDirs } from './agents';

const events = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('RPC agents: --resume switches to the session file', () => {
  for (const agent of [PI_RPC, OMP_RPC]) {
    it(`${agent.label}: a second run with --resume continues the first session`, { timeout: 120_000 }, async () => {
      assert.ok(agent.installed(), `${agent.id} is not installed: run scripts/setup-agents.sh`);
      const model = await startScriptedModel();
      try {
        const { scratch, workspace } = scratchDirs(`rpc-resume-${agent.id}`);
        const config = agent.prepare({ scratch, modelUrl: model.url, workspace, args: ['--session-dir', path.join(scratch, 'sessions')] });
        const cfgFile = path.join(scratch, 'agents.json');
        fs.writeFileSync(cfgFile, JSON.stringify([{ ...config, inheritEnv: false }]));
        const common = ['--config', cfgFile, '--cwd', workspace, '--state-dir', path.join(scratch, 'state'), '--format', 'json'];
        const first = await runCli([...common, 'The word is OTTER-55.\nSCENARIO: answer {"text": "ok"}'], workspace);
        assert.equal(first.code, 0, first.stderr);
        const id = String(events(first.stdout).find((e) => e.type === 'session')!.sessionId);
        const before = model.requests.length;
        const second = await runCli([...common, '--resume', id, 'Which word?\nSCENARIO: answer {"text": "said"}'], workspace);
        assert.equal(second.code, 0, second.stderr);
        const started = events(second.stdout).find((e) => e.type === 'session')!;
        assert.equal(started.attach, 'resumed', String(started.attachDetail));
        assert.equal(started.sessionId, id);
        // The stored transcript says so in English, with the catalog phrase the editor words in the person's language.
        const store = new SessionStore(path.join(scratch, 'state'));
        // (A connection the sandbox refused at start — omp asks a model host — is a notice of its own.)
        const noticeOf = (sessionId: string) => store.transcript(sessionId)?.find((e): e is NoticeEntity => e.kind === 'notice' && e.code !== 'sandbox');
        const resumed = noticeOf(id);
        assert.equal(resumed?.title, 'Session resumed');
        assert.deepEqual(resumed?.phrases, { title: { key: 'sessionResumed' }, detail: { key: 'switchedDetail', args: [id] } });
        const bodies = model.requests.slice(before).map((r) => JSON.stringify(r.body ?? null));
        assert.ok(
          bodies.some((b) => b.includes('OTTER-55') && b.includes('Which word?')),
          'the model did not see the first run',
        );
        // An id with no session file: a new session, and why.
        const third = await runCli([...common, '--resume', 'no-such-session', 'Hello\nSCENARIO: answer {"text": "hi"}'], workspace);
        const fresh = events(third.stdout).find((e) => e.type === 'session')!;
        assert.equal(fresh.attach, 'new');
        assert.match(String(fresh.attachDetail), /no session file for it in /);
        assert.deepEqual(noticeOf(String(fresh.sessionId))?.phrases?.title, { key: 'newSession' });
      } finally {
        await model.close();
      }
    });
  }
});
