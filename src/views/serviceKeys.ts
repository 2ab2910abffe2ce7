/**
 * The agent service's API key, per agent entry (its name and URL): asked once in a password box, kept in VS
 * Code's SecretStorage, sent as the `X-Api-Key` header. A key the service refuses is forgotten and said
 * plainly, with a way to enter another (the next start asks again).
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import type { AgentConfig } from '../session/agentConfig';

export class ServiceKeys {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  private slot(agent: AgentConfig): string {
    return `agentHost.agentService.apiKey:${agent.name}:${agent.url ?? agent.command}`;
  }

  /** The stored key, else the one the person enters now (undefined when they dismiss the box). */
  async get(agent: AgentConfig): Promise<string | undefined> {
    const stored = await this.secrets.get(this.slot(agent));
    if (stored) return stored;
    const entered = await vscode.window.showInputBox({
      title: vscode.l10n.t('API key for the agent service "{0}"', agent.name),
      prompt: vscode.l10n.t("{0} asks for an API key. It is sent as the X-Api-Key header and kept in VS Code's secret storage.", agent.url ?? agent.command),
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Enter the key, or press Escape')),
    });
    const key = entered?.trim();
    if (!key) return undefined;
    await this.secrets.store(this.slot(agent), key);
    this.log.info(`Agent service "${agent.name}": API key stored`);
    return key;
  }

  /** The service refused the key: it is forgotten, and the person may enter another (`restart` starts the agent again, asking). */
  async refused(agent: AgentConfig, restart: () => Promise<unknown>): Promise<void> {
    await this.secrets.delete(this.slot(agent));
    this.log.warn(`Agent service "${agent.name}" refused the API key: forgotten`);
    const again = vscode.l10n.t('Enter a New Key');
    const pick = await vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('The agent service "{0}" refused the API key.', agent.name)), again);
    if (pick === again) await restart();
  }
}
