/**
 * A remote agent's credential, per agent entry (its name and URL): the agent service's API key (sent as
 * `X-Api-Key`) or a remote ACP agent's token (`Authorization: Bearer`). Asked once in a password box, kept in
 * VS Code's SecretStorage; one the agent refuses is forgotten and said plainly, with a way to enter another
 * (the next start asks again).
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
    return `agentHost.remoteCredential:${agent.name}:${agent.url ?? agent.command}`;
  }

  /** The stored key or token, else the one the person enters now (undefined when they dismiss the box). */
  get(agent: AgentConfig): Promise<string | undefined> {
    const where = agent.url ?? agent.command;
    const service = agent.protocol === 'agent-service';
    return this.askOnce(this.slot(agent), `"${agent.name}": ${service ? 'API key' : 'token'}`, {
      title: service ? vscode.l10n.t('API key for the agent service "{0}"', agent.name) : vscode.l10n.t('Token for the remote agent "{0}"', agent.name),
      prompt: service
        ? vscode.l10n.t("{0} asks for an API key. It is sent as the X-Api-Key header and kept in VS Code's secret storage.", where)
        : vscode.l10n.t("{0} asks for a token. It is sent as Authorization: Bearer and kept in VS Code's secret storage.", where),
      validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Enter the key, or press Escape')),
    });
  }

  /** A secret an entry's header names (`${secret:NAME}`): stored, else asked once in a password box. */
  secret(name: string, agent: AgentConfig): Promise<string | undefined> {
    return this.askOnce(`agentHost.headerSecret:${name}`, `header secret "${name}"`, {
      title: vscode.l10n.t('Secret "{0}" for the headers of "{1}"', name, agent.name),
      prompt: vscode.l10n.t("A header of this agent's entry names this secret. It is kept in VS Code's secret storage."),
    });
  }

  /** What `slot` holds, else what the person enters in a password box (kept there); undefined when dismissed. */
  private async askOnce(slot: string, what: string, box: vscode.InputBoxOptions): Promise<string | undefined> {
    const stored = await this.secrets.get(slot);
    if (stored) return stored;
    const entered = (await vscode.window.showInputBox({ ...box, password: true, ignoreFocusOut: true }))?.trim();
    if (!entered) return undefined;
    await this.secrets.store(slot, entered);
    this.log.info(`Stored ${what}`);
    return entered;
  }

  /**
   * A `wss://` service whose certificate nothing trusts: its fingerprint is shown, to compare with the one the
   * service's admin gave, and trusting it writes `tls.fingerprint` into the entry where it is defined.
   */
  async untrusted(agent: AgentConfig, fingerprint: string, restart: () => Promise<unknown>): Promise<void> {
    const trust = vscode.l10n.t('Trust This Certificate');
    const pick = await vscode.window.showWarningMessage(
      inertMarkup(vscode.l10n.t('The certificate of the agent service "{0}" is not trusted.', agent.name)),
      { modal: true, detail: vscode.l10n.t("SHA-256 fingerprint:\n{0}\n\nTrust it only if it is the one the service's administrator gave you.", fingerprint) },
      trust,
    );
    if (pick !== trust) return;
    const section = vscode.workspace.getConfiguration('agentHost');
    const inspected = section.inspect<unknown>('agents');
    const layers = [
      [vscode.ConfigurationTarget.Workspace, inspected?.workspaceValue],
      [vscode.ConfigurationTarget.Global, inspected?.globalValue],
    ] as const;
    for (const [target, value] of layers) {
      if (!Array.isArray(value) || !value.some((a) => (a as AgentConfig)?.name === agent.name)) continue;
      const next = value.map((a) => ((a as AgentConfig).name === agent.name ? { ...(a as AgentConfig), tls: { ...((a as AgentConfig).tls ?? {}), fingerprint } } : a));
      await section.update('agents', next, target);
      this.log.info(`Agent service "${agent.name}": certificate ${fingerprint} trusted`);
      await restart();
      return;
    }
    void vscode.window.showInformationMessage(inertMarkup(vscode.l10n.t('Set "tls.fingerprint" to "{0}" in the entry of "{1}" in your settings.', fingerprint, agent.name)));
  }

  /** The service refused the key: it is forgotten, and the person may enter another (`restart` starts the agent again, asking). */
  async refused(agent: AgentConfig, restart: () => Promise<unknown>): Promise<void> {
    await this.secrets.delete(this.slot(agent));
    this.log.warn(`Agent service "${agent.name}" refused the API key: forgotten`);
    const again = agent.protocol === 'agent-service' ? vscode.l10n.t('Enter a New Key') : vscode.l10n.t('Enter a New Token');
    const message =
      agent.protocol === 'agent-service' ? vscode.l10n.t('The agent service "{0}" refused the API key.', agent.name) : vscode.l10n.t('The remote agent "{0}" refused the token.', agent.name);
    const pick = await vscode.window.showErrorMessage(inertMarkup(message), again);
    if (pick === again) await restart();
  }
}
