/**
 * Every command the extension contributes, declared once with its arguments and result (js-debug's typed
 * registry): registering and running a command are type-checked end to end, and a test holds this list
 * against package.json. Context keys say what the agent can do now; `enablement` clauses in package.json
 * key on them, and a command run anyway (from a keybinding or code) explains why nothing happens.
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import type { CommandId, CommandMap, ContextKeyValues } from './commandIds';

export { COMMAND_IDS, CONTEXT_KEYS, type CommandId, type CommandMap, type ContextKeyValues } from './commandIds';

const ran = new vscode.EventEmitter<CommandId>();
/** Each contributed command as it starts, however it was run (palette, menu, keybinding, a page's link, code). */
export const onDidRunCommand = ran.event;

/**
 * Registers one command with its declared types. An error it throws is shown by VS Code as a notification
 * when a key binding ran the command, so the links and icons in its message (agent text) are made inert.
 */
export function registerCommand<K extends CommandId>(id: K, handler: (...args: CommandMap[K][0]) => CommandMap[K][1] | Promise<CommandMap[K][1]>): vscode.Disposable {
  const run = handler as (...args: unknown[]) => unknown;
  return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
    ran.fire(id);
    try {
      return await run(...args);
    } catch (error) {
      if (error instanceof Error) error.message = inertMarkup(error.message);
      throw error;
    }
  });
}

/** Runs one command with its declared types. */
export async function runCommand<K extends CommandId>(id: K, ...args: CommandMap[K][0]): Promise<CommandMap[K][1]> {
  return vscode.commands.executeCommand<CommandMap[K][1]>(id, ...args);
}

/** Sets the context keys and remembers their values (tests and the status read them back). */
export class ContextKeys {
  private readonly values = new Map<keyof ContextKeyValues, boolean>();
  private readonly changed = new vscode.EventEmitter<{ key: keyof ContextKeyValues; value: boolean }>();
  /** A key that took a new value. */
  readonly onDidChange = this.changed.event;

  set<K extends keyof ContextKeyValues>(key: K, value: ContextKeyValues[K]): void {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
    this.changed.fire({ key, value });
  }

  get<K extends keyof ContextKeyValues>(key: K): ContextKeyValues[K] {
    return this.values.get(key) ?? false;
  }

  snapshot(): ContextKeyValues {
    return {
      'agentHost.agentRunning': this.get('agentHost.agentRunning'),
      'agentHost.turnRunning': this.get('agentHost.turnRunning'),
      'agentHost.agentHasCommands': this.get('agentHost.agentHasCommands'),
      'agentHost.agentSilent': this.get('agentHost.agentSilent'),
      'agentHost.followingAgent': this.get('agentHost.followingAgent'),
    };
  }
}
