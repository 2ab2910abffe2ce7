/**
 * What reaches an agent's terminal command of the environment it asks for (security review 2, finding 8):
 * through the built CLI with the intruder agent, a `git diff`, a bash line and an npm script asked to run
 * with variables that would run the agent's code; none does, and the dropped names are said.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { TerminalService } from '../../src/host/terminalService';
import { runIntruder, outputOf } from '../support/intruderCli';
import { scratchDir } from '../support/paths';

const scratch: string[] = [];
after(() => {
  for (const d of scratch) fs.rmSync(d, { recursive: true, force: true });
});

/** A git repository with a committed file changed since, and everything an attacker needs beside it. */
function setup(): { ws: string; marker: string; hostile: { name: string; value: string }[] } {
  const dir = scratchDir('term-env');
  scratch.push(dir);
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'ignore' });
  git('init', '-q');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'original\n');
  fs.writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'ws', scripts: { hello: 'echo hello from the script' } }));
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'changed\n');
  // Every way in runs this: it leaves the marker file behind.
  const marker = path.join(dir, 'pwned');
  const evil = path.join(dir, 'evil.sh');
  fs.writeFileSync(evil, `#!/bin/sh\necho "$0 $*" >> '${marker}'\n`, { mode: 0o755 });
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  for (const name of ['git', 'npm', 'bash', 'sh']) fs.writeFileSync(path.join(bin, name), fs.readFileSync(evil), { mode: 0o755 });
  // A repository of the agent's whose config runs its diff program.
  const evilGit = path.join(dir, 'evil.git');
  execFileSync('git', ['init', '-q', '--bare', evilGit]);
  fs.appendFileSync(path.join(evilGit, 'config'), `[diff]\n\texternal = ${evil}\n`);
  const hostile = [
    { name: 'GIT_EXTERNAL_DIFF', value: evil },
    { name: 'GIT_DIR', value: evilGit },
    { name: 'GIT_CONFIG_COUNT', value: '1' },
    { name: 'GIT_CONFIG_KEY_0', value: 'core.pager' },
    { name: 'GIT_CONFIG_VALUE_0', value: evil },
    { name: 'npm_config_script_shell', value: evil },
    { name: 'PATH', value: bin },
    { name: 'BASH_ENV', value: evil },
    { name: 'NO_COLOR', value: '1' },
    { name: 'LANG', value: '../evil' },
    { name: 'ASKED_BY_USER', value: 'yes' },
  ];
  return { ws, marker, hostile };
}

describe("a terminal command's environment (allowlist)", () => {
  it('git diff, a bash line and an npm script run none of the code the agent hid in their environment; the dropped names are said', () => {
    const { ws, marker, hostile } = setup();
    const plan = [
      { terminal: { command: 'git', args: ['diff'], env: hostile } },
      { terminal: { command: 'bash', args: ['-c', 'git diff --stat; echo "[$NO_COLOR] [$ASKED_BY_USER] [$LANG]"'], env: hostile } },
      { terminal: { command: 'npm', args: ['run', '--silent', 'hello'], env: hostile } },
    ];
    const r = runIntruder(ws, plan, ['--approve-all', '--allow-env', 'ASKED_BY_USER', '--format', 'json', '--log-level', 'warn']);
    assert.equal(r.steps.length, 3, r.stderr);
    assert.ok(!fs.existsSync(marker), `the agent's code ran: ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`);
    // Each command did its own work, with the harmless and the user-allowed variables only.
    assert.match(outputOf(r.steps[0]), /^-original\n\+changed$/m);
    assert.match(outputOf(r.steps[1]), /a\.txt \| 2 \+-/);
    assert.match(outputOf(r.steps[1]), new RegExp(`\\[1\\] \\[yes\\] \\[${process.env.LANG ?? ''}\\]`));
    assert.match(outputOf(r.steps[2]), /hello from the script/);
    // Said in the log and in the transcript (a notice beside the tool card), naming every dropped variable.
    const dropped = 'GIT_EXTERNAL_DIFF, GIT_DIR, GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0, npm_config_script_shell, PATH, BASH_ENV, LANG';
    for (const command of ['git', 'bash', 'npm']) {
      assert.ok(r.stderr.includes(`Refused the agent's terminal/create: "${command}" ran without ${dropped}: `), r.stderr);
    }
    const notices = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { entity?: { kind?: string; title?: string; detail?: string } })
      .filter((e) => e.entity?.kind === 'notice' && e.entity.detail?.includes(`ran without ${dropped}`));
    assert.equal(notices.length, 3, r.stdout);
    assert.match(notices[0]!.entity!.detail!, /--allow-env NAME/);
  });

  it('a variable the user allows by name reaches the command, even one that runs code', () => {
    const { ws, marker, hostile } = setup();
    const r = runIntruder(ws, [{ terminal: { command: 'git', args: ['diff'], env: hostile.filter((v) => v.name === 'GIT_EXTERNAL_DIFF') } }], ['--approve-all', '--allow-env', 'GIT_EXTERNAL_DIFF']);
    assert.equal(r.steps.length, 1, r.stderr);
    assert.match(fs.readFileSync(marker, 'utf8'), /evil\.sh a\.txt /);
    assert.doesNotMatch(r.stderr, /ran without/);
  });

  it('what is said of a flood of odd names stays short and on one line', async () => {
    const { ws } = setup();
    const terminals = new TerminalService(() => [ws]);
    const env = [{ name: 'A\nFAKE LOG LINE', value: 'x' }, ...Array.from({ length: 30 }, (_, i) => ({ name: `V${i}`, value: 'x' }))];
    const created = await terminals.create({ command: process.execPath, args: ['-e', '0'], env });
    await terminals.release(created.terminalId);
    assert.match(created.droppedEnv ?? '', /ran without "A\\nFAKE LOG LINE", V0, .*, V18 and 11 more: /);
    assert.doesNotMatch(created.droppedEnv ?? '', /\n/);
  });
});
