/**
 * The typed command registry against package.json: every contributed command is declared (and registered
 * through the registry), none is declared that package.json lacks, and the commands that need an agent are
 * enabled only by the context keys the extension sets.
 */
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMAND_IDS, CONTEXT_KEYS } from '../../src/views/commandIds';
import { firstStepCommand } from '../../src/views/firstSteps';
import { repoRoot } from '../support/paths';

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string; enablement?: string }[]; menus: Record<string, { command?: string; when?: string }[]>; keybindings: { command: string }[] };
};

test('every command in package.json is declared in the registry, and nothing else', () => {
  const contributed = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual([...COMMAND_IDS].sort(), contributed);
  // Menus and keybindings name only declared commands.
  const referenced = [
    ...Object.values(pkg.contributes.menus)
      .flat()
      .map((m) => m.command),
    ...pkg.contributes.keybindings.map((k) => k.command),
  ].filter((c): c is string => typeof c === 'string');
  for (const c of referenced) assert.ok(COMMAND_IDS.includes(c as never), `${c} is used in a menu or keybinding but not declared`);
});

test('commands registered in the source go through the typed registry only', () => {
  const raw = execSync(`grep -rn "vscode.commands.registerCommand(" ${path.join(repoRoot, 'src')} || true`, { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l && !l.includes('src/views/commandRegistry.ts'));
  assert.deepEqual(raw, [], 'register commands with registerCommand() from src/views/commandRegistry.ts');
});

test('Stop, Cancel and Agent Commands are enabled by the agent-state context keys', () => {
  const enablement = Object.fromEntries(pkg.contributes.commands.map((c) => [c.command, c.enablement]));
  assert.equal(enablement['agentHost.stop'], 'agentHost.agentRunning');
  assert.equal(enablement['agentHost.cancel'], 'agentHost.turnRunning');
  assert.equal(enablement['agentHost.agentCommands'], 'agentHost.agentHasCommands');
  for (const clause of Object.values(enablement).filter((e): e is string => !!e)) {
    for (const key of clause.match(/agentHost\.[A-Za-z]+/g) ?? []) assert.ok(CONTEXT_KEYS.includes(key as never), `${key} is not a context key the extension sets`);
  }
});

test('the chat page may run only the first-step commands', () => {
  for (const c of ['agentHost.selectAgent', 'agentHost.addAgent', 'agentHost.signIn', 'agentHost.getStarted']) {
    assert.equal(firstStepCommand(c), c);
    assert.ok(COMMAND_IDS.includes(c as never), c);
  }
  for (const c of ['agentHost.stop', 'agentHost.revertTurnChanges', 'workbench.action.terminal.sendSequence', '__proto__', 'toString', '', 42, null, undefined, { command: 'agentHost.signIn' }]) {
    assert.throws(() => firstStepCommand(c), /Not a command the chat may run/, JSON.stringify(c) ?? 'undefined');
  }
});
