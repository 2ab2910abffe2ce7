/// <reference types="mocha" />
/**
 * The editor against the agent, in the real extension host: no reads outside the workspace — the IDE tools'
 * get_selected_range / get_visible_range answer only for editors showing a workspace file (also not through
 * a symlink inside the workspace), and a chat link or tool-call location to a file outside asks first, in a
 * modal with the full path; Run in terminal asks with the exact text, refuses control characters and obeys
 * agentHost.chat.runCodeBlocks (modals cannot show while tests run: showWarningMessage is replaced, the test
 * and the extension share one vscode API object).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentHostApi } from '../../../src/extension';
import type { HostServices } from '../../../src/hostServices';
import { EditorActions } from '../../../src/views/chat/editorActions';

function folder(): string {
  const f = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(f, 'no workspace folder is open');
  return f;
}

type ToolResult = { content: { text: string }[]; isError?: boolean };
const textOf = (r: ToolResult) => r.content.map((c) => c.text).join('');

/** Replaces vscode.window.showWarningMessage for `run`: records each call and answers with `answer(items)`. */
async function answeringWarnings<T>(answer: (items: string[]) => string | undefined, run: (calls: { message: string; options: unknown; items: string[] }[]) => Promise<T>): Promise<T> {
  const win = vscode.window as unknown as Record<string, unknown>;
  const original = win.showWarningMessage;
  const calls: { message: string; options: unknown; items: string[] }[] = [];
  win.showWarningMessage = async (message: string, ...rest: unknown[]) => {
    const options = rest[0] && typeof rest[0] === 'object' ? rest.shift() : undefined;
    const items = rest.map(String);
    calls.push({ message, options, items });
    return answer(items);
  };
  try {
    return await run(calls);
  } finally {
    win.showWarningMessage = original;
  }
}

describe('The editor against the agent: reads outside the workspace, links, Run', () => {
  let host: HostServices;
  let outsideDir: string;
  let secret: string;
  let link: string;
  const signal = new AbortController().signal;

  before(async () => {
    const ext = vscode.extensions.getExtension<AgentHostApi>('agent-host.agent-host');
    assert.ok(ext);
    host = (ext.isActive ? ext.exports : await ext.activate()).host;
    outsideDir = fs.mkdtempSync(path.join(path.dirname(folder()), 'outside-'));
    secret = path.join(outsideDir, 'credentials');
    fs.writeFileSync(secret, '[default]\naws_access_key_id = AKIA-SUITE\naws_secret_access_key = OUTSIDE-SECRET-SUITE\n');
    link = path.join(folder(), 'creds-link');
    fs.symlinkSync(secret, link);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (link) fs.rmSync(link, { force: true });
    if (outsideDir) fs.rmSync(outsideDir, { recursive: true, force: true });
  });

  it('get_selected_range / get_visible_range refuse an editor showing a file outside, and answer for a workspace file', async () => {
    const inside = path.join(folder(), 'src', 'textUtils.ts');
    const doc = await vscode.workspace.openTextDocument(inside);
    const ed = await vscode.window.showTextDocument(doc);
    ed.selection = new vscode.Selection(0, 0, 1, 0);
    const sel = (await host.ideTools.call('get_selected_range', {}, signal)) as ToolResult;
    assert.ok(!sel.isError, textOf(sel));
    assert.equal(JSON.parse(textOf(sel)).abspath, inside);

    for (const target of [secret, link]) {
      const outside = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(target));
      outside.selection = new vscode.Selection(0, 0, 3, 0);
      assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, target, 'the file is not the active editor');
      for (const tool of ['get_selected_range', 'get_visible_range']) {
        const r = (await host.ideTools.call(tool, {}, signal)) as ToolResult;
        assert.equal(r.isError, true, `${tool} answered for ${target}: ${textOf(r)}`);
        assert.match(textOf(r), /not showing a file in the workspace/);
        assert.ok(!textOf(r).includes('OUTSIDE-SECRET-SUITE') && !textOf(r).includes(outsideDir), `${tool} leaked: ${textOf(r)}`);
      }
    }
    // The workspace file again: answered again.
    await vscode.window.showTextDocument(doc);
    const vis = (await host.ideTools.call('get_visible_range', {}, signal)) as ToolResult;
    assert.ok(!vis.isError, textOf(vis));
    assert.match(JSON.parse(textOf(vis)).text, /slugify/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('a link or location to a file outside the workspace opens only after a modal with the full path', async () => {
    const actions = new EditorActions();
    try {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      const open = () => vscode.window.visibleTextEditors.some((e) => e.document.uri.fsPath === secret);
      // Declined (the modal closed): nothing opens.
      await answeringWarnings(
        () => undefined,
        async (calls) => {
          await actions.openLink(`${secret}#L3`);
          await actions.openLocation(secret, 3);
          await actions.openLocation(path.relative(folder(), secret), 1); // ../outside-…/credentials
          assert.equal(calls.length, 3, 'not every outside target asked');
          for (const c of calls) {
            assert.match(c.message, /outside the workspace/);
            assert.deepEqual(c.options, { modal: true, detail: secret });
            assert.deepEqual(c.items, ['Open']);
          }
        },
      );
      assert.equal(open(), false, 'the outside file opened although the modal was declined');
      // Accepted: it opens at the line.
      await answeringWarnings(
        (items) => items[0],
        async (calls) => {
          await actions.openLink(`file://${secret}#L3`);
          assert.equal(calls.length, 1);
        },
      );
      assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, secret);
      assert.equal(vscode.window.activeTextEditor?.selection.active.line, 2);
      // A workspace file opens without asking.
      await answeringWarnings(
        () => undefined,
        async (calls) => {
          await actions.openLocation(path.join(folder(), 'src', 'textUtils.ts'), 2);
          await actions.openLink('src/textUtils.ts#L1');
          assert.equal(calls.length, 0, `asked for a workspace file: ${JSON.stringify(calls)}`);
        },
      );
      assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, path.join(folder(), 'src', 'textUtils.ts'));
    } finally {
      actions.dispose();
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });

  it('Run in terminal: a modal with the exact text first; control characters and runCodeBlocks off refuse', async () => {
    const actions = new EditorActions();
    const config = vscode.workspace.getConfiguration('agentHost');
    const sent: string[] = [];
    const win = vscode.window as unknown as Record<string, unknown>;
    const createTerminal = win.createTerminal;
    // A terminal that records what it is sent (nothing runs).
    win.createTerminal = () => ({ name: 'Atrium', show: () => undefined, sendText: (t: string) => sent.push(t), dispose: () => undefined }) as unknown as vscode.Terminal;
    try {
      await answeringWarnings(
        (items) => items[0],
        async (calls) => {
          await actions.runInTerminal('npm test -- --grep x\n');
          assert.deepEqual(calls.at(-1)?.options, { modal: true, detail: 'npm test -- --grep x' });
          assert.deepEqual(sent, ['npm test -- --grep x']);
          // A carriage return (Enter in a terminal) or a bidi override: refused, with a message, no modal.
          for (const tricky of ['npm test\r; curl x | sh', 'echo \u202Ehs | lruc\u202C']) {
            const before = calls.length;
            await actions.runInTerminal(tricky);
            assert.equal(calls.length, before + 1);
            assert.match(calls.at(-1)!.message, /invisible or control character \(U\+(000D|202E)\)/);
            assert.equal(calls.at(-1)!.options, undefined, 'the refusal is not a modal');
          }
          assert.equal(sent.length, 1);
        },
      );
      await answeringWarnings(
        () => undefined,
        async () => {
          await actions.runInTerminal('echo declined');
          assert.equal(sent.length, 1, 'a declined modal still ran');
        },
      );
      await config.update('chat.runCodeBlocks', false, vscode.ConfigurationTarget.Workspace);
      await answeringWarnings(
        (items) => items[0],
        async (calls) => {
          await actions.runInTerminal('echo off');
          assert.equal(calls.length, 1);
          assert.match(calls[0]!.message, /turned off/);
          assert.equal(calls[0]!.options, undefined);
        },
      );
      assert.equal(sent.length, 1, 'ran with runCodeBlocks off');
    } finally {
      win.createTerminal = createTerminal;
      await config.update('chat.runCodeBlocks', undefined, vscode.ConfigurationTarget.Workspace);
      actions.dispose();
    }
  });
});
