/**
 * `agentHost.agents` from every settings layer, merged by name: User, Remote (the remote machine's settings,
 * which VS Code would otherwise let replace the User list whole), the workspace and its folders (trusted
 * workspaces only). Each entry remembers its layer (shown in the pickers); an entry with the wrong shape is
 * left out, logged, and reported once with "Open Settings" — never silently ignored.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import { type AgentConfig, type AgentLayer, mergeAgentLayers } from '../session/agentConfig';

export interface AgentList {
  agents: AgentConfig[];
  /** Name → "User", "Remote", "Workspace" or "Folder <name>". */
  sources: Map<string, string>;
  problems: string[];
}

/** The settings files of this VS Code's user data folder (code-server, a remote server), when they exist. */
export interface SettingsFiles {
  user?: string;
  machine?: string;
}

/** `<user data>/User/globalStorage/<extension>` → the User and Machine settings files beside it. */
export function settingsFilesOf(globalStorage: string): SettingsFiles {
  const userData = path.resolve(globalStorage, '..', '..', '..');
  return { user: path.join(userData, 'User', 'settings.json'), machine: path.join(userData, 'Machine', 'settings.json') };
}

function agentsInFile(file: string | undefined, problems: string[], source: string): unknown {
  if (!file || !fs.existsSync(file)) return undefined;
  try {
    const errors: ParseError[] = [];
    const json = parseJsonc(fs.readFileSync(file, 'utf8'), errors, { allowTrailingComma: true }) as Record<string, unknown> | undefined;
    return json && typeof json === 'object' ? json['agentHost.agents'] : undefined;
  } catch (error) {
    problems.push(`${source}: ${file} could not be read (${(error as Error).message})`);
    return undefined;
  }
}

export function readAgentList(files: SettingsFiles): AgentList {
  const inspected = vscode.workspace.getConfiguration('agentHost').inspect<unknown>('agents');
  const problems: string[] = [];
  // VS Code's "global" value is the Remote list when there is one, else the User list: the files say which.
  const machine = agentsInFile(files.machine, problems, 'Remote');
  const user = machine !== undefined ? agentsInFile(files.user, problems, 'User') : undefined;
  const layers: AgentLayer[] = [...(user !== undefined ? [{ source: 'User', value: user }] : []), { source: machine !== undefined ? 'Remote' : 'User', value: machine ?? inspected?.globalValue }];
  // Workspace settings could point the agent command anywhere: only in a trusted workspace.
  if (vscode.workspace.isTrusted) {
    layers.push({ source: 'Workspace', value: inspected?.workspaceValue });
    // Folders have settings of their own only in a multi-root workspace (else they are the workspace's).
    const folders = vscode.workspace.workspaceFile ? (vscode.workspace.workspaceFolders ?? []) : [];
    for (const folder of folders) {
      const value = vscode.workspace.getConfiguration('agentHost', folder.uri).inspect<unknown>('agents')?.workspaceFolderValue;
      if (value !== undefined) layers.push({ source: `Folder ${folder.name}`, value });
    }
  }
  const merged = mergeAgentLayers(layers);
  return { ...merged, problems: [...problems, ...merged.problems] };
}

const OPEN_SETTINGS: Record<string, string> = {
  User: 'workbench.action.openSettingsJson',
  Remote: 'workbench.action.openRemoteSettingsFile',
  Workspace: 'workbench.action.openWorkspaceSettingsFile',
};

/** Logs every problem, and shows them once (per distinct set) with "Open Settings" on the first one's file. */
export class AgentProblemReporter {
  private shown = '';

  constructor(private readonly log: vscode.LogOutputChannel) {}

  report(problems: string[]): void {
    const key = problems.join('\n');
    if (key === this.shown) return;
    this.shown = key;
    if (!problems.length) return;
    for (const p of problems) this.log.warn(`agentHost.agents: entry ignored: ${p}`);
    const open = vscode.l10n.t('Open Settings');
    const first = problems[0]!;
    const message =
      problems.length === 1
        ? vscode.l10n.t('Atrium: an entry of agentHost.agents is ignored: {0}', first)
        : vscode.l10n.t('Atrium: {0} entries of agentHost.agents are ignored (see the log): {1}', problems.length, first);
    void vscode.window.showWarningMessage(inertMarkup(message), open).then((pick) => {
      if (pick !== open) return;
      const command = OPEN_SETTINGS[first.split(':')[0] ?? ''] ?? 'workbench.action.openSettingsJson';
      void vscode.commands.executeCommand(command);
    });
  }
}

/** Where an agent's entry is written, as the pickers say it. */
export function sourceLabel(source: string | undefined): string {
  if (source === 'User') return vscode.l10n.t('User settings');
  if (source === 'Remote') return vscode.l10n.t('Remote settings');
  if (source === 'Workspace') return vscode.l10n.t('Workspace settings');
  if (source?.startsWith('Folder ')) return vscode.l10n.t('Folder settings ({0})', source.slice('Folder '.length));
  return source ?? '';
}
