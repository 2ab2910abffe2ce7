import * as vscode from 'vscode';
import { AgentManager } from './agentManager';
import { registerSelectionCommands } from './commands/selectionCommands';
import { registerHostServices } from './hostServices';
import { registerRpcCommands } from './views/rpcCommands';
import { VsCodeRpcUi } from './views/rpcUi';
import { ChatViewProvider } from './views/chat/chatViewProvider';
import { AgentStatusBar } from './views/statusBar';
import { TranscriptChannel } from './views/transcriptChannel';

export interface AgentHostApi {
  readonly manager: AgentManager;
}

export function activate(context: vscode.ExtensionContext): AgentHostApi {
  const log = vscode.window.createOutputChannel('Agent Host', { log: true });
  const manager = new AgentManager(log);
  const transcript = new TranscriptChannel(manager);
  context.subscriptions.push(log, manager, transcript, new AgentStatusBar(manager));
  ChatViewProvider.register(context, manager, log);
  context.subscriptions.push(registerHostServices(context, manager, log));
  const rpcUi = new VsCodeRpcUi();
  context.subscriptions.push(rpcUi, manager.addSessionServices(() => ({ rpcUi })), registerRpcCommands(manager));

  context.subscriptions.push(registerSelectionCommands(manager, log, () => transcript.show()));

  const run = (what: string, action: () => Promise<unknown>) => async () => {
    try {
      await action();
    } catch (error) {
      const message = (error as Error).message;
      log.error(`${what} failed: ${message}`);
      const pick = await vscode.window.showErrorMessage(
        vscode.l10n.t('Agent Host: {0} failed: {1}', what, message.split('\n')[0] ?? message),
        vscode.l10n.t('Show Log'),
        vscode.l10n.t('Restart'),
      );
      if (pick === vscode.l10n.t('Show Log')) log.show();
      else if (pick === vscode.l10n.t('Restart')) void vscode.commands.executeCommand('agentHost.restart');
    }
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentHost.start', run('Start', () => manager.ensureStarted())),
    vscode.commands.registerCommand('agentHost.restart', run('Restart', () => manager.restart())),
    vscode.commands.registerCommand('agentHost.stop', run('Stop', () => manager.stop())),
    vscode.commands.registerCommand('agentHost.showLog', () => log.show()),
    vscode.commands.registerCommand(
      'agentHost.selectAgent',
      run('Select agent', async () => {
        const agents = manager.agents();
        if (agents.length === 0) {
          await vscode.commands.executeCommand('workbench.action.openSettings', 'agentHost.agents');
          return;
        }
        const pick = await vscode.window.showQuickPick(
          agents.map((a) => ({ label: a.name, description: [a.command, ...(a.args ?? [])].join(' '), detail: a.protocol })),
          { title: vscode.l10n.t('Agent Host: choose the agent') },
        );
        if (pick && pick.label !== manager.agentName) {
          manager.select(pick.label);
          await manager.restart();
        }
      }),
    ),
    vscode.commands.registerCommand(
      'agentHost.prompt',
      run('Prompt', async (text?: unknown) => {
        const prompt =
          typeof text === 'string'
            ? text
            : await vscode.window.showInputBox({ prompt: vscode.l10n.t('Ask the agent'), ignoreFocusOut: true });
        if (!prompt) return;
        transcript.show();
        await manager.prompt(prompt);
      }),
    ),
    vscode.commands.registerCommand('agentHost.cancel', run('Cancel', () => manager.cancel())),
  );
  log.info('Agent Host activated');
  return { manager };
}

export function deactivate(): void {
  // Subscriptions shut the agent down; AgentProcess also kills every group on host exit.
}
