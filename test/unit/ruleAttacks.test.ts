/**
 * The second security review's rule attacks, end to end through the real PermissionBroker and rule store:
 * a person answers "Always allow" to a harmless command, then the agent sends the attack line. The line must
 * be asked again (never answered by the rule), so it never runs. Allowed lines run the way an agent with its
 * own shell tool runs them — `<shell> -c line` — in bash and in zsh, in a scratch project with a scratch
 * HOME. Each attack is also run once directly in that shell to show it really does what the test looks for
 * (so a rule that covered it would fail the test).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { displayWords, plainArgv, plainWords } from '../../src/host/commandWords';
import { PermissionBroker } from '../../src/host/permissionBroker';
import { memoryStore, PermissionRuleStore } from '../../src/host/permissionRules';
import { TerminalService } from '../../src/host/terminalService';
import type { PermissionRequestInfo } from '../../src/session/permissions';
import { scratchDir } from '../support/paths';

interface Scene {
  home: string;
  ws: string;
  env: NodeJS.ProcessEnv;
}

function git(scene: Scene, ...args: string[]): string {
  return execFileSync('git', args, { cwd: scene.ws, env: scene.env, encoding: 'utf8' }).trim();
}

/** A project with npm scripts, a git repo pushed to a bare origin and one local commit ahead, and a HOME holding a project of its own. */
function scene(): Scene {
  const root = scratchDir('rules');
  const home = path.join(root, 'home');
  const ws = path.join(root, 'ws');
  mkdirSync(path.join(home, 'important-project'), { recursive: true });
  writeFileSync(path.join(home, 'important-project', 'keep.txt'), 'keep');
  mkdirSync(path.join(ws, 'build'), { recursive: true });
  writeFileSync(path.join(ws, 'build', 'app.o'), 'o');
  writeFileSync(path.join(ws, 'keep.txt'), 'keep');
  writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'true', lint: 'true', 'deploy-to-prod': 'touch PWNED' } }));
  writeFileSync(path.join(ws, 'evil.sh'), '#!/bin/sh\ntouch PWNED\n');
  chmodSync(path.join(ws, 'evil.sh'), 0o755);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.com',
  };
  const s = { home, ws, env };
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', path.join(root, 'origin.git')], { env });
  git(s, 'init', '-q', '-b', 'main');
  git(s, 'add', '.');
  git(s, 'commit', '-qm', 'one');
  git(s, 'remote', 'add', 'origin', path.join(root, 'origin.git'));
  git(s, 'push', '-q', 'origin', 'main');
  git(s, 'commit', '-q', '--amend', '-m', 'rewritten');
  return s;
}

const pwned = (s: Scene) => existsSync(path.join(s.ws, 'PWNED'));
const homeProjectGone = (s: Scene) => !existsSync(path.join(s.home, 'important-project', 'keep.txt'));
const originRewritten = (s: Scene) => readFileSync(path.join(s.ws, '..', 'origin.git', 'refs', 'heads', 'main'), 'utf8').trim() === git(s, 'rev-parse', 'HEAD');

const ATTACKS: { first: string; second: string; effect: (s: Scene) => boolean; shells?: string[] }[] = [
  { first: 'python3 -m pytest', second: `python3 -c "__import__('os').system('touch PWNED')"`, effect: pwned },
  { first: 'rm -f build/app.o', second: 'rm -rf ~/important-project', effect: homeProjectGone },
  { first: 'npm run lint', second: 'npm run deploy-to-prod', effect: pwned },
  { first: 'find . -name "*.log"', second: 'find . -delete', effect: (s) => !existsSync(path.join(s.ws, 'keep.txt')) },
  { first: 'git -C . status', second: 'git push --force origin main', effect: originRewritten },
  { first: 'npm test', second: 'npm test --script-shell=./evil.sh', effect: pwned },
  { first: 'npm test', second: 'bash -c "rm -rf ~/important-project"', effect: homeProjectGone },
  // zsh only: `=(…)` is process substitution and `*(e:…:)` a glob qualifier that runs code.
  { first: 'npm test', second: 'npm test =(touch PWNED)', effect: pwned, shells: ['zsh'] },
  { first: 'npm test', second: "npm test *(e:'touch PWNED':)", effect: pwned, shells: ['zsh'] },
];

const OPTIONS = [
  { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'no', name: 'Reject', kind: 'reject_once' },
];

function run(shell: string, line: string, s: Scene): void {
  assert.ok(s.env.HOME?.startsWith(path.dirname(s.ws)), 'commands run only with the scratch HOME');
  spawnSync(shell, ['-c', line], { cwd: s.ws, env: s.env, stdio: 'ignore', timeout: 60_000 });
}

for (const shell of ['bash', 'zsh']) {
  describe(`"Always allow" covers only what the dialog showed (lines run by ${shell})`, () => {
    it(`${shell} is installed (setup installs it)`, () => {
      assert.equal(spawnSync(shell, ['-c', 'true']).status, 0, `${shell} is missing: run npm run setup`);
    });
    for (const attack of ATTACKS) {
      const applies = !attack.shells || attack.shells.includes(shell);
      it(`after "Always allow" on \`${attack.first}\`, \`${attack.second}\` asks again${applies ? '' : ` (and ${shell} cannot run it)`}`, async () => {
        const s = scene();
        const rules = new PermissionRuleStore(memoryStore());
        const asked: string[] = [];
        // The person: "Always allow" the first command; "Reject" anything after it.
        const broker = new PermissionBroker({ rules, presenter: () => async (p) => (asked.push(String((p.request.toolCall.rawInput as { command: string }).command)) === 1 ? 'always' : 'no') });
        // The agent: asks, and runs the line in its shell only when allowed.
        const agentRuns = async (line: string, id: string) => {
          const request: PermissionRequestInfo = {
            sessionId: 's',
            agentName: 'hostile',
            toolCall: { kind: 'tool_call', id, title: line, toolKind: 'execute', status: 'pending', content: [], locations: [], rawInput: { command: line } },
            options: OPTIONS,
          };
          const decision = await broker.decide(request, new AbortController().signal);
          const allowed = decision.outcome === 'selected' && OPTIONS.find((o) => o.optionId === decision.optionId)?.kind.startsWith('allow');
          if (allowed) run(shell, line, s);
          return decision;
        };
        await agentRuns(attack.first, '1');
        assert.equal(rules.list().length, 1, `"Always allow" on \`${attack.first}\` made a rule`);
        const second = await agentRuns(attack.second, '2');
        assert.deepEqual(asked, [attack.first, attack.second], 'the attack line was answered by the rule instead of asking');
        assert.equal(second.by, 'user');
        assert.equal(attack.effect(s), false, 'the attack line ran');
        // The line is a real attack in this shell: run directly, it does what the test looks for.
        run(shell, attack.second, s);
        assert.equal(attack.effect(s), applies, applies ? `\`${attack.second}\` did nothing in ${shell}: the check above proves nothing` : `${shell} ran a zsh-only line`);
      });
    }
  });
}

describe('plain words: the allowlist a rule-approved line must pass, in every shell', () => {
  it('splits plain lines into words, quotes removed', () => {
    assert.deepEqual(plainWords(`find . -name "*.log"`), { words: ['find', '.', '-name', '*.log'] });
    assert.deepEqual(plainWords(`git commit -m 'a b'  --author=x@y.z`), { words: ['git', 'commit', '-m', 'a b', '--author=x@y.z'] });
    assert.deepEqual(plainWords(`bash -c "echo hi"`), { words: ['bash', '-c', 'echo hi'] });
  });

  it('refuses anything a shell could expand, chain or redirect', () => {
    for (const line of [
      'npm test; id',
      'npm test && id',
      'a | b',
      'a > b',
      'a < b',
      'echo $(id)',
      'echo `id`',
      'echo $'.concat('{HOME}'),
      'echo $HOME',
      'rm -rf ~',
      'ls *',
      'ls ?',
      'ls [a]',
      'echo {a,b}',
      'npm test =(touch x)',
      "npm test *(e:'touch x':)",
      'a =b',
      'echo "$x"',
      'echo "a\\b"',
      "echo 'a\\b'",
      'echo "!!"',
      'a\nb',
      'a\rb',
      'a\u001b[2Kb',
      "echo 'a",
      'echo #x',
      'a\\ b',
      '',
    ]) {
      assert.ok('reason' in plainWords(line), JSON.stringify(line));
    }
  });

  it('argv is plain when the line shown splits back into the same words', () => {
    assert.deepEqual(plainArgv(['bash', '-lc', 'npm test; id']), { words: ['bash', '-lc', 'npm test; id'] });
    assert.equal(displayWords(['bash', '-lc', 'npm test; id']), "bash -lc 'npm test; id'");
    assert.equal(displayWords(['a', "it's", '=x', '']), `a "it's" '=x' ''`);
    for (const argv of [['echo', 'a\nb'], ['echo', `it's $HOME`], ['x', 'a\\b'], []]) assert.ok('reason' in plainArgv(argv), JSON.stringify(argv));
  });
});

describe("the terminal service runs a shell line with /bin/sh, never the user's $SHELL", () => {
  it('a line sent with SHELL=zsh is run by sh (zsh syntax does nothing)', async () => {
    const ws = scratchDir('sh');
    const terminals = new TerminalService(() => [ws], {}, { baseEnv: () => ({ PATH: process.env.PATH ?? '', SHELL: '/usr/bin/zsh' }) });
    const { terminalId: id } = await terminals.create({ command: 'echo "zsh=$ZSH_VERSION" > which.txt' });
    await terminals.waitForExit(id);
    assert.equal(readFileSync(path.join(ws, 'which.txt'), 'utf8'), 'zsh=\n');
    terminals.disposeAll();
  });
});
