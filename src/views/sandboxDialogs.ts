/**
 * The sandbox in the editor (docs/sandbox.md): the settings it reads (`agentHost.sandbox.default`, the additions
 * kept per agent in `agentHost.sandbox.allow`), the warning before an agent starts unsandboxed on a machine that
 * cannot sandbox, and "Allow" on what the sandbox blocked (a folder to write, a host to reach) — asked in a modal that
 * names exactly what is allowed, kept in the user's settings, in force from the agent's next start.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SandboxBlock } from '../session/sandboxBlocks';
import type { SandboxEntry, SandboxMode } from '../session/sandboxPolicy';

const SECTION = 'agentHost';

/** The mode an agent entry without its own `sandbox` gets. */
export function defaultSandboxMode(): SandboxMode {
  const v = vscode.workspace.getConfiguration(SECTION).get<string>('sandbox.default', 'workspace-write');
  return v === 'read-only' || v === 'off' ? v : 'workspace-write';
}

/** What the user allowed for this agent from the chat (Allow on a blocked write or connection). */
export function allowedFor(agent: string): SandboxEntry {
  const all = vscode.workspace.getConfiguration(SECTION).get<Record<string, SandboxEntry>>('sandbox.allow', {});
  const mine = all?.[agent];
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length > 0) : []);
  return { allowWrite: list(mine?.allowWrite), allowHosts: list(mine?.allowHosts) };
}

/** Agents the person chose to start without the sandbox this window, after the warning. */
const startedUnsandboxed = new Set<string>();

/**
 * The machine cannot sandbox (`why`): the agent starts unsandboxed only once the person says so in a modal (asked
 * once per agent and window). False: not started.
 */
export async function confirmUnsandboxed(agent: string, why: string): Promise<boolean> {
  if (startedUnsandboxed.has(agent)) return true;
  const start = vscode.l10n.t('Start Unsandboxed');
  const answer = await vscode.window.showWarningMessage(
    vscode.l10n.t('No sandbox on this machine: start "{0}" unsandboxed?', agent),
    {
      modal: true,
      detail: vscode.l10n.t(
        'The sandbox could not be set up here ({0}). Unsandboxed, the agent runs as you: it can write anywhere you can, read your credentials and reach any host. On Debian and Ubuntu, install bubblewrap and socat; or set "agentHost.sandbox.default" to "off".',
        why,
      ),
    },
    start,
  );
  if (answer !== start) return false;
  startedUnsandboxed.add(agent);
  return true;
}

/** What "Allow" on a block adds: a host as reported, a write's folder (the file itself may not exist yet). */
export function allowanceOf(block: SandboxBlock): { key: 'allowWrite' | 'allowHosts'; value: string } {
  if (block.kind === 'network') return { key: 'allowHosts', value: block.target };
  return { key: 'allowWrite', value: path.dirname(block.target) };
}

/**
 * "Allow" on a block: a modal names the folder or host and the agent; yes adds it to `agentHost.sandbox.allow`
 * (user settings) and offers to restart the agent, since a running sandbox keeps its policy.
 */
export async function allowBlocked(agent: string | undefined, block: SandboxBlock, restart: () => Promise<unknown>): Promise<boolean> {
  if (!agent) return false;
  const { key, value } = allowanceOf(block);
  const allow = vscode.l10n.t('Allow');
  const answer = await vscode.window.showWarningMessage(
    key === 'allowWrite' ? vscode.l10n.t('Let "{0}" write in {1}?', agent, value) : vscode.l10n.t('Let "{0}" reach {1}?', agent, value),
    {
      modal: true,
      detail:
        key === 'allowWrite'
          ? vscode.l10n.t(
              'Everything under {0} becomes writable for this agent and all it starts, in every workspace. Kept in "agentHost.sandbox.allow" in your user settings; in force from its next start.',
              value,
            )
          : vscode.l10n.t('The agent and all it starts may connect to {0}, in every workspace. Kept in "agentHost.sandbox.allow" in your user settings; in force from its next start.', value),
    },
    allow,
  );
  if (answer !== allow) return false;
  const config = vscode.workspace.getConfiguration(SECTION);
  const all = { ...(config.inspect<Record<string, SandboxEntry>>('sandbox.allow')?.globalValue ?? {}) };
  const mine = { ...(all[agent] ?? {}) };
  mine[key] = [...new Set([...(mine[key] ?? []), value])];
  all[agent] = mine;
  await config.update('sandbox.allow', all, vscode.ConfigurationTarget.Global);
  const now = vscode.l10n.t('Restart Agent');
  const picked = await vscode.window.showInformationMessage(vscode.l10n.t('Allowed for "{0}": {1}. It applies when the agent starts again.', agent, value), now);
  if (picked === now) await restart();
  return true;
}
