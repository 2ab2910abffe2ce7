/**
 * Session ids belong to their agent (security review, finding 7): an agent that answers `session/new` with an id
 * the local index already holds for another agent or folder cannot take that record over. Through the built CLI
 * (dist/cli.js), its recording path and the real SessionStore on disk: the owner's record and transcript copy stay
 * byte for byte, the new session runs unrecorded, and its transcript says so.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { SessionStore } from '../../src/session/sessionStore';
import { runCli } from '../support/cli';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const scratch: string[] = [];
after(() => {
  for (const d of scratch) fs.rmSync(d, { recursive: true, force: true });
});

/** Every file of the index and the transcript copies, by path, as bytes. */
function stateFiles(stateDir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else files.set(path.relative(stateDir, p), fs.readFileSync(p, 'base64'));
    }
  };
  walk(stateDir);
  return files;
}

describe('an agent naming another session as its own', () => {
  it("is refused: the owner's record and transcript copy are unchanged, the new session runs unrecorded and says why", { timeout: 90_000 }, async () => {
    assert.ok(fs.existsSync(cliPath), 'dist/cli.js is missing: npm run build');
    const dir = scratchDir('takeover');
    scratch.push(dir);
    const [home, other] = [path.join(dir, 'home'), path.join(dir, 'other')];
    fs.mkdirSync(home);
    fs.mkdirSync(other);
    const stateDir = path.join(dir, 'state');
    const config = path.join(dir, 'agents.json');
    // Both answer session/new with the same id (the hostile agent's `answer` mode echoes the prompt).
    const hostile = (name: string) => ({ name, command: process.execPath, args: [hostileAgent, 'answer'], env: { HOSTILE_SESSION_ID: 'shared-id' } });
    fs.writeFileSync(config, JSON.stringify([hostile('owner'), hostile('thief')]));
    const run = (agent: string, cwd: string, prompt: string, format = 'text') => runCli(['--config', config, '--agent', agent, '--cwd', cwd, '--state-dir', stateDir, '--format', format, prompt], cwd);

    const first = await run('owner', home, 'the owner prompt');
    assert.equal(first.code, 0, first.stderr);
    const store = new SessionStore(stateDir);
    const owned = store.get('shared-id');
    assert.equal(owned?.agent, 'owner');
    assert.ok(JSON.stringify(store.transcript('shared-id')).includes('the owner prompt'));
    const before = stateFiles(stateDir);

    const refusal = `Session not recorded: The id shared-id is already recorded for agent "owner" in ${home}: that session's record and transcript copy are kept, and this session is not recorded.`;
    // Another agent, another folder (text format).
    const thief = await run('thief', other, 'the thief prompt');
    assert.equal(thief.code, 0, thief.stderr); // the session itself runs
    assert.ok(thief.stdout.includes('the thief prompt'), thief.stdout);
    assert.ok(thief.stdout.includes(`[warning] ${refusal}`), thief.stdout);
    // Another agent in the owner's folder, and the owner's own name in another folder (JSON format).
    for (const [agent, cwd] of [
      ['thief', home],
      ['owner', other],
    ] as const) {
      const r = await run(agent, cwd, 'another prompt', 'json');
      assert.equal(r.code, 0, r.stderr);
      const notices = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { entity?: { kind: string; severity?: string; title?: string; detail?: string } })
        .filter((e) => e.entity?.kind === 'notice' && e.entity.title === 'Session not recorded');
      assert.equal(notices.length, 1, `${agent} in ${cwd}: ${r.stdout}`);
      assert.equal(`${notices[0]!.entity!.title}: ${notices[0]!.entity!.detail}`, refusal);
      assert.equal(notices[0]!.entity!.severity, 'warning');
    }

    assert.deepEqual(stateFiles(stateDir), before, 'the index or the transcript copy changed');
    assert.deepEqual(new SessionStore(stateDir).list(), [owned]);
  });
});
