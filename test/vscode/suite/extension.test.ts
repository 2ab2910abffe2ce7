/// <reference types="mocha" />
/**
 * Smoke test in the real extension host (code-server, or desktop VS Code online): the extension activates,
 * registers its commands, and runs one whole agent turn that writes a file into the workspace. Runs first
 * (.vscode-test.mjs lists this file before the others): activation alone must open nothing.
 *
 * The agent comes from the environment: AGENT_HOST_TEST_AGENT = JSON {name, command, args, env, protocol?}
 * (test/vscode/harness.ts sets it: opencode on the scripted model). AGENT_HOST_TEST_PROMPT overrides the
 * prompt.
 *
 * Permission: with an extensionTestsPath the workbench refuses to show dialogs (DialogService.skipDialogs), so
 * the modal the extension raises would answer "cancelled". The test therefore answers modal warnings itself by
 * replacing vscode.window.showWarningMessage (the test and the extension share one API object: the test file
 * lives inside the extension folder). AGENT_HOST_TEST_PERMISSION = regexp of the option to pick (default
 * "allow"). The real dialog is clicked through the UI in test/vscode/main.ts's workbench check.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { AgentHostApi } from '../../../src/extension';
import { COMMAND_IDS } from '../../../src/views/commandIds';
import { changedSince, snapshot } from '../../support/fileSnapshot';

const EXTENSION_ID = 'agent-host.agent-host';

/** The IDE tools' socket folders (src/mcp/toolEndpoint.ts) in this run's own TMPDIR (the launcher makes it short). */
function toolSockets(): string[] {
  return fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('agent-host-ide-'));
}

/** Answers modal showWarningMessage calls with the first item matching `pattern`; returns the undo. */
function answerModalsWith(pattern: RegExp): () => void {
  const win = vscode.window as unknown as Record<string, unknown>;
  const original = win.showWarningMessage as (...a: unknown[]) => Thenable<unknown>;
  win.showWarningMessage = async (message: string, ...rest: unknown[]) => {
    const [first, ...items] = rest;
    if (!(first && typeof first === 'object' && (first as vscode.MessageOptions).modal)) return original(message, ...rest);
    const title = (i: unknown) => (typeof i === 'string' ? i : String((i as vscode.MessageItem).title));
    const pick = items.find((i) => pattern.test(title(i)));
    console.log(`modal "${message}" [${items.map(title).join(' | ')}] → ${pick ? title(pick) : '(closed)'}`);
    return pick;
  };
  return () => {
    win.showWarningMessage = original;
  };
}

describe('Atrium in a real VS Code (code-server)', () => {
  let api: AgentHostApi;

  it('activates and returns its API', async () => {
    const ext = vscode.extensions.getExtension<AgentHostApi>(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is not loaded`);
    api = ext.isActive ? ext.exports : await ext.activate();
    assert.ok(ext.isActive, 'extension did not activate');
    assert.ok(api?.manager, 'activate() did not return { manager }');
    assert.equal(api.manager.state, 'stopped');
    // Activation opens nothing an agent would use: the IDE tools' socket waits for the first agent.
    assert.deepEqual(toolSockets(), [], 'the IDE tools socket was opened with no agent started');
  });

  it('registers exactly the commands of the typed registry (and package.json), none missing, none extra', async () => {
    const registered = (await vscode.commands.getCommands(true)).filter((c) => c.startsWith('agentHost.'));
    const mine = new Set(registered);
    const missing = COMMAND_IDS.filter((c) => !mine.has(c));
    assert.deepEqual(missing, [], `commands not registered: ${missing.join(', ')}`);
    // The views contribute their own commands (agentHost.chat.focus, agentHost.rules.focus…); nothing else is extra.
    const views = ['agentHost.chat.', 'agentHost.rules.', 'agentHost.runs.'];
    const extra = registered.filter((c) => !(COMMAND_IDS as readonly string[]).includes(c) && !views.some((v) => c.startsWith(v)));
    assert.deepEqual(extra, [], `registered but not declared: ${extra.join(', ')}`);
  });

  it("offers @atrium in VS Code's Chat view exactly where VS Code has the language-model provider API (not on the minimum, 1.99)", () => {
    const hasApi = typeof (vscode.lm as { registerLanguageModelChatProvider?: unknown }).registerLanguageModelChatProvider === 'function';
    const [major, minor] = vscode.version.split('.').map(Number) as [number, number];
    console.log(`VS Code ${vscode.version}: language-model provider API ${hasApi ? 'present' : 'absent'}, @atrium ${api.chatParticipant ? 'offered' : 'not offered'}`);
    assert.equal(hasApi, major > 1 || minor >= 104, `VS Code ${vscode.version}`);
    assert.equal(api.chatParticipant, hasApi);
  });

  it('its "<agent> via Atrium" models answer a request from outside @atrium only with a pointer to @atrium, never from an agent', async () => {
    if (!api.chatParticipant) {
      // The minimum (1.99): no provider API, so no model of ours either.
      assert.deepEqual(await vscode.lm.selectChatModels({ vendor: 'atrium' }), []);
      return;
    }
    const config = vscode.workspace.getConfiguration('agentHost');
    const before = config.inspect('agents')?.globalValue;
    // An agent that would fail loudly if anything started it.
    const probe = { name: 'never-started', command: process.execPath, args: ['-e', 'process.exit(42)'] };
    await config.update('agents', [...((before as unknown[]) ?? []), probe], vscode.ConfigurationTarget.Global);
    try {
      let models: vscode.LanguageModelChat[] = [];
      for (let i = 0; i < 50 && !models.some((m) => m.id === probe.name); i++) {
        models = await vscode.lm.selectChatModels({ vendor: 'atrium' });
        if (!models.some((m) => m.id === probe.name)) await new Promise((r) => setTimeout(r, 100));
      }
      const model = models.find((m) => m.id === probe.name);
      assert.ok(model, `no model for the agent: ${models.map((m) => m.id).join(', ')}`);
      assert.equal(model.name, 'never-started via Atrium');
      const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('What is 2 + 2?')], {});
      let text = '';
      for await (const chunk of response.text) text += chunk;
      assert.match(text, /only answers through @atrium/);
      assert.equal(
        api.manager.tabs().some((t) => t.agent === probe.name),
        false,
        'a tab of the agent was opened',
      );
    } finally {
      await config.update('agents', before, vscode.ConfigurationTarget.Global);
    }
  });

  it('with no agent running, the agent context keys are off (Stop, Cancel, Agent Commands disabled)', async () => {
    assert.equal(api.manager.current, undefined);
    assert.deepEqual(api.contextKeys(), {
      'agentHost.agentRunning': false,
      'agentHost.turnRunning': false,
      'agentHost.agentHasCommands': false,
      'agentHost.agentSilent': false,
      'agentHost.followingAgent': false,
    });
  });

  it('runs a whole turn with the configured agent and a file appears in the workspace', async function () {
    const raw = process.env.AGENT_HOST_TEST_AGENT;
    if (!raw) this.skip();
    const agent = JSON.parse(raw!) as { name: string; command: string; args?: string[]; env?: Record<string, string>; protocol?: string };
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder, 'no workspace folder is open');

    // The harness writes the agent into the user settings; set it here too when it is not there.
    if (!api.manager.agents().some((a) => a.name === agent.name)) {
      console.log(`agentHost.agents has no "${agent.name}" yet: setting it (global)`);
      await vscode.workspace.getConfiguration('agentHost').update('agents', [agent], vscode.ConfigurationTarget.Global);
    }
    api.manager.select(agent.name);

    const before = snapshot(folder);
    const states: string[] = [];
    const sub = api.manager.onDidChangeState((s) => states.push(s));
    const restore = answerModalsWith(new RegExp(process.env.AGENT_HOST_TEST_PERMISSION ?? 'allow', 'i'));
    try {
      const prompt = process.env.AGENT_HOST_TEST_PROMPT ?? 'Create a file named hello.txt containing a short greeting.';
      const stopReason = await api.manager.prompt(prompt);
      assert.equal(stopReason, 'end_turn');
    } finally {
      restore();
      sub.dispose();
    }
    assert.equal(api.manager.state, 'ready');
    assert.ok(states.includes('busy'), `state never went busy: ${states.join(' → ')}`);
    if (agent.protocol !== 'rpc') assert.equal(toolSockets().length, 1, "the ACP agent's start (IDE tools on) opened the IDE tools socket");

    const changed = changedSince(before, folder);
    console.log(`files written by the agent: ${changed.join(', ') || '(none)'}`);
    assert.ok(changed.length > 0, 'the agent turn wrote no file into the workspace');

    const timeline = api.manager.current?.model.timeline() ?? [];
    const kinds = timeline.map((e) => e.kind);
    assert.ok(kinds.includes('tool_call'), `no tool call in the timeline: ${kinds.join(', ')}`);
    assert.ok(
      timeline.some((e) => e.kind === 'message' && e.role === 'agent' && e.text.trim().length > 0),
      'no agent text in the timeline',
    );
  });

  after(async () => {
    await api?.manager.stop();
  });
});
