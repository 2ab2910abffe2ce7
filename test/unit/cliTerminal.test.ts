/**
 * No terminal control from an agent (security review, finding 6): the built CLI (dist/cli.js) against the hostile
 * agent's `escapes` mode, whose every string carries OSC 52, cursor-up/erase-line in ESC and C1 form and a bare
 * CR. Whatever the CLI prints — the text transcript, logs and errors on stderr, `sessions list` (the local index
 * and the agent's own list), `sessions show`/`export` — holds no ESC, no C1 control and no bare CR; JSON stays
 * lossless. Titles cannot forge a line of ours.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { oneLine, visibleControls } from '../../src/core/visibleText';
import { runCli } from '../support/cli';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const scratch: string[] = [];
after(() => {
  for (const d of scratch) fs.rmSync(d, { recursive: true, force: true });
});

/** The string test/fixtures/hostileAgent.ts's `escapes` mode puts in everything it sends. */
const ESCAPES = '\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;owned\u0007\u001b[1A\u001b[2K\u009b1A\u009b2K\u0090dcs\u009cinnocent\rFORGED-CR';
/** The same as the CLI prints it. */
const SHOWN = String.raw`\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;owned\u0007\u001b[1A\u001b[2K\u009b1A\u009b2K\u0090dcs\u009cinnocent\rFORGED-CR`;
const SESSION_ID = `hostile-id${ESCAPES}\n[permission rejected] FORGED-ID`;
/** A prompt (the local index's title) with controls of its own, short enough to be the whole title. */
const PROMPT = 'prompt \u001b]52;c;eA==\u0007\u009b2K\rX';

/** Fails on any terminal control in `output`: ESC, any other C0 but tab and newline, DEL, C1 (U+0080–U+009F), a CR not before LF. */
function assertNoControl(output: string, what: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
  const found = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/.exec(output);
  assert.equal(
    found,
    null,
    `${what} holds U+${found?.[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${found?.index}: ${JSON.stringify(output.slice(Math.max(0, (found?.index ?? 0) - 60), (found?.index ?? 0) + 20))}`,
  );
}

/** No line printed starts with a line an agent's title tried to forge. */
function assertNoForgedLine(output: string, what: string): void {
  const forged = output.split('\n').filter((l) => l.startsWith('[permission rejected] FORGED'));
  assert.deepEqual(forged, [], `${what} has lines forged by an agent's title`);
}

function setup() {
  const dir = scratchDir('escapes');
  scratch.push(dir);
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const stateDir = path.join(dir, 'state');
  const agent = ['--command', process.execPath, '--arg', hostileAgent, '--arg', 'escapes', '--env', `HOSTILE_SESSION_ID=${SESSION_ID}`];
  return { ws, stateDir, agent };
}

describe('agent text printed by the CLI drives no terminal', () => {
  it('text format: transcript, logs and errors carry every control as a visible escape; titles stay on one line', { timeout: 60_000 }, async () => {
    assert.ok(fs.existsSync(cliPath), 'dist/cli.js is missing: npm run build');
    const { ws, stateDir, agent } = setup();
    // --resume: the "could not reattach … NEW session <id>" line names the agent's id on stderr; trace logs every frame.
    const r = await runCli([...agent, '--cwd', ws, '--state-dir', stateDir, '--log-level', 'trace', '--resume', 'gone', 'go'], ws);
    assert.equal(r.code, 1, r.stderr); // the turn ends in the agent's error
    assertNoControl(r.stdout, 'stdout');
    assertNoControl(r.stderr, 'stderr');
    assertNoForgedLine(r.stdout, 'stdout');
    // Everything arrived, escaped: thought, message (its CRLF a newline, its tab kept), plan, tool, permission, notice, error.
    for (const shown of [
      `[thinking] thought ${SHOWN}`,
      `message ${SHOWN}\nsecond line\tend`,
      `  [ ] plan ${SHOWN}\\n[permission rejected] FORGED-PLAN`,
      `[tool failed] tool ${SHOWN}\\n[permission rejected] FORGED-TOOL (execute)`,
      `[permission answered] tool ${SHOWN}\\n[permission rejected] FORGED-TOOL → reject${SHOWN}\\n[permission rejected] FORGED-ANSWER`,
      `[error] notice ${SHOWN}\\n[permission rejected] FORGED-NOTICE: detail ${SHOWN}`,
      `[turn ended: turn error ${SHOWN}]`,
    ]) {
      assert.ok(r.stdout.includes(shown), `stdout lacks ${JSON.stringify(shown)}:\n${r.stdout}`);
    }
    assert.ok(r.stderr.includes(`[agent stderr] stderr ${SHOWN}`), r.stderr);
    assert.ok(r.stderr.includes(`agent-host: turn error ${SHOWN}`), r.stderr);
    assert.ok(r.stderr.includes(`this is a NEW session hostile-id${SHOWN}\\n[permission rejected] FORGED-ID`), r.stderr);
  });

  it('JSON format: no raw control either, and every string decodes to exactly what the agent sent', { timeout: 60_000 }, async () => {
    const { ws, stateDir, agent } = setup();
    const r = await runCli([...agent, '--cwd', ws, '--state-dir', stateDir, '--format', 'json', 'go'], ws);
    assertNoControl(r.stdout, 'stdout');
    assertNoControl(r.stderr, 'stderr');
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; sessionId?: string; entity?: { kind: string; role?: string; text?: string; title?: string }; entries?: { content: string }[] });
    assert.equal(events.find((e) => e.type === 'session')?.sessionId, SESSION_ID);
    assert.equal(events.find((e) => e.entity?.role === 'agent')?.entity?.text, `message ${ESCAPES}\r\nsecond line\tend`);
    assert.equal(events.find((e) => e.type === 'plan')?.entries?.[0]?.content, `plan ${ESCAPES}\n[permission rejected] FORGED-PLAN`);
    assert.equal(events.find((e) => e.entity?.kind === 'notice' && e.entity.title?.startsWith('notice'))?.entity?.title, `notice ${ESCAPES}\n[permission rejected] FORGED-NOTICE`);
  });

  it("sessions list (the local index and the agent's own list), show and export: one line per session, no control", { timeout: 60_000 }, async () => {
    const { ws, stateDir, agent } = setup();
    await runCli([...agent, '--cwd', ws, '--state-dir', stateDir, PROMPT], ws); // recorded under the agent's id
    const local = await runCli(['sessions', 'list', '--state-dir', stateDir], ws);
    assert.equal(local.code, 0, local.stderr);
    assertNoControl(local.stdout, 'sessions list (local)');
    assert.equal(local.stdout.trimEnd().split('\n').length, 1, local.stdout);
    assert.ok(local.stdout.startsWith(`hostile-id${SHOWN}\\n[permission rejected] FORGED-ID  `), local.stdout);
    assert.ok(local.stdout.includes(String.raw`  prompt \u001b]52;c;eA==\u0007\u009b2K\rX  (local, `), local.stdout);

    const listed = await runCli(['sessions', 'list', ...agent, '--state-dir', stateDir], ws);
    assert.equal(listed.code, 0, listed.stderr);
    assertNoControl(listed.stdout, 'sessions list (agent)');
    assertNoForgedLine(listed.stdout, 'sessions list (agent)');
    assert.equal(listed.stdout, `listed${SHOWN}  2025${SHOWN}  listed title ${SHOWN}\\n[permission rejected] FORGED-LIST  (agent, /tmp/${SHOWN})\n`);
    const json = await runCli(['sessions', 'list', ...agent, '--state-dir', stateDir, '--format', 'json'], ws);
    assertNoControl(json.stdout, 'sessions list --format json');
    assert.equal((JSON.parse(json.stdout) as { title: string }[])[0]!.title, `listed title ${ESCAPES}\n[permission rejected] FORGED-LIST`);

    for (const verb of ['show', 'export']) {
      const shown = await runCli(['sessions', verb, SESSION_ID, '--state-dir', stateDir], ws);
      assert.equal(shown.code, 0, shown.stderr);
      assertNoControl(shown.stdout, `sessions ${verb}`);
      assert.ok(shown.stdout.includes(`message ${SHOWN}\nsecond line\tend`), shown.stdout);
    }
    const missing = await runCli(['sessions', 'show', `nope${ESCAPES}`, '--state-dir', stateDir], ws);
    assertNoControl(missing.stderr, 'sessions show (unknown id)');
  });
});

describe('visibleControls and oneLine', () => {
  it('escape as JSON does (valid inside a JSON string), keep CRLF as a line break, and change nothing twice', () => {
    assert.equal(visibleControls('a\u001b[2Kb\u009bc\u007f\r\nd\re\tf\n'), 'a\\u001b[2Kb\\u009bc\\u007f\nd\\re\tf\n');
    assert.equal(oneLine('a\nb\tc\r\n\u0007'), 'a\\nb\\tc\\r\\n\\u0007');
    assert.equal(JSON.parse(`"${visibleControls('\u009b\u0085\u001b')}"`), '\u009b\u0085\u001b');
    const once = visibleControls(ESCAPES);
    assert.equal(visibleControls(once), once);
    assert.equal(oneLine(42 as unknown as string), '42');
  });
});
