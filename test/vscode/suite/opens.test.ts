/// <reference types="mocha" />
/**
 * What the extension opens on an agent's word, in the real extension host: "Export the session as HTML" (Agent
 * Commands) with the fake RPC agent (out/test/fixtures/rpcFakeAgent.js) answering an honest and a hostile path,
 * and url-mode elicitations from the hostile ACP agent (mode `ask-url`). vscode.env.openExternal and the
 * dialogs are replaced (the test and the extension share one vscode API object): what reaches the OS opener
 * is recorded, never run.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentHostApi } from '../../../src/extension';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const FIXTURES = path.join(REPO, 'out', 'test', 'fixtures');

/** Replaces `target[name]` for the duration of `run`. */
async function replacing<T>(target: object, name: string, fake: (...a: unknown[]) => unknown, run: () => Promise<T>): Promise<T> {
  const t = target as Record<string, unknown>;
  const original = t[name];
  t[name] = fake;
  try {
    return await run();
  } finally {
    t[name] = original;
  }
}

/** Runs `action` with openExternal and showWarningMessage recorded; a modal warning is answered with its first button. */
async function recording(action: () => Promise<unknown>): Promise<{ opened: string[]; warnings: { message: string; modal: boolean; detail?: string }[] }> {
  const opened: string[] = [];
  const warnings: { message: string; modal: boolean; detail?: string }[] = [];
  await replacing(
    vscode.env,
    'openExternal',
    async (uri: unknown) => {
      opened.push((uri as vscode.Uri).toString(true));
      return true;
    },
    () =>
      replacing(
        vscode.window,
        'showWarningMessage',
        async (message: unknown, ...rest: unknown[]) => {
          const options = typeof rest[0] === 'object' && rest[0] !== null ? (rest[0] as vscode.MessageOptions) : undefined;
          warnings.push({ message: String(message), modal: !!options?.modal, ...(options?.detail ? { detail: options.detail } : {}) });
          return options?.modal ? rest[1] : undefined;
        },
        action,
      ),
  );
  return { opened, warnings };
}

describe('What the extension opens for an agent (export, elicitation URLs)', () => {
  let api: AgentHostApi;
  let dir: string;
  let savedAgents: unknown;
  const config = () => vscode.workspace.getConfiguration('agentHost');

  async function useAgent(agent: { name: string; args: string[]; env?: Record<string, string>; protocol?: string }): Promise<void> {
    const others = api.manager.agents().filter((a) => a.name !== agent.name);
    await config().update('agents', [...others, { command: process.execPath, ...agent, env: { ELECTRON_RUN_AS_NODE: '1', ...agent.env } }], vscode.ConfigurationTarget.Workspace);
    await api.manager.stop();
    api.manager.select(agent.name);
  }

  /** Agent Commands → "Export the session as HTML", with the fake RPC agent's export planned by `plan` (honest when absent). */
  async function exportWith(name: string, plan?: Record<string, unknown>): Promise<Awaited<ReturnType<typeof recording>>> {
    await useAgent({ name, args: [path.join(FIXTURES, 'rpcFakeAgent.js'), 'upstream'], protocol: 'rpc', env: plan ? { FAKE_EXPORT: JSON.stringify(plan) } : {} });
    await api.manager.ensureStarted();
    return recording(() =>
      replacing(
        vscode.window,
        'showQuickPick',
        async (items: unknown) => ((await items) as { label: string }[]).find((i) => i.label === 'Export the session as HTML'),
        async () => vscode.commands.executeCommand('agentHost.agentCommands'),
      ),
    );
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<AgentHostApi>('agent-host.agent-host');
    assert.ok(ext);
    api = ext.isActive ? ext.exports : await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder, 'no workspace folder is open');
    // The fixture's logs in the temp folder: the agent runs sandboxed (the default), which lets it write there.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opens-'));
    savedAgents = config().inspect('agents')?.workspaceValue;
  });

  it('Export the session as HTML opens the .html file the agent was asked to write', async () => {
    const { opened, warnings } = await exportWith('fake-rpc-export');
    assert.deepEqual(warnings, []);
    assert.equal(opened.length, 1);
    assert.match(opened[0]!, /^file:\/\/.*\/agent-host-export-[^/]+\/session\.html$/);
  });

  it('Export the session as HTML opens nothing when the agent answers another file, and says so', async () => {
    const desktop = path.join(dir, 'run.desktop');
    const hostile = await exportWith('fake-rpc-export-hostile', { write: [desktop], answer: desktop });
    assert.deepEqual(hostile.opened, [], 'an external open happened');
    assert.deepEqual(
      hostile.warnings.map((w) => w.message),
      ['The exported session was not opened: the file it answered is not in the export folder (the log has its answer). Only the .html file the agent was asked to write is opened.'],
    );
    const leading = await exportWith('fake-rpc-export-link', { write: [path.join(dir, 'evil.html')], symlink: { path: '{out}', target: path.join(dir, 'evil.html') }, answer: '{out}' });
    assert.deepEqual(leading.opened, [], 'an external open happened');
    assert.match(leading.warnings[0]?.message ?? '', /^The exported session was not opened: the file it answered leads out of the export folder/);
  });

  it('an elicitation URL opens only as an http(s) page shown whole; file:, vscode: and javascript: are declined and said', async () => {
    const log = path.join(dir, 'ask-url.ndjson');
    const page = 'https://auth.example.com/device?code=ABCD-1234';
    const urls = ['file:///etc/passwd', 'vscode://vscode.git/clone?url=https://evil.example/x', 'javascript:alert(1)', page];
    await useAgent({ name: 'hostile-ask-url', args: [path.join(FIXTURES, 'hostileAgent.js'), 'ask-url', JSON.stringify(urls)], env: { HOSTILE_LOG: log } });
    const { opened, warnings } = await recording(async () => assert.equal(await api.manager.prompt('sign in'), 'end_turn'));
    assert.deepEqual(opened, [page], 'only the https page reaches openExternal');
    const refusals = warnings.filter((w) => !w.modal).map((w) => w.message);
    assert.deepEqual(refusals, [
      'hostile-ask-url asked to open a link, which was not opened: only https and http pages are opened, and this is a file: URL (the log has the link).',
      'hostile-ask-url asked to open a link, which was not opened: only https and http pages are opened, and this is a vscode: URL (the log has the link).',
      'hostile-ask-url asked to open a link, which was not opened: only https and http pages are opened, and this is a javascript: URL (the log has the link).',
    ]);
    const modals = warnings.filter((w) => w.modal);
    assert.deepEqual(modals, [{ message: `hostile-ask-url asks you to open ${page}`, modal: true, detail: 'hostile-ask-url asks: Sign in, please' }]);
    const recorded = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { urlAnswers?: { action: string }[] })
      .find((f) => f.urlAnswers);
    assert.deepEqual(
      recorded?.urlAnswers?.map((a) => a.action),
      ['decline', 'decline', 'decline', 'accept'],
    );
  });

  after(async () => {
    await api?.manager.stop();
    await config().update('agents', savedAgents, vscode.ConfigurationTarget.Workspace);
    api?.manager.select(JSON.parse(process.env.AGENT_HOST_TEST_AGENT ?? '{"name":""}').name);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
});
