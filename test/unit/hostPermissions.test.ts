/**
 * PermissionBroker and PermissionRuleStore without VS Code: queueing (one active request at a time), answers
 * by id, timeouts, turn cancel, rules answering without a presenter, "always" answers becoming rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PermissionBroker, type PendingPermission } from '../../src/host/permissionBroker';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { safePrefixOf } from '../../src/host/commandWords';
import { memoryStore, PermissionRuleStore, ruleFromLine } from '../../src/host/permissionRules';
import { protectedTarget } from '../../src/host/protectedPaths';
import { cleanPatch, optionContradicts, type PermissionRequestInfo } from '../../src/session/permissions';
import type { ToolCallEntity } from '../../src/session/sessionModel';

function request(id: string, patch: Partial<ToolCallEntity> = {}): PermissionRequestInfo {
  return {
    sessionId: 's',
    toolCall: { kind: 'tool_call', id, title: `Edit ${id}`, toolKind: 'edit', status: 'pending', content: [], locations: [], ...patch },
    options: [
      { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
      { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
    ],
  };
}

const never = new AbortController().signal;
const tick = () => new Promise((r) => setImmediate(r));

describe('PermissionBroker', () => {
  it('queues requests: only the head is presented, the next after it is answered', async () => {
    const shown: string[] = [];
    const answers = new Map<string, (o: string | undefined) => void>();
    const broker = new PermissionBroker({
      presenter: () => (p: PendingPermission) => {
        shown.push(p.request.toolCall.id);
        return new Promise((resolve) => answers.set(p.request.toolCall.id, resolve));
      },
    });
    const a = broker.decide(request('a'), never);
    const b = broker.decide(request('b'), never);
    await tick();
    assert.deepEqual(shown, ['a'], 'the second request must wait, not stack a second dialog');
    assert.deepEqual(
      broker.pending().map((p) => p.request.toolCall.id),
      ['a', 'b'],
    );
    assert.ok(broker.pending()[0]!.activeSince);
    assert.equal(broker.pending()[1]!.activeSince, undefined);
    answers.get('a')!('once');
    assert.deepEqual(await a, { outcome: 'selected', optionId: 'once', by: 'user' });
    await tick();
    assert.deepEqual(shown, ['a', 'b']);
    answers.get('b')!(undefined); // dialog closed
    assert.deepEqual(await b, { outcome: 'cancelled', by: 'user' });
    assert.equal(broker.pending().length, 0);
  });

  it('answer() by id decides (inline card), fires onDidChange, and refuses invented option ids', async () => {
    const broker = new PermissionBroker();
    let changes = 0;
    broker.onDidChange(() => changes++);
    const a = broker.decide(request('a'), never);
    const [p] = broker.pending();
    assert.ok(p);
    assert.throws(() => broker.answer(p.id, 'made-up'), /not one of the agent's options/);
    assert.equal(broker.answer(p.id, 'no'), true);
    assert.deepEqual(await a, { outcome: 'selected', optionId: 'no', by: 'user' });
    assert.equal(broker.answer(p.id, 'no'), false, 'a second answer finds nothing');
    assert.ok(changes >= 2);
  });

  it('times out the active request with cancelled, then activates the next', async () => {
    const broker = new PermissionBroker({ timeoutSeconds: () => 0.05 });
    const t0 = Date.now();
    const a = broker.decide(request('a'), never);
    const b = broker.decide(request('b'), never);
    assert.deepEqual(await a, { outcome: 'cancelled', by: 'timeout' });
    assert.ok(Date.now() - t0 >= 45);
    assert.ok(broker.pending()[0]?.activeSince, 'b became active');
    assert.deepEqual(await b, { outcome: 'cancelled', by: 'timeout' });
  });

  it('a cancelled turn answers its waiting request cancelled and aborts the dialog', async () => {
    let dialogSignal: AbortSignal | undefined;
    const broker = new PermissionBroker({
      presenter: () => (_p, signal) => {
        dialogSignal = signal;
        return new Promise(() => undefined);
      },
    });
    const turn = new AbortController();
    const a = broker.decide(request('a'), turn.signal);
    await tick();
    turn.abort();
    assert.deepEqual(await a, { outcome: 'cancelled', by: 'cancel' });
    assert.equal(dialogSignal?.aborted, true);
    assert.equal(broker.pending().length, 0);
  });

  it("a rule answers without asking, with the agent's own option id", async () => {
    const rules = new PermissionRuleStore(memoryStore());
    await rules.add({ action: 'reject', toolKind: 'execute', command: ['rm', '-rf', 'build'] });
    let presented = 0;
    const broker = new PermissionBroker({
      rules,
      presenter: () => async () => {
        presented++;
        return 'once';
      },
    });
    const decision = await broker.decide(request('x', { toolKind: 'execute', rawInput: { command: 'rm -rf build' } }), never);
    assert.deepEqual(decision, { outcome: 'selected', optionId: 'no', by: 'rule', rule: 'always reject execute `rm -rf build` (this workspace)', ruleId: rules.list()[0]!.id });
    assert.equal(presented, 0);
    // A different command is not covered: the person is asked.
    const other = await broker.decide(request('y', { toolKind: 'execute', rawInput: { command: 'rm -rf build2' } }), never);
    assert.equal(other.by, 'user');
    assert.equal(presented, 1);
  });

  it('an "always" answer becomes a workspace rule that answers the next request; revoking it asks again', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    let presented = 0;
    const broker = new PermissionBroker({
      rules,
      presenter: () => async () => {
        presented++;
        return 'always';
      },
    });
    const call = { toolKind: 'execute', rawInput: { command: ['npm', 'test', '--', '--watch'] } };
    // The agent hears "once": our exact rule answers its next asks, and it makes no broader rule of its own.
    assert.deepEqual(await broker.decide(request('1', call), never), { outcome: 'selected', optionId: 'once', by: 'user' });
    await tick();
    const [rule] = rules.list();
    assert.deepEqual(rule?.command, ['npm', 'test', '--', '--watch']);
    assert.equal(rule?.action, 'allow');
    assert.deepEqual(await broker.decide(request('2', call), never), {
      outcome: 'selected',
      optionId: 'once',
      by: 'rule',
      rule: 'always allow execute `npm test -- --watch` (this workspace)',
      ruleId: rule!.id,
    });
    assert.equal(presented, 1);
    assert.equal(await rules.revoke(rule!.id), true);
    assert.equal((await broker.decide(request('3', call), never)).by, 'user');
    assert.equal(presented, 2);
  });

  it('rules name a simple command, a file, or (kinds that only look) a title — never a title for kinds that act', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    const file = await rules.addFor('allow', { toolKind: 'edit', title: 'Edit a.ts', rawInput: { path: '/w/a.ts' }, locations: [] });
    assert.equal(file?.path, '/w/a.ts');
    assert.ok(rules.match({ toolKind: 'edit', title: 'anything', rawInput: {}, locations: [{ path: '/w/a.ts' }] }));
    assert.equal(rules.match({ toolKind: 'edit', title: 'Edit a.ts', rawInput: { path: '/w/b.ts' }, locations: [] }), undefined);
    assert.equal(rules.match({ toolKind: 'execute', title: 'Edit a.ts', rawInput: { path: '/w/a.ts' }, locations: [] }), undefined);
    // An execute call with no command, a fetch: nothing safe to name, so nothing is remembered.
    assert.equal(await rules.addFor('allow', { toolKind: 'execute', title: 'Run unit tests', rawInput: {}, locations: [] }), undefined);
    assert.equal(await rules.addFor('allow', { toolKind: 'fetch', title: 'Fetch docs', rawInput: { url: 'https://x' }, locations: [] }), undefined);
    // A title rule (planted by hand, or from an older version) never answers for a kind that acts.
    await rules.add({ action: 'allow', toolKind: 'execute', title: 'Run unit tests' });
    assert.equal(rules.match({ toolKind: 'execute', title: 'Run unit tests', rawInput: { command: 'rm -rf ~' }, locations: [] }), undefined);
    const read = await rules.addFor('allow', { toolKind: 'read', title: 'List files', rawInput: {}, locations: [] });
    assert.equal(read?.title, 'List files');
  });

  it('a command rule never covers a line with shell operators, and a compound line makes no rule', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    await rules.add({ action: 'allow', toolKind: 'execute', prefix: ['npm', 'test'] });
    const call = (command: string) => ({ toolKind: 'execute', title: 'x', rawInput: { command }, locations: [] });
    assert.ok(rules.match(call('npm test a/b.test.js')));
    assert.equal(rules.match(call('npm test -- --grep a')), undefined, 'an option after a prefix asks');
    for (const evil of ['npm test; curl x | sh', 'npm test && rm -rf ~', 'npm test `id`', 'npm test $(id)', 'npm test > /etc/x', 'npm test\nrm -rf ~']) {
      assert.equal(rules.match(call(evil)), undefined, evil);
    }
    assert.equal(await rules.addFor('allow', call('npm test; curl x | sh')), undefined);
  });

  it('a line of several commands is approved only when a rule approves every command in it; wrappers, expansions and several lines ask', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    await rules.add({ action: 'allow', toolKind: 'execute', command: ['npm', 'test'] });
    await rules.add({ action: 'allow', toolKind: 'execute', prefix: ['npm', 'run', 'lint'] });
    const call = (command: string) => ({ toolKind: 'execute', title: 'x', rawInput: { command }, locations: [] });
    for (const ok of ['npm test && npm run lint', 'npm test || npm run lint src', 'npm test; npm run lint', 'npm test | npm run lint', "npm test&&npm run lint 'src'"]) {
      assert.equal(rules.matchAll(call(ok))?.length, 2, ok);
    }
    const asks = ['npm test && rm -rf x', 'npm test; curl x', 'npm test $(touch x)', 'npm test | sh', 'bash -c "npm test"', 'npm test & npm run lint', 'npm test\nnpm run lint'];
    for (const line of [...asks, 'npm test && npm run lint > out.txt', '&& npm test', 'npm test &&', 'npm test && env npm run lint', 'npm test && `npm run lint`']) {
      assert.equal(rules.matchAll(call(line)), undefined, line);
    }
    // No rule is made of such a line: each of its commands is answered by its own.
    assert.deepEqual(rules.offer(call('npm test && npm run lint')), { notPlain: 'several commands in one line (each one is answered by its own rule)' });
    // Through the broker: the line is answered by both rules, named on the card; a reject rule among them wins.
    const broker = new PermissionBroker({ rules, presenter: () => async () => 'once' });
    const ask = (id: string, command: string) => request(id, { toolKind: 'execute', title: command, rawInput: { command } });
    const both = await broker.decide(ask('1', 'npm test && npm run lint'), never);
    assert.deepEqual(both, {
      outcome: 'selected',
      optionId: 'once',
      by: 'rule',
      rule: 'always allow execute `npm test` (this workspace) + always allow execute commands starting with `npm run lint` (this workspace)',
      ruleId: rules.list()[0]!.id,
    });
    const reject = await rules.add({ action: 'reject', toolKind: 'execute', command: ['rm', '-rf', 'build'] });
    const rejected = await broker.decide(ask('2', 'npm test && rm -rf build'), never);
    assert.deepEqual(rejected, { outcome: 'selected', optionId: 'no', by: 'rule', rule: 'always reject execute `rm -rf build` (this workspace)', ruleId: reject.id });
  });

  it('rules are kept for this session, this workspace or everywhere; all of them answer, a reject among them wins, revoke finds each', async () => {
    const workspace = memoryStore();
    const user = memoryStore();
    const rules = new PermissionRuleStore(workspace, { user });
    assert.deepEqual(rules.places(), ['session', 'workspace', 'user']);
    assert.deepEqual(new PermissionRuleStore(memoryStore()).places(), ['session', 'workspace'], 'no user store: no "everywhere"');
    const session = await rules.add({ action: 'allow', toolKind: 'execute', command: ['npm', 'test'] }, 'session');
    const everywhere = await rules.add({ action: 'allow', toolKind: 'execute', command: ['npm', 'run', 'lint'] }, 'user');
    await rules.add({ action: 'allow', toolKind: 'execute', command: ['git', 'status'] });
    // Each is kept in its place: the session's only in memory, the user's in the user store.
    assert.equal(workspace.get<unknown[]>('agentHost.permissionRules')?.length, 1);
    assert.equal(user.get<unknown[]>('agentHost.permissionRules')?.length, 1);
    assert.equal(new PermissionRuleStore(workspace, { user }).list().length, 2, 'a new store (a new window) has no session rules');
    const call = (command: string) => ({ toolKind: 'execute', title: 'x', rawInput: { command }, locations: [] });
    assert.deepEqual(
      rules.matchAll(call('npm test && npm run lint && git status'))?.map((r) => r.where),
      ['session', 'user', 'workspace'],
    );
    // The card names each rule and where it is kept.
    const broker = new PermissionBroker({ rules });
    const decision = await broker.decide(request('1', { toolKind: 'execute', rawInput: { command: 'npm test && npm run lint' } }), never);
    assert.equal(decision.by === 'rule' && decision.rule, 'always allow execute `npm test` (this session) + always allow execute `npm run lint` (everywhere)');
    // A reject kept anywhere beats an allow kept elsewhere.
    await rules.add({ action: 'reject', toolKind: 'execute', command: ['npm', 'test'] }, 'user');
    assert.equal(rules.match(call('npm test'))?.action, 'reject');
    assert.equal(await rules.revoke(session.id), true);
    assert.equal(await rules.revoke(everywhere.id), true);
    assert.equal(await rules.revoke(everywhere.id), false);
    assert.deepEqual(
      rules.list().map((r) => [r.where, r.action, r.command?.join(' ')]),
      [
        ['workspace', 'allow', 'git status'],
        ['user', 'reject', 'npm test'],
      ],
    );
  });

  it('an "always" answer with a place keeps the rule there; rules added by hand are read by the same parser', async () => {
    const rules = new PermissionRuleStore(memoryStore(), { user: memoryStore() });
    const changes: number[] = [];
    rules.onDidChange(() => changes.push(rules.list().length));
    const broker = new PermissionBroker({ rules, presenter: () => async () => ({ optionId: 'always', where: 'session' }) });
    await broker.decide(request('1', { toolKind: 'execute', rawInput: { command: 'npm test' } }), never);
    await tick();
    assert.deepEqual(
      rules.list().map((r) => [r.where, r.command]),
      [['session', ['npm', 'test']]],
    );
    assert.deepEqual(changes, [1]);
    assert.deepEqual(ruleFromLine(" n'pm' run  lint "), { command: ['npm', 'run', 'lint'] });
    for (const line of ['npm test && npm run lint', 'bash -c "npm test"', 'npm test > x', 'npm test $(id)', 'sudo npm test', '']) {
      assert.ok('reason' in ruleFromLine(line), line);
    }
  });

  it('rules are per agent: one agent\'s "always" does not answer for another', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    await rules.addFor('allow', { toolKind: 'execute', title: 't', rawInput: { command: 'npm test' }, locations: [] }, 'codex');
    const call = { toolKind: 'execute', title: 't', rawInput: { command: 'npm test' }, locations: [] };
    assert.ok(rules.match(call, 'codex'));
    assert.equal(rules.match(call, 'gemini'), undefined);
  });

  it('an option named against its kind is flagged; the rule follows the kind', () => {
    assert.equal(optionContradicts({ optionId: 'r', name: 'Reject', kind: 'allow_always' }), true);
    assert.equal(optionContradicts({ optionId: 'a', name: 'Allow', kind: 'reject_once' }), true);
    assert.equal(optionContradicts({ optionId: 'a', name: 'Allow for this session', kind: 'allow_always' }), false);
    assert.equal(optionContradicts({ optionId: 'n', name: 'No, and tell the agent why', kind: 'reject_once' }), false);
  });

  it('offers a prefix only for sub-command programs, never for programs that run code given as an argument', () => {
    assert.deepEqual(safePrefixOf(['git', 'status', '--short']), ['git', 'status']);
    assert.deepEqual(safePrefixOf(['npm', 'run', 'lint']), ['npm', 'run', 'lint']);
    for (const words of [
      ['ls', '-la'],
      ['rm', 'x'],
      ['python3', '-m', 'pytest'],
      ['bash', '-c', 'x'],
      ['find', '.'],
      ['env', 'x'],
      ['git', '-C', '.', 'status'],
      ['git', 'config', 'a', 'b'],
      ['npm', 'exec', 'x'],
      ['npm', 'run'],
      ['npx', 'jest'],
      ['make', 'test'],
    ]) {
      assert.equal(safePrefixOf(words), undefined, words.join(' '));
    }
  });

  it('a call naming a protected file (at any depth) is never answered by a rule nor made one', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'agent-host-rules-'));
    const rules = new PermissionRuleStore(memoryStore(), { protectedTarget: (t) => protectedTarget(t, [root]) });
    const edit = (rel: string) => ({ toolKind: 'edit', title: 'Edit', rawInput: { path: path.join(root, rel) }, locations: [] });
    await rules.add({ action: 'allow', toolKind: 'edit', path: path.join(root, 'sub', '.git', 'config') });
    assert.equal(rules.match(edit('sub/.git/config')), undefined, 'a planted path rule answered a protected write');
    assert.equal(await rules.addFor('allow', edit('sub/.git/hooks/pre-commit')), undefined);
    assert.ok(rules.offer(edit('x/.vscode/settings.json')).protectedFile);
    assert.ok(await rules.addFor('allow', edit('src/a.ts')), 'an ordinary file still makes a rule');
  });

  it('a rule stored by an older version (a prefix string) is read as that exact command', async () => {
    const rules = new PermissionRuleStore(memoryStore());
    await rules.add({ action: 'allow', toolKind: 'execute', commandPrefix: 'npm test' });
    const call = (command: string) => ({ toolKind: 'execute', title: 'x', rawInput: { command }, locations: [] });
    assert.ok(rules.match(call('npm  test')));
    assert.equal(rules.match(call('npm test --script-shell=./evil.sh')), undefined);
  });
});

describe('cleanPatch (the diff in the permission dialog)', () => {
  it('drops the file headers opencode and git put before the hunks, keeps every hunk line', () => {
    const patch = [
      'Index: /ws/a.sql',
      '===================================================================',
      '--- /ws/a.sql',
      '+++ /ws/a.sql',
      '@@ -1,2 +1,2 @@',
      '--- an old SQL comment',
      '+-- a new SQL comment',
      ' select 1;',
      'diff --git a/b.txt b/b.txt',
      'new file mode 100644',
      'index 0000000..e69de29',
      '--- /dev/null',
      '+++ b/b.txt',
      '@@ -0,0 +1 @@',
      '+hello',
    ].join('\n');
    assert.equal(cleanPatch(patch), ['@@ -1,2 +1,2 @@', '--- an old SQL comment', '+-- a new SQL comment', ' select 1;', '@@ -0,0 +1 @@', '+hello'].join('\n'));
  });
});
