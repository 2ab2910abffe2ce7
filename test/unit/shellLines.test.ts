/**
 * Command lines as rules read them (src/host/commandWords.ts: shell-quote behind our fences), and the
 * issue's cases through the real rule store and broker: workspace rules for `npm test` and `npm run lint`
 * approve `npm test && npm run lint` and ask for every line that adds a command, a substitution, a
 * redirection, a wrapper or a second line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plainCommands, plainWords, wrapperReason } from '../../src/host/commandWords';
import { PermissionBroker } from '../../src/host/permissionBroker';
import { memoryStore, PermissionRuleStore } from '../../src/host/permissionRules';
import type { PermissionRequestInfo } from '../../src/session/permissions';

const commands = (line: string) => {
  const parsed = plainCommands(line);
  return 'commands' in parsed ? parsed.commands : parsed.reason;
};

describe('plain command lines (shell-quote behind our fences)', () => {
  it('splits lines joined by &&, ||, ; and | into commands, quotes removed', () => {
    assert.deepEqual(commands('npm test && npm run lint'), [
      ['npm', 'test'],
      ['npm', 'run', 'lint'],
    ]);
    assert.deepEqual(commands('npm test||npm run \'lint\'; git status | grep -c "a b"'), [
      ['npm', 'test'],
      ['npm', 'run', 'lint'],
      ['git', 'status'],
      ['grep', '-c', 'a b'],
    ]);
    // Quoting tricks resolve to the words a shell runs: the rule for `npm test` is the rule for them.
    for (const line of ["'np''m' test", 'n"p"m test', '"npm" \'test\'', 'npm\ttest']) assert.deepEqual(commands(line), [['npm', 'test']], line);
    // Quoted, the parser's specials are plain text.
    assert.deepEqual(commands('git commit -m "a; b && c | d > e (f) #g" && find . -name "*.log"'), [
      ['git', 'commit', '-m', 'a; b && c | d > e (f) #g'],
      ['find', '.', '-name', '*.log'],
    ]);
  });

  it('substitutions, variables and escapes ask, quoted or not', () => {
    for (const line of [
      'npm test $(touch x)',
      'npm test "$(touch x)"',
      'npm test `touch x`',
      'npm test "`touch x`"',
      'echo $HOME',
      "echo $'\\x41'",
      'npm\\ test',
      'npm test \\; id',
      'echo $((1+2))',
    ]) {
      assert.match(String(commands(line)), /substitution, variable or escape/, line);
    }
  });

  it('redirections, process substitution, here-docs, subshells, background jobs, globs and comments ask', () => {
    for (const line of [
      'npm test > out',
      'npm test >> out',
      'npm test 2>out',
      'npm test 2>&1',
      'npm test < in',
      'diff <(ls) x',
      'npm test >(tee x)',
      'cat <<EOF',
      'cat <<< x',
      '(npm test)',
      'npm test &',
      'npm test & rm x',
      'npm test |& sh',
      'npm test &> x',
    ]) {
      assert.match(String(commands(line)), /redirection, subshell or background job/, line);
    }
    assert.match(String(commands('ls *.log')), /pattern/);
    assert.match(String(commands('ls a?')), /pattern/);
    assert.match(String(commands('npm test # hi')), /a comment/);
  });

  it('what the parser reads as text but a shell expands asks: ~, {a,b}, [a], !, zsh =(…) and =cmd', () => {
    for (const line of ['rm -rf ~', 'echo {a,b}', 'ls [a]', 'echo "!!"', 'npm test =(touch x)', "npm test *(e:'touch x':)", '=npm test', 'git show HEAD^']) {
      assert.equal(typeof commands(line), 'string', line);
    }
  });

  it('several lines ask (a newline is no space), and so do control characters and empty commands', () => {
    for (const line of ['npm test\nnpm run lint', 'npm test\rrm x', 'cat <<EOF\nx\nEOF', 'npm test \\\nrm x']) assert.equal(commands(line), 'several lines', JSON.stringify(line));
    assert.equal(commands('npm test\u001b[2K'), 'a control character');
    assert.equal(commands('npm "a\tb"').toString().includes('the word'), true);
    for (const line of ['&& npm test', 'npm test &&', 'npm test ; ; x', '']) assert.equal(typeof commands(line), 'string', line);
    assert.deepEqual(plainWords('npm test; id'), { reason: 'several commands in one line' });
    for (const line of ["npm test 'a", 'npm test "a\'', `npm "test' && rm x`]) assert.equal(commands(line), 'an unclosed quote', line);
  });

  it('wrappers that run code always ask: shells, eval, env, xargs, sudo, find -exec, interpreters given code', () => {
    for (const line of [
      'bash -c "npm test"',
      'sh -c "npm test"',
      '/bin/sh -c "npm test"',
      'eval npm test',
      'env X=1 npm test',
      'X=1 npm test',
      'sudo npm test',
      'xargs npm test',
      'find . -name x -exec rm x +',
      'find . -execdir rm x',
      'node -e "x"',
      'node --eval=x',
      'python -c "x"',
      'python3.12 -Sc "x"',
      'python3',
      'perl -E x',
      'deno eval x',
      'npm test | sh',
      'npm test | python3',
      'time npm test',
      'nohup npm test',
      'timeout 5 npm test',
      'npx -c x',
    ]) {
      assert.match(String(commands(line)), /runs code|changes what the command runs with/, line);
    }
    // Programs that run a named script or module, and find without -exec, are commands like any other.
    for (const words of [
      ['node', 'script.js'],
      ['python3', '-m', 'pytest'],
      ['find', '.', '-name', '*.log'],
      ['npx', 'tsc'],
      ['bun', 'test'],
    ]) {
      assert.equal(wrapperReason(words), undefined, words.join(' '));
    }
  });
});

const OPTIONS = [
  { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'no', name: 'Reject', kind: 'reject_once' },
];
const ask = (id: string, command: string): PermissionRequestInfo => ({
  sessionId: 's',
  toolCall: { kind: 'tool_call', id, title: command, toolKind: 'execute', status: 'pending', content: [], locations: [], rawInput: { command } },
  options: OPTIONS,
});

describe("the issue's lines through the rule store and the broker", () => {
  it('rules for `npm test` and `npm run lint` approve `npm test && npm run lint`; each other line asks the person', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    const test = await rules.add({ action: 'allow', toolKind: 'execute', command: ['npm', 'test'] });
    await rules.add({ action: 'allow', toolKind: 'execute', command: ['npm', 'run', 'lint'] });
    const asked: string[] = [];
    const broker = new PermissionBroker({
      rules,
      presenter: () => async (p) => {
        asked.push(p.request.toolCall.title);
        return 'no';
      },
    });
    const approved = await broker.decide(ask('1', 'npm test && npm run lint'), new AbortController().signal);
    assert.deepEqual(approved, {
      outcome: 'selected',
      optionId: 'once',
      by: 'rule',
      rule: 'always allow execute `npm test` (this workspace) + always allow execute `npm run lint` (this workspace)',
      ruleId: test.id,
    });
    const lines = [
      'npm test && rm -rf x',
      'npm test; curl x',
      'npm test $(touch x)',
      'npm test | sh',
      'bash -c "npm test"',
      'npm test > x',
      'npm test\nnpm run lint',
      'env X=1 npm test',
      'sudo npm test',
    ];
    for (const [i, line] of lines.entries()) {
      const decision = await broker.decide(ask(String(i + 2), line), new AbortController().signal);
      assert.deepEqual(decision, { outcome: 'selected', optionId: 'no', by: 'user' }, line);
    }
    assert.deepEqual(asked, lines);
    // None of them can become a rule either: "always" on a wrapper remembers nothing.
    assert.match(rules.offer(ask('x', 'bash -c "npm test"').toolCall).notPlain ?? '', /runs code/);
    assert.equal(await rules.addFor('allow', ask('x', 'sudo npm test').toolCall), undefined);
  });
});
