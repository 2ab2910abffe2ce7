/// <reference types="mocha" />
/**
 * Host services with the hostile test agent (out/test/fixtures/hostileAgent.js) in the real extension host:
 * sign-in (agent method → authenticate + retry in the same process; terminal method in a real VS Code
 * terminal, then a restart; an API key kept in SecretStorage and passed in the env), ask_user / elicitation
 * answered through the (replaced) quick pick and input box, an agent writing to disk itself → the turn's
 * changed files, their diff and revert, Reject in the write review, and the modal before a protected write
 * (a nested repository's .git, a root .git file, x/.vscode, deep/.env). Each agent start takes well under
 * a second; dialogs cannot show while tests run, so the UI functions are replaced (the test and the
 * extension share one vscode API object).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentHostApi } from '../../../src/extension';
import { commandLine } from '../../../src/host/signIn';
import type { HostServices } from '../../../src/hostServices';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const HOSTILE = path.join(REPO, 'out', 'test', 'fixtures', 'hostileAgent.js');
const INTRUDER = path.join(REPO, 'out', 'test', 'fixtures', 'intruderAgent.js');

function folder(): string {
  const f = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(f, 'no workspace folder is open');
  return f;
}

function frames(log: string): Record<string, unknown>[] {
  return fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
}

/** Replaces vscode.window[name] for the duration of `run`. */
async function replacing<T>(name: string, fake: (...a: unknown[]) => unknown, run: () => Promise<T>): Promise<T> {
  const win = vscode.window as unknown as Record<string, unknown>;
  const original = win[name];
  win[name] = fake;
  try {
    return await run();
  } finally {
    win[name] = original;
  }
}

describe('Host services with the hostile agent (sign-in, questions, disk edits)', () => {
  let api: AgentHostApi;
  let host: HostServices;
  let dir: string;
  let savedAgents: unknown;
  let savedUi: Pick<HostServices['signIn'], 'chooser' | 'askSecret' | 'confirmCommand'> | undefined;
  const config = () => vscode.workspace.getConfiguration('agentHost');

  async function useAgent(name: string, mode: string, env: Record<string, string> = {}): Promise<{ log: string }> {
    const log = path.join(dir, `${name}.ndjson`);
    fs.rmSync(log, { force: true });
    const agent = { name, command: process.execPath, args: [HOSTILE, mode], env: { ELECTRON_RUN_AS_NODE: '1', HOSTILE_LOG: log, ...env } };
    const others = api.manager.agents().filter((a) => a.name !== name);
    await config().update('agents', [...others, agent], vscode.ConfigurationTarget.Workspace);
    await api.manager.stop();
    api.manager.select(name);
    return { log };
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<AgentHostApi>('agent-host.agent-host');
    assert.ok(ext);
    api = ext.isActive ? ext.exports : await ext.activate();
    host = api.host;
    // The fixture's logs in the temp folder: the agent runs sandboxed (the default), which lets it write there.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-'));
    savedAgents = config().inspect('agents')?.workspaceValue;
    savedUi = { chooser: host.signIn.chooser, askSecret: host.signIn.askSecret, confirmCommand: host.signIn.confirmCommand };
  });

  it('signs in with an agent method: authenticate, then session/new again in the same process', async () => {
    const { log } = await useAgent('hostile-auth', 'auth');
    const offered: string[] = [];
    host.signIn.chooser = async (_agent, methods) => {
      offered.push(...methods.map((m) => `${m.kind}:${m.id}`));
      return methods.find((m) => m.kind === 'agent');
    };
    await api.manager.ensureStarted();
    assert.equal(api.manager.state, 'ready');
    assert.deepEqual(offered, ['agent:hostile-login', 'terminal:hostile-terminal', 'env_var:hostile-key']);
    const methods = frames(log)
      .map((f) => f.method)
      .filter(Boolean);
    assert.deepEqual(methods, ['initialize', 'session/new', 'authenticate', 'session/new']);
  });

  it('unasked, a start that needs sign-in fails at once with a "Sign in" notification; the Sign In command offers the methods', async () => {
    assert.ok(savedUi);
    Object.assign(host.signIn, savedUi); // the extension's own chooser
    const { log } = await useAgent('hostile-auth2', 'auth');
    const notified: string[] = [];
    await replacing(
      'showErrorMessage',
      async (message: unknown, ...items: unknown[]) => {
        notified.push(`${String(message)} [${items.join('|')}]`);
        return undefined;
      },
      async () => {
        await assert.rejects(api.manager.ensureStarted(), /sign in/);
      },
    );
    assert.equal(api.manager.state, 'error');
    assert.match(api.manager.error ?? '', /Log in with Hostile, Log in in a terminal, Hostile API key\. Run "Atrium: Sign In"/);
    assert.deepEqual(notified, ['hostile-auth2 needs you to sign in (Log in with Hostile, Log in in a terminal, Hostile API key). [Sign in]']);
    const picked: string[] = [];
    await replacing(
      'showQuickPick',
      async (items: unknown) => {
        const list = (await items) as (vscode.QuickPickItem & { method: { id: string } })[];
        picked.push(...list.map((i) => `${i.label} (${i.description})`));
        return list.find((i) => i.method.id === 'hostile-login');
      },
      async () => vscode.commands.executeCommand('agentHost.signIn'),
    );
    assert.equal(picked.length, 3);
    assert.equal(picked[0], 'Log in with Hostile (the agent signs in)');
    // The pick shows a terminal method's whole command line before anything runs.
    assert.match(picked[1]!, /^Log in in a terminal \(in a terminal: .*hostileAgent\.js auth login\)$/);
    assert.equal(picked[2], 'Hostile API key (API key)');
    assert.equal(api.manager.state, 'ready');
    assert.deepEqual(
      frames(log)
        .map((f) => f.method)
        .filter(Boolean),
      ['initialize', 'session/new', 'initialize', 'session/new', 'authenticate', 'session/new'],
    );
  });

  it('a terminal method runs the agent command with its args/env in a VS Code terminal, then restarts the agent', async () => {
    const authFile = path.join(dir, 'auth-token');
    const { log } = await useAgent('hostile-term', 'auth', { HOSTILE_AUTH_FILE: authFile });
    host.signIn.chooser = async (_agent, methods) => methods.find((m) => m.kind === 'terminal');
    // First declined: the command the agent chose is shown in full, and nothing runs.
    const shown: string[] = [];
    host.signIn.confirmCommand = async (_agent, method) => {
      shown.push(`${commandLine(method)} | ${Object.keys(method.env).join(',')} | dropped ${method.droppedEnv.join(',')}`);
      return false;
    };
    const opened: string[] = [];
    const sub = vscode.window.onDidOpenTerminal((t) => opened.push(t.name));
    try {
      await assert.rejects(api.manager.ensureStarted());
      assert.equal(shown.length, 1);
      assert.match(shown[0]!, /hostileAgent\.js auth login .*\| .*HOSTILE_LOGIN.* \| dropped NODE_OPTIONS$/);
      assert.ok(!fs.existsSync(authFile) && !opened.length, 'a declined login command ran');
      host.signIn.confirmCommand = async () => true;
      await api.manager.ensureStarted();
    } finally {
      sub.dispose();
    }
    assert.equal(api.manager.state, 'ready');
    assert.ok(fs.existsSync(authFile), 'the login command did not run');
    assert.ok(
      opened.some((n) => /Sign in/.test(n)),
      `no sign-in terminal: ${opened.join(', ')}`,
    );
    // Three processes: refused (login declined), refused (login run), then the restarted one that finds the login.
    assert.equal(frames(log).filter((f) => f.method === 'initialize').length, 3);
  });

  it('a terminal login that fails is said with its exit code, and its terminal stays open with its output until Enter', async () => {
    await useAgent('hostile-term-fail', 'auth'); // no HOSTILE_AUTH_FILE: the login prints why on stderr and exits 1
    host.signIn.chooser = async (_agent, methods) => methods.find((m) => m.kind === 'terminal');
    host.signIn.confirmCommand = async () => true;
    const notified: string[] = [];
    try {
      await replacing(
        'showErrorMessage',
        async (message: unknown) => {
          notified.push(String(message));
          return undefined;
        },
        () => assert.rejects(api.manager.ensureStarted(), /sign in/),
      );
    } finally {
      if (savedUi) Object.assign(host.signIn, savedUi);
    }
    assert.deepEqual(notified, ['Signing in to hostile-term-fail failed: the login command exited with code 1. Its output stays in the terminal "Sign in: Log in in a terminal".']);
    const terminal = vscode.window.terminals.find((t) => t.name === 'Sign in: Log in in a terminal' && !t.exitStatus);
    assert.ok(terminal, `the failed login's terminal closed: ${vscode.window.terminals.map((t) => `${t.name} ${JSON.stringify(t.exitStatus)}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(terminal.exitStatus, undefined, 'the terminal did not wait');
    // Enter closes it, with the login's own exit code.
    const closed = new Promise<vscode.Terminal>((resolve) => {
      const sub = vscode.window.onDidCloseTerminal((t) => {
        if (t !== terminal) return;
        sub.dispose();
        resolve(t);
      });
    });
    terminal.sendText('');
    assert.equal((await closed).exitStatus?.code, 1);
  });

  it("an API key goes to SecretStorage (not settings) and into the agent's env on start", async () => {
    await useAgent('hostile-key', 'auth');
    host.signIn.chooser = async (_agent, methods) => methods.find((m) => m.kind === 'env_var');
    host.signIn.askSecret = async (_agent, _method, varName) => (varName === 'HOSTILE_API_KEY' ? 'sekret-123' : undefined);
    try {
      await api.manager.ensureStarted();
      assert.equal(api.manager.state, 'ready');
      const agent = api.manager.agents().find((a) => a.name === 'hostile-key')!;
      assert.deepEqual(await host.signIn.env(agent), { HOSTILE_API_KEY: 'sekret-123' });
      assert.ok(!JSON.stringify(config().inspect('agents')).includes('sekret'), 'the key leaked into settings');
      // The next start needs no sign-in: the key comes from SecretStorage.
      host.signIn.chooser = async () => assert.fail('asked to sign in again');
      await api.manager.restart();
      assert.equal(api.manager.state, 'ready');
      await host.signIn.forget(agent);
    } finally {
      if (savedUi) Object.assign(host.signIn, savedUi);
    }
  });

  it('ask_user and elicitation are answered through the quick pick and the input box', async () => {
    const { log } = await useAgent('hostile-ask', 'ask');
    const asked: string[] = [];
    const stop = await replacing(
      'showQuickPick',
      async (items: unknown, options: unknown) => {
        const list = (await items) as vscode.QuickPickItem[];
        asked.push(`pick ${list.map((i) => i.label).join('|')} / ${(options as vscode.QuickPickOptions).title ?? ''}`);
        return list[1];
      },
      () =>
        replacing(
          'showInputBox',
          async (o: unknown) => {
            asked.push(`input ${(o as vscode.InputBoxOptions).prompt} / ${(o as vscode.InputBoxOptions).title ?? ''}`);
            return 'Ada';
          },
          () => api.manager.prompt('questions please'),
        ),
    );
    assert.equal(stop, 'end_turn');
    // The agent's name and its question stay in the title (a quick pick's placeholder goes when one types).
    assert.deepEqual(asked.sort(), ['input name / hostile-ask asks: Your name? (1/1)', 'pick a.txt|b.txt / hostile-ask asks: Which file?']);
    const answers = frames(log).find((f) => f.askAnswer) as { askAnswer: { result: unknown }; elicitationAnswer: { result: unknown } };
    assert.deepEqual(answers.askAnswer.result, { outcome: 'answered', text: 'b.txt' });
    assert.deepEqual(answers.elicitationAnswer.result, { action: 'accept', content: { name: 'Ada' } });
    // Each question and its answer stay in the transcript after the dialogs close.
    const notices = (api.manager.current?.model.timeline() ?? []).flatMap((e) => (e.kind === 'notice' ? [`${e.title} → ${e.detail ?? ''}`] : []));
    assert.deepEqual(notices.filter((n) => n.includes(' asked: ')).sort(), ['hostile-ask asked: Which file? → Answer: b.txt', 'hostile-ask asked: Your name? → Answer: name: Ada']);
  });

  it('lists the files an agent changed on disk itself, opens their diff, and reverts them', async () => {
    await useAgent('hostile-disk', 'write-disk');
    const file = path.join(folder(), 'disk-made.txt');
    fs.writeFileSync(file, 'original\n');
    assert.equal(await api.manager.prompt('write disk-made.txt'), 'end_turn');
    assert.equal(fs.readFileSync(file, 'utf8'), 'written by the agent itself\n');
    const changes = (await host.turnChanges.changes(api.manager.activeTabId))?.changes ?? [];
    assert.deepEqual(
      changes.map((c) => [path.basename(c.path), c.status, c.before]),
      [['disk-made.txt', 'modified', 'original\n']],
    );
    // "Show the Last Turn's Changed Files…": pick the file, a diff editor opens.
    await replacing(
      'showQuickPick',
      async (items: unknown) => ((await items) as unknown[])[0],
      async () => vscode.commands.executeCommand('agentHost.showTurnChanges'),
    );
    const diffTab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff);
    assert.ok(diffTab && (diffTab.input as vscode.TabInputTextDiff).modified.fsPath === file, 'no diff editor for the changed file');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const failed = await vscode.commands.executeCommand('agentHost.revertTurnChanges', true);
    assert.deepEqual(failed, []);
    assert.equal(fs.readFileSync(file, 'utf8'), 'original\n', 'revert did not restore the file');
    fs.rmSync(file);
  });

  it('Reject in the write review leaves the file untouched and tells the agent', async () => {
    await config().update('files.reviewWrites', true, vscode.ConfigurationTarget.Workspace);
    const file = path.join(folder(), 'review-me.txt');
    fs.writeFileSync(file, 'keep me\n');
    const shown: string[] = [];
    try {
      await replacing(
        'showInformationMessage',
        async (message: unknown, ...rest: unknown[]) => {
          shown.push(String(message));
          const diff = vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputTextDiff);
          assert.ok(diff, 'the review asks without a diff editor');
          return rest.find((i) => i === 'Reject');
        },
        async () => {
          await assert.rejects(host.documents.write(file, 'changed\n'), /rejected/);
        },
      );
    } finally {
      await config().update('files.reviewWrites', undefined, vscode.ConfigurationTarget.Workspace);
    }
    assert.equal(shown.length, 1);
    assert.equal(fs.readFileSync(file, 'utf8'), 'keep me\n');
    const left = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff);
    assert.equal(left.length, 0, 'the review diff stayed open');
    fs.rmSync(file);
  });

  it('a protected file at any depth asks in a modal (reviewWrites off); closed, nothing is written', async () => {
    const nested = path.join(folder(), 'nested-repo', '.git', 'config');
    fs.mkdirSync(path.dirname(nested), { recursive: true });
    fs.writeFileSync(nested, '[core]\n\tbare = false\n');
    const targets = [nested, path.join(folder(), '.git'), path.join(folder(), 'x', '.vscode', 'settings.json'), path.join(folder(), 'deep', '.env')];
    const plain = path.join(folder(), 'plain-write.txt');
    const log = path.join(dir, 'intruder.ndjson');
    const plan = [...targets.map((p) => ({ write: { path: p, content: '[core]\n\tfsmonitor = "touch pwned"\n' } })), { write: { path: plain, content: 'fine\n' } }];
    const agent = { name: 'intruder', command: process.execPath, args: [INTRUDER], env: { ELECTRON_RUN_AS_NODE: '1', INTRUDER_PLAN: JSON.stringify(plan), INTRUDER_LOG: log } };
    await config().update('agents', [...api.manager.agents().filter((a) => a.name !== agent.name), agent], vscode.ConfigurationTarget.Workspace);
    await api.manager.stop();
    api.manager.select(agent.name);
    const asked: string[] = [];
    try {
      await replacing(
        'showWarningMessage',
        async (message: unknown, options: unknown) => {
          asked.push(`${String(message)}${(options as vscode.MessageOptions).modal ? ' [modal]' : ''}`);
          return undefined; // the modal closed: denied
        },
        async () => assert.equal(await api.manager.prompt('go'), 'end_turn'),
      );
      assert.deepEqual(
        asked,
        targets.map((t) => `The agent wants to write a protected file: ${vscode.workspace.asRelativePath(t)} [modal]`),
      );
      const answers = frames(log).map((f) => ((f.answer as { error?: { message?: string } }).error?.message ?? 'written').replace(/:.*/, ''));
      assert.deepEqual(answers, [...targets.map(() => 'Refused'), 'written']);
      assert.equal(fs.readFileSync(nested, 'utf8'), '[core]\n\tbare = false\n');
      for (const t of targets.slice(1)) assert.ok(!fs.existsSync(t) || fs.statSync(t).isDirectory(), `${t} was written`);
      assert.equal(fs.readFileSync(plain, 'utf8'), 'fine\n');
    } finally {
      for (const p of ['nested-repo', 'x', 'deep', 'plain-write.txt']) fs.rmSync(path.join(folder(), p), { recursive: true, force: true });
    }
  });

  after(async () => {
    await api?.manager.stop();
    await config().update('agents', savedAgents, vscode.ConfigurationTarget.Workspace);
    if (host && savedUi) Object.assign(host.signIn, savedUi);
    api?.manager.select(JSON.parse(process.env.AGENT_HOST_TEST_AGENT ?? '{"name":""}').name);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
});
