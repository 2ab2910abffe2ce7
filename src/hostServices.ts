/**
 * Host services: everything the agent asks of the editor, plugged into every agent start through
 * AgentManager.addSessionServices — permissions (broker, rules, modal dialog), files (editor buffers,
 * WorkspaceEdit, review, the turn's changes), terminals, ask_user / elicitation, and the IDE lookups served
 * as host tools (pi RPC) and over MCP (ACP).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentManager } from './agentManager';
import type { McpServer } from './acp/types';
import { PermissionBroker } from './host/permissionBroker';
import { describeRule, PermissionRuleStore } from './host/permissionRules';
import { TurnChanges } from './host/turnChanges';
import { AgentTerminals } from './host/vscode/agentTerminals';
import { askUser, elicit } from './host/vscode/agentQuestions';
import { EditorDocumentStore } from './host/vscode/editorFiles';
import { showDiff, VirtualDocuments } from './views/virtualDocuments';
import { IdeToolProvider } from './host/vscode/ideToolProvider';
import { AgentSignIn } from './host/vscode/signIn';
import { createToolEndpoint, type ToolEndpoint } from './mcp/toolEndpoint';
import { modalPermissionPresenter } from './views/permissionDialog';

export interface HostServices {
  /** Pending permission requests (the chat's inline card and view badge read and answer them here). */
  readonly broker: PermissionBroker;
  readonly rules: PermissionRuleStore;
  readonly turnChanges: TurnChanges;
  readonly ideTools: IdeToolProvider;
  readonly terminals: AgentTerminals;
  readonly documents: EditorDocumentStore;
  /** Sign-in for agents that answer -32000 (its chooser / askSecret / runTerminal are replaceable in tests). */
  readonly signIn: AgentSignIn;
  /** The IDE tools' endpoint the MCP bridge connects to (await `ready`). */
  readonly endpoint: ToolEndpoint;
  /** Opens the diff of one changed file of the last turn. */
  showChange(absPath: string): Promise<void>;
}

let current: HostServices | undefined;

/** The extension's host services (for the chat view: pending permissions, the turn's changed files). */
export function hostServices(): HostServices | undefined {
  return current;
}

const MCP_SERVER_NAME = 'ide';

export function registerHostServices(context: vscode.ExtensionContext, manager: AgentManager, log: vscode.LogOutputChannel): vscode.Disposable {
  const config = () => vscode.workspace.getConfiguration('agentHost');
  const roots = () => vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [];
  const disposables: vscode.Disposable[] = [];

  const docs = new VirtualDocuments();
  const rules = new PermissionRuleStore(context.workspaceState);
  const openDiff = async (d: { path: string; oldText: string | null; newText: string }) => {
    await showDiff(docs, d.path, d.oldText ?? undefined, d.newText, vscode.l10n.t("{0} ↔ agent's proposed edit", vscode.workspace.asRelativePath(d.path)));
  };
  const presenter = modalPermissionPresenter(openDiff);
  const broker = new PermissionBroker({
    rules,
    logger: log,
    timeoutSeconds: () => config().get<number>('permissions.timeoutSeconds', 0),
    presenter: () => (config().get<string>('permissions.mode', 'modal') === 'modal' ? presenter : undefined),
  });
  const documents = new EditorDocumentStore(docs, () => config().get<boolean>('files.reviewWrites', false), log);
  const turnChanges = new TurnChanges(roots);
  const terminals = new AgentTerminals();
  const ideTools = new IdeToolProvider(roots);
  const signIn = new AgentSignIn(context.secrets, log);
  const endpoint: ToolEndpoint = createToolEndpoint(ideTools, log);
  let endpointUp = true;
  endpoint.ready.catch((error: Error) => {
    endpointUp = false;
    log.error(`IDE tools endpoint failed to start: ${error.message}`);
  });
  const bridge = context.asAbsolutePath(path.join('dist', 'ideBridge.js'));

  const mcpServers = (): McpServer[] => {
    if (!endpointUp || !config().get<boolean>('ideTools.enabled', true)) return [];
    const env = { ...endpoint.bridgeEnv(), ELECTRON_RUN_AS_NODE: '1' };
    return [{ name: MCP_SERVER_NAME, command: process.execPath, args: [bridge], env: Object.entries(env).map(([name, value]) => ({ name, value })) }];
  };

  disposables.push(
    docs,
    terminals,
    manager.setSignIn(signIn),
    manager.addSessionServices((agent) => ({
      decidePermission: broker.decide,
      fileStore: documents,
      onFileWrite: (abs, before) => turnChanges.noteBefore(abs, before),
      terminalEvents: terminals.events,
      extRequests: { '_agentao.cn/ask_user': askUser, 'elicitation/create': elicit },
      ...(agent.protocol === 'rpc' ? (config().get<boolean>('ideTools.enabled', true) ? { hostTools: ideTools } : {}) : { mcpServers: mcpServers() }),
    })),
  );

  disposables.push(
    // The snapshot is taken before the prompt goes out: a fast agent must not write before it is complete.
    manager.addBeforeTurn(() => turnChanges.begin()),
    manager.onSessionEvent((e) => terminals.onSessionEvent(e)),
    manager.onDidChangeSession(() => broker.cancelAll()),
  );

  const showChange = async (absPath: string) => {
    const change = (await turnChanges.changes()).find((c) => c.path === absPath);
    if (!change) return;
    const name = vscode.workspace.asRelativePath(absPath);
    const after = change.status === 'deleted' ? '' : vscode.Uri.file(absPath);
    await showDiff(docs, absPath, change.before, after, vscode.l10n.t('{0} (before the turn ↔ now)', name));
  };

  disposables.push(
    vscode.commands.registerCommand('agentHost.managePermissionRules', async () => {
      const list = rules.list();
      if (list.length === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('No permission rules in this workspace. Pick an agent\'s "always" option to add one.'));
        return;
      }
      const picked = await vscode.window.showQuickPick(
        list.map((r) => ({ label: describeRule(r), description: new Date(r.createdAt).toLocaleString(), rule: r })),
        { title: vscode.l10n.t('Permission rules of this workspace: pick the ones to revoke'), canPickMany: true },
      );
      for (const p of picked ?? []) {
        await rules.revoke(p.rule.id);
        log.info(`Rule revoked: ${describeRule(p.rule)}`);
      }
    }),
    vscode.commands.registerCommand('agentHost.showTurnChanges', async () => {
      const changes = await turnChanges.changes();
      if (changes.length === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('The last turn changed no files.'));
        return;
      }
      const picked = await vscode.window.showQuickPick(
        changes.map((c) => ({ label: vscode.workspace.asRelativePath(c.path), description: c.status, path: c.path })),
        { title: vscode.l10n.t('Files the last turn changed') },
      );
      if (picked) await showChange(picked.path);
    }),
    vscode.commands.registerCommand('agentHost.revertTurnChanges', async (confirmed?: unknown) => {
      const changes = await turnChanges.changes();
      if (changes.length === 0) return [];
      if (confirmed !== true) {
        const revert = vscode.l10n.t('Revert');
        const pick = await vscode.window.showWarningMessage(
          vscode.l10n.t('Revert the {0} file(s) the last turn changed?', changes.length),
          { modal: true, detail: changes.map((c) => `${c.status}: ${vscode.workspace.asRelativePath(c.path)}`).join('\n') },
          revert,
        );
        if (pick !== revert) return undefined;
      }
      const failed = await turnChanges.revert();
      log.info(`Reverted the turn's changes (${changes.length} file(s)${failed.length ? `; not restorable: ${failed.join(', ')}` : ''})`);
      if (failed.length) void vscode.window.showWarningMessage(vscode.l10n.t('Could not restore: {0}', failed.join(', ')));
      return failed;
    }),
    // Starts the agent again: an agent that needs sign-in offers its methods on start.
    vscode.commands.registerCommand('agentHost.signIn', async () => {
      signIn.requested = true;
      try {
        await manager.restart();
      } catch (error) {
        log.warn(`Sign-in did not complete: ${(error as Error).message}`);
      } finally {
        signIn.requested = false;
      }
    }),
    // For the extension's own tests (not in the palette: not contributed).
    vscode.commands.registerCommand('agentHost.internal.hostServices', () => current),
  );

  current = { broker, rules, turnChanges, ideTools, terminals, documents, signIn, endpoint, showChange };
  return new vscode.Disposable(() => {
    current = undefined;
    broker.cancelAll();
    void endpoint.close();
    for (const d of disposables.reverse()) d.dispose();
  });
}
