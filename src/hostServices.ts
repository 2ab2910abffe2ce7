/**
 * Host services (part of the extension's composition root): everything the agent asks of the editor,
 * plugged into every agent start through AgentManager.addSessionServices — permissions (broker, rules,
 * modal dialog), files (editor buffers, WorkspaceEdit, review, the turn's changes), terminals, questions
 * (askUser / elicit) and sign-in (their dialogs are views), and the IDE lookups (ideTools). Built once in
 * `activate` and handed to whoever needs a piece: no module global.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { inertMarkup } from './core/visibleText';
import { CheckpointStore, checkpointFolders, excludePatterns, restoreFolders } from './host/checkpoints';
import { FileService, type WriteGuard } from './host/fileService';
import { questionServices } from './host/agentQuestions';
import { PermissionBroker } from './host/permissionBroker';
import { protectedBy, protectedTarget } from './host/protectedPaths';
import { protectedPatternsFor } from './host/vscode/protectedSettings';
import { describeRule, PermissionRuleStore } from './host/permissionRules';
import { AgentSignIn } from './host/signIn';
import { TerminalService } from './host/terminalService';
import { TurnChangeSets } from './host/turnChangeSets';
import { AgentTerminals } from './host/vscode/agentTerminals';
import { EditorDocumentStore } from './host/vscode/editorFiles';
import { IdeToolProvider } from './host/vscode/ideToolProvider';
import { McpSources } from './host/vscode/mcpSources';
import type { SandboxLaunch } from './core/agentProcess';
import { sandboxAvailability, sandboxFor } from './agents/sandbox';
import { allowBlocked, allowedFor, confirmUnsandboxed, defaultSandboxMode } from './views/sandboxDialogs';
import { refuseInRestrictedMode } from './views/restrictedMode';
import type { AgentManager } from './manager/agentManager';
import { createToolEndpoint, type ToolEndpoint } from './mcp/toolEndpoint';
import { HostRequestError, type IdeToolsService, type McpServerSpec } from './session/sessionHost';
import { registerCommand } from './views/commandRegistry';
import { modalPermissionPresenter } from './views/permissionDialog';
import { confirmProtectedWrite } from './views/protectedWriteDialog';
import { questionDialogs } from './views/questionDialogs';
import { registerRulesView } from './views/rulesView';
import { ServiceKeys } from './views/serviceKeys';
import { resolveHeaders } from './session/remoteHeaders';
import { signInDialogs } from './views/signInDialogs';
import { showDiff, VirtualDocuments } from './views/virtualDocuments';
import { diffWriteReview } from './views/writeReview';
import { TurnReview } from './views/review/turnReview';

export interface HostServices {
  /** Pending permission requests (the chat's inline card and view badge read and answer them here). */
  readonly broker: PermissionBroker;
  readonly rules: PermissionRuleStore;
  /** What each tab's last turn changed on disk. */
  readonly turnChanges: TurnChangeSets;
  readonly ideTools: IdeToolProvider;
  readonly terminals: AgentTerminals;
  readonly documents: EditorDocumentStore;
  /** Sign-in for agents that answer -32000 (its chooser / askSecret / runTerminal are replaceable in tests). */
  readonly signIn: AgentSignIn;
  /** Agent services' API keys (SecretStorage, asked once). */
  readonly serviceKeys: ServiceKeys;
  /**
   * The IDE tools' endpoint the MCP bridge connects to (await `ready`), opened on first use: the first agent
   * start that gets the MCP server (or this call) opens the socket, never the window by itself.
   */
  toolEndpoint(): ToolEndpoint;
  /** Opens the diff of one changed file of the active tab's last turn. */
  showChange(absPath: string): Promise<void>;
  /** The before / proposed sides of host diffs (released with their tabs). */
  readonly virtualDocuments: VirtualDocuments;
  /** Puts the workspace's files back as a user message's checkpoint kept them; returns what could not be restored. */
  restoreCheckpointFiles(checkpoint: Record<string, string>): Promise<string[]>;
}

const MCP_SERVER_NAME = 'ide';

export function createHostServices(context: vscode.ExtensionContext, manager: AgentManager, log: vscode.LogOutputChannel): { services: HostServices; disposable: vscode.Disposable } {
  const config = (scope?: vscode.Uri) => vscode.workspace.getConfiguration('agentHost', scope);
  const roots = () => vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [];
  const disposables: vscode.Disposable[] = [];
  /** Each agent's sandbox as its last start chose it: its terminal commands run in the same. */
  const sandboxes = new Map<string, SandboxLaunch>();
  /** An agent in a folder: a fan-out's runs of one agent each have their worktree's sandbox. */
  const sandboxKey = (agent: { name: string }, cwd: string) => `${agent.name}\0${cwd}`;

  /** The folders tab `id` works in: a pinned tab's own (a fan-out run's worktree), else the workspace's. */
  const foldersOf = (id: string): (() => readonly string[]) => {
    const folder = manager.tabs().find((t) => t.id === id)?.folder;
    return folder ? () => [folder] : roots;
  };
  const docs = new VirtualDocuments();
  const protectedPatterns = (abs: string) => protectedPatternsFor([abs]);
  // A call naming a protected file is never answered by a rule nor made one (its write asks in a modal too).
  // Rules kept "everywhere" live in the user's global state; "this session" ones only in memory.
  const rules = new PermissionRuleStore(context.workspaceState, {
    user: context.globalState,
    // Each folder's own patterns (a folder-level setting included), all of them: a pattern of any folder protects.
    protectedTarget: (toolCall) => {
      const folders = roots();
      return protectedTarget(toolCall, folders, protectedPatternsFor(folders));
    },
  });
  const openDiff = async (d: { path: string; oldText: string | null; newText: string }) => {
    const title = vscode.l10n.t("{0} ↔ agent's proposed edit", vscode.workspace.asRelativePath(d.path));
    return showDiff(docs, d.path, d.oldText ?? undefined, d.newText, title, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  };
  const presenter = modalPermissionPresenter(
    openDiff,
    (r) => rules.offer(r.toolCall),
    () => rules.places(),
  );
  const broker = new PermissionBroker({
    rules,
    logger: log,
    timeoutSeconds: () => config().get<number>('permissions.timeoutSeconds', 0),
    presenter: () => (config().get<string>('permissions.mode', 'modal') === 'modal' ? presenter : undefined),
  });
  // Protected files always ask, whatever rule or permission mode is active.
  const guardWriteIn =
    (within: () => readonly string[]): WriteGuard =>
    async (abs) => {
      // files.protectedPaths is resource-scoped: a folder of a multi-root workspace may add its own.
      const pattern = protectedBy(abs, within(), protectedPatterns(abs));
      if (!pattern) return;
      log.warn(`The agent asks to write a protected file: ${abs} (${pattern})`);
      if (!(await confirmProtectedWrite(abs, pattern))) {
        throw new HostRequestError('rejected', `Refused: ${abs} is a protected file (${pattern}) and the user did not allow this write`);
      }
    };
  const documents = new EditorDocumentStore(diffWriteReview(docs), () => config().get<boolean>('files.reviewWrites', false), log);
  const turnChanges = new TurnChangeSets(roots);
  const checkpoints = new CheckpointStore(context.globalStorageUri.fsPath, log);
  const checkpointExcludes = (folder: string) => excludePatterns(vscode.workspace.getConfiguration('files', vscode.Uri.file(folder)).get<Record<string, unknown>>('exclude', {}));
  const terminals = new AgentTerminals();
  const ideTools = new IdeToolProvider(roots);
  const signIn = new AgentSignIn(context.secrets, signInDialogs, log, () => roots()[0]);
  const serviceKeys = new ServiceKeys(context.secrets, log);
  const mcpSources = new McpSources(context.globalStorageUri.fsPath, context.globalState, context.secrets, log);
  let endpoint: ToolEndpoint | undefined;
  const toolEndpoint = (): ToolEndpoint => {
    if (!endpoint) {
      endpoint = createToolEndpoint(ideTools, log);
      endpoint.ready.catch((error: Error) => log.error(`IDE tools endpoint failed to start: ${error.message}`));
    }
    return endpoint;
  };
  const bridge = context.asAbsolutePath(path.join('dist', 'ideBridge.js'));

  /** The IDE tools' MCP server (agents that take one): the first start waits for the socket; one that failed gives none. */
  const mcpServer = async (): Promise<McpServerSpec | undefined> => {
    const open = toolEndpoint();
    if (
      !(await open.ready.then(
        () => true,
        () => false,
      ))
    )
      return undefined;
    const env = { ...open.bridgeEnv(), ELECTRON_RUN_AS_NODE: '1' };
    return { name: MCP_SERVER_NAME, command: process.execPath, args: [bridge], env: Object.entries(env).map(([name, value]) => ({ name, value })) };
  };
  const ideToolsService: IdeToolsService = { tools: ideTools, mcpServer };

  disposables.push(
    docs,
    terminals,
    manager.setSignIn(signIn),
    manager.addSessionServices((agent, cwd, env, where) => {
      // A tab pinned to a folder (a fan-out run's worktree) works there alone; others in the workspace's folders.
      const within = where.pinned ? () => where.folders : roots;
      return {
        decidePermission: broker.decide,
        files: new FileService(within, documents, (abs, before) => turnChanges.noteBefore(abs, before), guardWriteIn(within)),
        terminals: new TerminalService(within, terminals.events, {
          baseEnv: env.full,
          allowedEnv: () => config().get<string[]>('terminals.allowedEnv', []),
          // The agent's commands run in its sandbox (decided below when it starts).
          sandbox: () => sandboxes.get(sandboxKey(agent, cwd)),
        }),
        ...questionServices(questionDialogs, agent.name, log),
        ...(config().get<boolean>('ideTools.enabled', true) ? { ideTools: ideToolsService } : {}),
      };
    }),
    // The sandbox (docs/sandbox.md): the entry's mode, else agentHost.sandbox.default, with what the person allowed
    // from the chat; on a machine that cannot sandbox, the agent starts only after a modal warning.
    manager.addSessionServices(async (agent, cwd, env, where) => {
      const choice = sandboxFor(agent, {
        cwd,
        roots: where.pinned ? [...where.folders] : roots(),
        env: env.extra,
        fallback: defaultSandboxMode(),
        launcher: { node: process.execPath, launcher: context.asAbsolutePath(path.join('dist', 'sandbox.mjs')) },
        extra: allowedFor(agent.name),
      });
      sandboxes.delete(sandboxKey(agent, cwd));
      if (!choice.launch) return {};
      const available = await sandboxAvailability(choice.launch);
      if (available.ok) {
        log.info(`Sandbox for "${agent.name}": ${choice.description}`);
        sandboxes.set(sandboxKey(agent, cwd), choice.launch);
        return { sandbox: choice.launch };
      }
      const why = available.errors.join('; ');
      log.warn(`No sandbox on this machine (${why}): "${agent.name}" starts unsandboxed only if the person says so`);
      if (await confirmUnsandboxed(agent.name, why)) return {};
      throw new Error(vscode.l10n.t('"{0}" was not started: the sandbox is not available on this machine ({1}).', agent.name, why));
    }),
    // The user's own MCP servers (VS Code's MCP configuration and agentHost.mcpServers), read again for each session.
    manager.addSessionServices(async (agent) => ({ mcpServers: await mcpSources.servers(agent) })),
    // A remote agent's key or token: asked once, kept in SecretStorage; a refused one is forgotten and asked again.
    manager.addSessionServices(async (agent) =>
      agent.url
        ? {
            ...(await serviceKeys.get(agent).then((apiKey) => (apiKey ? { apiKey } : {}))),
            ...(agent.headers ? { headers: await resolveHeaders(agent.headers, { secret: (name) => serviceKeys.secret(name, agent), env: (name) => process.env[name] }) } : {}),
            onKeyRefused: () => void serviceKeys.refused(agent, () => manager.restart().catch(() => undefined)),
            onUntrustedCertificate: (fingerprint: string) => void serviceKeys.untrusted(agent, fingerprint, () => manager.restart().catch(() => undefined)),
          }
        : {},
    ),
  );

  disposables.push(
    // The snapshot is taken before the prompt goes out: a fast agent must not write before it is complete.
    manager.addBeforeTurn((tab) => turnChanges.begin(tab.id, tab.model, foldersOf(tab.id))),
    // A turn that changed files ends with their summary in its tab's transcript (Review, Undo all).
    manager.addAfterTurn(async (tab) => {
      const summary = await turnChanges.end(tab.id);
      if (!summary?.files) return;
      log.info(`Tab ${tab.id}'s turn changed ${summary.files} file(s), +${summary.added} −${summary.removed}`);
      tab.model()?.changesSummary(summary);
    }),
    // A closed tab's snapshot goes with it.
    manager.onDidChangeTabs(() => turnChanges.keepOnly(manager.tabs().map((t) => t.id))),
    new TurnReview(
      turnChanges,
      () => manager.activeTabId,
      (tab) => manager.tabs().find((t) => t.id === tab)?.title,
      log,
    ),
    // Each prompt's user message carries the checkpoint taken before it (per tab: the message is that tab's session's).
    manager.addBeforeTurn(async ({ id, session }) => {
      if (!session) return;
      const taken = await checkpointFolders(checkpoints, foldersOf(id)(), `${session.agentInfo.name} ${session.sessionId}`, checkpointExcludes, log);
      if (Object.keys(taken).length) session.model.nextCheckpoint = taken;
    }),
    manager.onSessionEvent((e) => terminals.onSessionEvent(e)),
    // The folders are read into the checkpoint store while the agent starts: the first prompt's checkpoint writes only what changed.
    manager.onEachProcess(() => {
      for (const root of roots()) void checkpoints.warm(root, checkpointExcludes(root));
      return new vscode.Disposable(() => undefined);
    }),
    // A process that goes takes its questions with it; other tabs' requests stay.
    manager.onEachProcess((session) => new vscode.Disposable(() => broker.cancelSession(session.sessionId))),
  );

  const showChange = async (absPath: string) => {
    const change = (await turnChanges.changes(manager.activeTabId))?.changes.find((c) => c.path === absPath);
    if (!change) return;
    const name = vscode.workspace.asRelativePath(absPath);
    const after = change.status === 'deleted' ? '' : vscode.Uri.file(absPath);
    await showDiff(docs, absPath, change.before, after, vscode.l10n.t('{0} (before the turn ↔ now)', name));
  };

  disposables.push(
    registerCommand('agentHost.managePermissionRules', async (ruleId?: string) => {
      const list = rules.list();
      if (typeof ruleId === 'string') {
        const rule = list.find((r) => r.id === ruleId);
        if (rule && (await rules.revoke(rule.id))) {
          log.info(`Rule revoked: ${describeRule(rule)}`);
          void vscode.window.showInformationMessage(vscode.l10n.t('Rule revoked: {0}. The agent is asked again next time.', describeRule(rule)));
        } else void vscode.window.showInformationMessage(vscode.l10n.t('That rule no longer exists.'));
        return;
      }
      if (list.length === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('No permission rules. Pick an agent\'s "always" option, or Add Permission Rule… in the Permission Rules view, to add one.'));
        return;
      }
      const picked = await vscode.window.showQuickPick(
        list.map((r) => ({ label: describeRule(r), description: new Date(r.createdAt).toLocaleString(), rule: r })),
        { title: vscode.l10n.t('Permission rules (this session, this workspace, everywhere): pick the ones to revoke'), canPickMany: true },
      );
      for (const p of picked ?? []) {
        await rules.revoke(p.rule.id);
        log.info(`Rule revoked: ${describeRule(p.rule)}`);
      }
    }),
    registerRulesView(rules, log),
    registerCommand('agentHost.showTurnChanges', async () => {
      const changes = (await turnChanges.changes(manager.activeTabId))?.changes ?? [];
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
    // `tab`: the tab whose last turn (a summary's Undo all); the active tab's by default.
    registerCommand('agentHost.revertTurnChanges', async (confirmed?: boolean, tab = manager.activeTabId, turn?: number) => {
      const last = await turnChanges.changes(tab);
      if (turn !== undefined && last?.turn !== turn) {
        void vscode.window.showInformationMessage(vscode.l10n.t("These changes are no longer kept: only the tab's last turn can be reviewed."));
        return undefined;
      }
      const changes = last?.changes ?? [];
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
      const failed = await turnChanges.revert(tab);
      log.info(`Reverted the turn's changes (${changes.length} file(s)${failed.length ? `; not restorable: ${failed.join(', ')}` : ''})`);
      if (failed.length) void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('Could not restore: {0}', failed.join(', '))));
      return failed;
    }),
    // "Allow" on what the sandbox blocked, for the shown tab's agent: asked in a modal, kept in the user's settings.
    registerCommand('agentHost.allowInSandbox', async (kind, target) => {
      if (!kind || !target) return;
      await allowBlocked(manager.agentName, { kind, target }, () => manager.restart());
    }),
    // Starts the agent again: an agent that needs sign-in offers its methods on start.
    registerCommand('agentHost.signIn', async () => {
      if (refuseInRestrictedMode()) return; // its terminal methods run the agent's command
      signIn.requested = true;
      try {
        await manager.restart();
      } catch (error) {
        log.warn(`Sign-in did not complete: ${(error as Error).message}`);
      } finally {
        signIn.requested = false;
      }
    }),
  );

  const restoreCheckpointFiles = (checkpoint: Record<string, string>) => restoreFolders(checkpoints, checkpoint, roots());
  const services: HostServices = { broker, rules, turnChanges, ideTools, terminals, documents, signIn, serviceKeys, toolEndpoint, showChange, virtualDocuments: docs, restoreCheckpointFiles };
  const disposable = new vscode.Disposable(() => {
    broker.cancelAll();
    void endpoint?.close();
    for (const d of disposables.reverse()) d.dispose();
  });
  return { services, disposable };
}
