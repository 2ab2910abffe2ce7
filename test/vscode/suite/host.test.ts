/// <reference types="mocha" />
/**
 * Host services in the real extension host (code-server): files through the editor (unsaved buffers,
 * WorkspaceEdit + undo, the workspace boundary), the permission broker (rules, timeout), terminals, the IDE
 * tools against the built-in TypeScript language features — directly, over the MCP bridge with the SDK client,
 * and (with opencode as AGENT_HOST_TEST_AGENT) called by a real agent through our MCP server.
 * Modal dialogs cannot show while tests run; the real modal is clicked in test/vscode/hostUi.ts.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentHostApi } from '../../../src/extension';
import { FileService } from '../../../src/host/fileService';
import { TerminalService } from '../../../src/host/terminalService';
import type { HostServices } from '../../../src/hostServices';
import type { PermissionRequestInfo } from '../../../src/session/permissions';
import { until } from '../../support/wait';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');

function folder(): string {
  const f = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(f, 'no workspace folder is open');
  return f;
}

function textOf(result: { content: { text: string }[] }): string {
  return result.content.map((c) => c.text).join('');
}

function permissionRequest(title: string, rawInput: unknown, toolKind = 'execute'): PermissionRequestInfo {
  return {
    sessionId: 'test',
    toolCall: { kind: 'tool_call', id: `t-${Date.now()}`, title, toolKind, status: 'pending', content: [], locations: [], rawInput },
    options: [
      { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
      { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
    ],
  };
}

describe('Host services in a real VS Code', () => {
  let host: HostServices;
  let api: AgentHostApi;

  before(async () => {
    const ext = vscode.extensions.getExtension<AgentHostApi>('agent-host.agent-host');
    assert.ok(ext);
    api = ext.isActive ? ext.exports : await ext.activate();
    host = api.host;
    assert.ok(host?.broker, 'host services are not registered');
  });

  it('fs/read_text_file returns the unsaved editor text, honouring line and limit', async () => {
    const file = path.join(folder(), 'src', 'textUtils.ts');
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(doc.uri, new vscode.Position(0, 0), '// unsaved line\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(doc.isDirty);
    const files = new FileService(() => [folder()], host.documents);
    const whole = await files.readTextFile({ path: file });
    assert.ok(whole.startsWith('// unsaved line\n'), 'the read did not return the buffer');
    assert.ok(!fs.readFileSync(file, 'utf8').includes('unsaved line'), 'the disk must not have it');
    const slice = await files.readTextFile({ path: file, line: 1, limit: 2 });
    assert.equal(slice, '// unsaved line\n/** Small string helpers for the sample workspace. */');
    await vscode.commands.executeCommand('undo');
    await doc.save();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('fs/write_text_file goes through a WorkspaceEdit: the open editor shows it, undo restores', async () => {
    const file = path.join(folder(), 'notes.md');
    fs.writeFileSync(file, 'before\n');
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc);
    const files = new FileService(() => [folder()], host.documents);
    await files.writeTextFile({ path: file, content: 'after\n' });
    assert.equal(doc.getText(), 'after\n', 'the open editor did not follow the write');
    assert.equal(fs.readFileSync(file, 'utf8'), 'after\n', 'the write was not saved');
    await vscode.commands.executeCommand('undo');
    assert.equal(doc.getText(), 'before\n', 'undo did not restore the old text');
    await doc.save();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    const created = path.join(folder(), 'new', 'made-by-agent.txt');
    await files.writeTextFile({ path: created, content: 'fresh\n' });
    assert.equal(fs.readFileSync(created, 'utf8'), 'fresh\n', 'a missing file is created');
  });

  it('refuses writes outside the workspace, also through .. and symlinks', async () => {
    const files = new FileService(() => [folder()], host.documents);
    const outside = path.join(path.dirname(folder()), `outside-${process.pid}.txt`);
    await assert.rejects(files.writeTextFile({ path: outside, content: 'x' }), /outside the workspace/);
    await assert.rejects(files.writeTextFile({ path: path.join(folder(), '..', 'x.txt'), content: 'x' }), /outside the workspace/);
    const link = path.join(folder(), 'escape');
    fs.symlinkSync(path.dirname(folder()), link);
    try {
      await assert.rejects(files.writeTextFile({ path: path.join(link, 'x.txt'), content: 'x' }), /outside the workspace/);
    } finally {
      fs.unlinkSync(link);
    }
    assert.ok(!fs.existsSync(outside));
  });

  it("a rule answers a permission request without a dialog, with the agent's option id", async () => {
    const rule = await host.rules.add({ action: 'allow', toolKind: 'execute', command: ['npm', 'test', '--', '--grep', 'x'] });
    try {
      const decision = await host.broker.decide(permissionRequest('Run tests', { command: 'npm test -- --grep x' }), new AbortController().signal);
      assert.deepEqual(decision, { outcome: 'selected', optionId: 'proceed_once', by: 'rule', rule: 'always allow execute `npm test -- --grep x` (this workspace)', ruleId: rule.id });
      assert.equal(host.broker.pending().length, 0);
    } finally {
      await host.rules.revoke(rule.id);
    }
  });

  it('a permission request nobody answers times out as cancelled (inline mode, timeout setting)', async () => {
    const config = vscode.workspace.getConfiguration('agentHost');
    await config.update('permissions.mode', 'inline', vscode.ConfigurationTarget.Workspace);
    await config.update('permissions.timeoutSeconds', 1, vscode.ConfigurationTarget.Workspace);
    try {
      const t0 = Date.now();
      const pending = host.broker.decide(permissionRequest('Remove build', { command: 'rm -rf build' }), new AbortController().signal);
      assert.equal(host.broker.pending().length, 1, 'the request waits in the broker (inline card)');
      assert.deepEqual(await pending, { outcome: 'cancelled', by: 'timeout' });
      assert.ok(Date.now() - t0 >= 900);
      // answer() from an inline card decides too.
      const second = host.broker.decide(permissionRequest('Remove dist', { command: 'rm -rf dist' }), new AbortController().signal);
      const [p] = host.broker.pending();
      assert.ok(p && host.broker.answer(p.id, 'cancel'));
      assert.deepEqual(await second, { outcome: 'selected', optionId: 'cancel', by: 'user' });
    } finally {
      await config.update('permissions.mode', undefined, vscode.ConfigurationTarget.Workspace);
      await config.update('permissions.timeoutSeconds', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it("a terminal command's output and exit code arrive; a VS Code terminal only on demand, gone on terminal/release", async () => {
    const terminals = new TerminalService(() => [folder()], host.terminals.events);
    const before = vscode.window.terminals.length;
    const { terminalId } = await terminals.create({
      command: process.execPath,
      args: ['-e', 'console.log("hello from the agent terminal"); process.exit(3)'],
      outputByteLimit: 1000,
    });
    const exit = await terminals.waitForExit(terminalId);
    assert.equal(exit.exitCode, 3);
    const out = await terminals.output(terminalId);
    assert.match(out.output, /hello from the agent terminal/);
    assert.equal(out.exitStatus?.exitCode, 3);
    assert.equal(vscode.window.terminals.length, before, 'no VS Code terminal until asked for');
    assert.match(host.terminals.view(terminalId)?.output ?? '', /hello from the agent terminal/, 'what the card shows');
    assert.ok(host.terminals.show(terminalId));
    const term = host.terminals.terminal(terminalId);
    assert.ok(term && vscode.window.terminals.includes(term), 'no VS Code terminal for the command');
    await terminals.release(terminalId);
    await until(() => !vscode.window.terminals.includes(term), { what: 'the released terminal to close' });
    assert.equal(host.terminals.show(terminalId), false, 'a released terminal is not shown again');
  });

  it('the IDE tools return real symbols and definitions from the TypeScript language features', async () => {
    const file = path.join(folder(), 'src', 'textUtils.ts');
    const symbols = await until(
      async () => {
        const r = await host.ideTools.call('get_document_symbols', { abspath: file }, new AbortController().signal);
        const list = JSON.parse(textOf(r)) as { name: string; kind: string; selectionRange: unknown; children: unknown[] }[];
        return list.length ? list : undefined;
      },
      { what: 'TypeScript document symbols', timeoutMs: 60_000, intervalMs: 500 },
    );
    const names = symbols.map((s) => `${s.kind} ${s.name}`);
    assert.ok(names.includes('Function slugify'), `symbols: ${names.join(', ')}`);
    assert.ok(names.includes('Function wordCount'));
    assert.ok(symbols[0]!.selectionRange && Array.isArray(symbols[0]!.children));

    // A use of `slugify` in another file resolves to its definition in textUtils.ts.
    const user = path.join(folder(), 'src', 'useText.ts');
    fs.writeFileSync(user, "import { slugify } from './textUtils';\nexport const s = slugify('A B');\n");
    const defs = await until(
      async () => {
        const r = await host.ideTools.call('find_def_locations', { abspath: user, line: 1, character: 17 }, new AbortController().signal);
        const list = JSON.parse(textOf(r)) as { abspath: string; range: { start: { line: number } } }[];
        return list.length ? list : undefined;
      },
      { what: 'a definition of slugify', timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.equal(defs[0]!.abspath, file);
    assert.equal(defs[0]!.range.start.line, 3, 'slugify is declared on line 4 (0-based 3)');

    const outside = await host.ideTools.call('get_document_symbols', { abspath: '/etc/hosts' }, new AbortController().signal).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    assert.match(outside, /outside the workspace/);
    const lang = JSON.parse(textOf(await host.ideTools.call('ide_language', {}, new AbortController().signal)));
    assert.equal(typeof lang, 'string');
  });

  it('the MCP bridge serves the same IDE tools to an MCP client (the official SDK)', async () => {
    const endpoint = host.toolEndpoint(); // opened here if no agent has opened it yet
    await endpoint.ready;
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'vscode-suite', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.join(REPO, 'dist', 'ideBridge.js')],
        env: { ...(process.env as Record<string, string>), ...endpoint.bridgeEnv(), ELECTRON_RUN_AS_NODE: '1' },
      }),
    );
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'find_def_locations',
        'find_type_def_locations',
        'get_diagnostics',
        'get_document_symbols',
        'get_selected_range',
        'get_visible_range',
        'ide_language',
      ]);
      const r = await client.callTool({ name: 'get_document_symbols', arguments: { abspath: path.join(folder(), 'src', 'textUtils.ts') } });
      assert.match(textOf(r as { content: { text: string }[] }), /"name":"truncate","kind":"Function"/);
    } finally {
      await client.close();
    }
  });

  it('opencode calls ide_get_document_symbols through our MCP server and gets the real symbols', async function () {
    const raw = process.env.AGENT_HOST_TEST_AGENT ?? '';
    if (!/opencode/.test(raw)) this.skip();
    const agent = JSON.parse(raw) as { name: string };
    api.manager.select(agent.name);
    await api.manager.restart(); // a fresh session gets the mcpServers of now
    const file = path.join(folder(), 'src', 'textUtils.ts');
    const prompt = `SCENARIO: tool ${JSON.stringify({ name: 'get_document_symbols', args: { abspath: file } })}`;
    const stopReason = await api.manager.prompt(prompt);
    assert.equal(stopReason, 'end_turn');
    const calls = (api.manager.current?.model.timeline() ?? []).filter((e) => e.kind === 'tool_call');
    const call = calls.find((c) => /get_document_symbols/.test(JSON.stringify(c)));
    assert.ok(call, `no get_document_symbols tool call: ${JSON.stringify(calls).slice(0, 500)}`);
    console.log(`opencode's MCP tool call: ${JSON.stringify(call).slice(0, 400)}`);
    assert.equal(call.kind === 'tool_call' && call.status, 'completed');
    assert.match(JSON.stringify(call), /slugify/, 'the tool result did not carry the real symbols');
  });

  after(async () => {
    await api?.manager.stop();
  });
});
