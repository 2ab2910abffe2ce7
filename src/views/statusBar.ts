import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import { restrictedModeMessage, type AgentManager, type AgentState } from '../manager/agentManager';
import { MANAGE_TRUST_COMMAND } from './restrictedMode';

const ICONS: Record<AgentState, string> = {
  stopped: '$(circle-slash)',
  starting: '$(loading~spin)',
  ready: '$(hubot)',
  busy: '$(sync~spin)',
  error: '$(error)',
};

/**
 * One status bar item: which agent, and whether it is up. Clicking picks an agent — or, while a running turn
 * has heard nothing from the agent for `agentHost.silenceWarningSeconds`, offers to cancel it. In Restricted
 * Mode it says so, and clicking opens the workspace trust editor.
 */
export class AgentStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentHost.status', vscode.StatusBarAlignment.Left, 10);
  private readonly subs: vscode.Disposable[];

  constructor(private readonly manager: AgentManager) {
    this.item.name = 'Atrium';
    this.item.command = 'agentHost.selectAgent';
    this.subs = [manager.onDidChangeState(() => this.update()), vscode.workspace.onDidGrantWorkspaceTrust(() => this.update())];
    this.update();
    this.item.show();
  }

  /** Whether this window's agent has ever left `stopped`: before that it is "not started", not "stopped". */
  private started = false;

  private update(): void {
    const state = this.manager.state;
    if (state !== 'stopped') this.started = true;
    // The status bar renders `$(icon)` in its text: a name from settings or a registry shows as written.
    const name = inertMarkup(this.manager.agentName ?? vscode.l10n.t('no agent'));
    if (!vscode.workspace.isTrusted) {
      this.item.text = `$(shield) ${name} — ${vscode.l10n.t('Restricted Mode')}`;
      this.item.tooltip = `Atrium: ${restrictedModeMessage()}`;
      this.item.command = MANAGE_TRUST_COMMAND;
      this.item.backgroundColor = undefined;
      return;
    }
    const label: Record<AgentState, string> = {
      stopped: this.started ? vscode.l10n.t('stopped') : vscode.l10n.t('not started'),
      starting: vscode.l10n.t('starting'),
      ready: vscode.l10n.t('ready'),
      busy: vscode.l10n.t('working'),
      error: vscode.l10n.t('error'),
    };
    // Two warnings: a request timed out (until the agent answers again), or a running turn hears nothing.
    const notAnswering = this.manager.notAnswering;
    const silentFor = this.manager.silentFor;
    const noOutput = silentFor !== undefined ? vscode.l10n.t('no output for {0} s', silentFor) : undefined;
    const warning = notAnswering !== undefined || noOutput !== undefined;
    this.item.text = `${warning ? '$(warning)' : ICONS[state]} ${name}${noOutput ? ` — ${noOutput}` : ''}`;
    this.item.tooltip = [
      `Atrium: ${name} — ${label[state]}`,
      notAnswering ? vscode.l10n.t('Not answering: {0}', notAnswering) : '',
      silentFor !== undefined ? vscode.l10n.t('The agent has sent nothing for {0} s. Click to cancel the turn or keep waiting.', silentFor) : '',
      this.manager.error ?? '',
    ]
      .filter(Boolean)
      .join('\n');
    this.item.command = noOutput ? 'agentHost.noOutput' : 'agentHost.selectAgent';
    this.item.backgroundColor = state === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    for (const sub of this.subs) sub.dispose();
    this.item.dispose();
  }
}
