import * as path from 'node:path';
import { sandboxModeOf } from './session/sandboxPolicy';
import { defaultSandboxMode } from './views/sandboxDialogs';
/**
 * The extension's composition root: builds the context once (log, agent manager with the adapter
 * factories, host services, views, commands) and hands each part what it needs. `deactivate` stops every
 * agent gracefully (stdin closed, then SIGTERM) before the extension host goes.
 */
import * as vscode from 'vscode';
import { protocolLabel } from './adapters/protocolLabel';
import { ServiceError } from './agentService/serviceConnection';
import { inertMarkup } from './core/visibleText';
import { registerSelectionCommands } from './commands/selectionCommands';
import { createHostServices, type HostServices } from './hostServices';
import { AgentManager, RestrictedModeError, SupersededStartError, type StartAgent } from './manager/agentManager';
import { settingsFilesOf, sourceLabel } from './manager/agentSources';
import { recordSessions } from './manager/sessionRecorder';
import { defaultStateDir, SessionStore } from './session/sessionStore';
import type { AddAgentContext } from './views/addAgent';
import { redactingLogger } from './core/log';
import { ChatViewProvider } from './views/chat/chatViewProvider';
import { RunWorktrees } from './fanout/worktrees';
import { registerRunDocuments } from './views/runs/runDiffs';
import { RunsController } from './views/runs/runsController';
import { registerChatParticipant, registerOpenChatTab } from './views/chatParticipant/participant';
import { registerRunsView } from './views/runs/runsTree';
import { FollowAgent } from './views/chat/followAgent';
import { TabHistories } from './views/chat/tabHistories';
import { ContextKeys, registerCommand, runCommand, type ContextKeyValues } from './views/commandRegistry';
import { WALKTHROUGH_ID } from './views/firstSteps';
import { trackWalkthrough } from './views/walkthroughProgress';
import { registerRpcCommands } from './views/rpcCommands';
import { VsCodeRpcUi } from './views/rpcUi';
import { refuseInRestrictedMode } from './views/restrictedMode';
import { AgentStatusBar } from './views/statusBar';
import { TranscriptChannel } from './views/transcriptChannel';

/** What the rest of the extension is built from (rust-analyzer's Ctx): made once in `activate`. */
interface Ctx {
  readonly extension: vscode.ExtensionContext;
  readonly log: vscode.LogOutputChannel;
  readonly manager: AgentManager;
  readonly host: HostServices;
  readonly keys: ContextKeys;
  /** The local session index shared with the CLI (`agentHost.sessions.stateDir`, read at each use). */
  readonly sessions: () => SessionStore;
}

/** What `activate` returns: the extension's own tests reach the running parts through it. */
export interface AgentHostApi {
  readonly manager: AgentManager;
  readonly host: HostServices;
  readonly chat: ChatViewProvider;
  readonly sessions: () => SessionStore;
  /** Runs of "Run on Several Agents…" (docs/fanout.md). */
  readonly runs: RunsController;
  /** `@atrium` is offered in VS Code's Chat view (VS Code has the language-model provider API: 1.104 and later). */
  readonly chatParticipant: boolean;
  contextKeys(): ContextKeyValues;
}

let running: AgentManager | undefined;
let runningRuns: RunsController | undefined;

// What only some windows use is loaded on first use, not with the extension: the protocol adapters (and
// vscode-jsonrpc) with the first agent start; installing agents, the compatibility check (and its scripted
// model), the history and the traffic view with their commands.
const startAgentSession: StartAgent = async (config, options) => (await import('./adapters/factory.js')).startAgentSession(config, options);

export function activate(context: vscode.ExtensionContext): AgentHostApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Atrium', { log: true });
  const manager = new AgentManager(log, startAgentSession, context.workspaceState, context.globalState, settingsFilesOf(context.globalStorageUri.fsPath));
  running = manager;
  context.subscriptions.push(log, manager);
  const { services: host, disposable: hostDisposable } = createHostServices(context, manager, log);
  context.subscriptions.push(hostDisposable);
  // One store per folder: it keeps the transcript copies that wait to be written (written when the window closes).
  const stores = new Map<string, SessionStore>();
  const sessions = () => {
    const dir = vscode.workspace.getConfiguration('agentHost').get<string>('sessions.stateDir', '') || defaultStateDir();
    const store = stores.get(dir) ?? new SessionStore(dir);
    stores.set(dir, store);
    return store;
  };
  context.subscriptions.push({
    dispose: () => {
      for (const s of stores.values()) s.flush();
    },
  });
  const ctx: Ctx = { extension: context, log, manager, host, keys: new ContextKeys(), sessions };

  const transcript = new TranscriptChannel(manager);
  // Without a folder open there is no workspace storage: the empty window's histories share one folder.
  const historyDir = context.storageUri?.fsPath ?? path.join(context.globalStorageUri.fsPath, 'empty-window');
  const histories = new TabHistories(historyDir, context.workspaceState, log);
  const chat = new ChatViewProvider(context.extensionUri, manager, log, histories, host.broker, host.terminals, host.restoreCheckpointFiles);
  const rpcUi = new VsCodeRpcUi();
  // @atrium in VS Code's own Chat view, where VS Code can host it (docs/chat-view.md).
  const participant = registerChatParticipant(manager, host.turnChanges, context.extensionUri, log);
  // Each run's worktree lives in the extension's storage, outside the user's tree.
  const runs = new RunsController(manager, new RunWorktrees(path.join(context.globalStorageUri.fsPath, 'worktrees')), context.workspaceState, log);
  runningRuns = runs;
  context.subscriptions.push(runs, registerRunsView(runs, manager, log), registerRunDocuments());
  context.subscriptions.push(
    // First: it hears every step's events from the start.
    trackWalkthrough(context.extension, ctx.keys, log),
    transcript,
    { dispose: () => histories.flush() },
    new FollowAgent(manager, context.globalState, ctx.keys, log),
    new AgentStatusBar(manager),
    chat,
    chat.register(),
    rpcUi,
    manager.addSessionServices(() => ({ ui: rpcUi })),
    // Status entries belong to the agent process that set them.
    manager.onEachProcess(() => new vscode.Disposable(() => rpcUi.clearStatus())),
    registerRpcCommands(manager, log),
    registerOpenChatTab(manager),
    participant.disposable,
    recordSessions(manager, sessions, log),
    registerSelectionCommands(manager, log, () => transcript.show()),
    ...registerAgentCommands(ctx, transcript, chat),
    ...trackContextKeys(ctx),
  );
  openChatOnFirstStart(context, log);
  log.info(`Atrium activated in ${(performance.now() - started).toFixed(1)} ms`);
  return { manager, host, chat, sessions, runs, chatParticipant: participant.offered, contextKeys: () => ctx.keys.snapshot() };
}

/** The first start in a profile shows the chat in the side bar once (`agentHost.chat.openOnFirstStart`). */
function openChatOnFirstStart(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const key = 'agentHost.chatOpenedOnFirstStart';
  if (context.globalState.get<boolean>(key) || !vscode.workspace.getConfiguration('agentHost').get<boolean>('chat.openOnFirstStart', true)) return;
  void context.globalState.update(key, true);
  log.info('First start in this profile: opening the chat');
  void vscode.commands.executeCommand('agentHost.chat.focus');
}

export async function deactivate(): Promise<void> {
  // Graceful first (stdin closed, SIGTERM); AgentProcess still SIGKILLs every group if the host exits sooner.
  const manager = running;
  running = undefined;
  await manager?.stopAll();
  // Runs not kept go with the window (their agents are stopped above).
  const runs = runningRuns;
  runningRuns = undefined;
  await runs?.disposeRuns();
}

function registerAgentCommands(ctx: Ctx, transcript: TranscriptChannel, chat: ChatViewProvider): vscode.Disposable[] {
  const { manager, log } = ctx;
  const run = (what: string, action: () => Promise<unknown>) => async () => {
    try {
      await action();
    } catch (error) {
      if (error instanceof SupersededStartError) return; // a later action overtook it
      if (error instanceof RestrictedModeError) return void refuseInRestrictedMode();
      // A refused key is said once, by the key store, with "Enter a New Key".
      if (error instanceof ServiceError && error.kind === 'refused_key') return void log.warn(`${what}: ${error.message}`);
      const message = (error as Error).message;
      log.error(`${what} failed: ${message}`);
      const pick = await vscode.window.showErrorMessage(
        inertMarkup(vscode.l10n.t('Atrium: {0} failed: {1}', what, message.split('\n')[0] ?? message)),
        vscode.l10n.t('Show Log'),
        vscode.l10n.t('Restart'),
      );
      if (pick === vscode.l10n.t('Show Log')) log.show();
      else if (pick === vscode.l10n.t('Restart')) void runCommand('agentHost.restart');
    }
  };
  /** Commands that need a running (or starting) agent say so instead of starting one. */
  const needsAgent = (what: string, action: () => Promise<unknown>) =>
    run(what, async () => {
      if (!manager.current && manager.state !== 'starting') {
        void vscode.window.showInformationMessage(vscode.l10n.t('Atrium: {0}: no agent is running.', what));
        return;
      }
      await action();
    });

  return [
    registerCommand(
      'agentHost.start',
      run('Start', () => manager.ensureStarted()),
    ),
    registerCommand(
      'agentHost.restart',
      run('Restart', () => manager.restart()),
    ),
    registerCommand(
      'agentHost.stop',
      needsAgent('Stop', () => manager.stop()),
    ),
    registerCommand('agentHost.showLog', () => log.show()),
    registerCommand(
      'agentHost.selectAgent',
      run('Select agent', async () => {
        const agents = manager.agents();
        if (agents.length === 0) {
          await vscode.commands.executeCommand('workbench.action.openSettings', 'agentHost.agents');
          return;
        }
        const pick = await vscode.window.showQuickPick(
          agents.map((a) => ({
            label: a.name,
            description: sourceLabel(manager.agentSource(a.name)),
            detail: a.url
              ? vscode.l10n.t('remote on {0} · {1} · {2}', new URL(a.url).host, protocolLabel(a), a.url)
              : `${[path.basename(a.command), ...(a.args ?? [])].join(' ')} · ${protocolLabel(a)} · ${vscode.l10n.t('sandbox: {0}', sandboxModeOf(a.sandbox, defaultSandboxMode()))}`,
          })),
          { title: vscode.l10n.t('Atrium: choose the agent') },
        );
        if (pick && pick.label !== manager.agentName) {
          manager.select(pick.label);
          await manager.restart();
        }
      }),
    ),
    registerCommand('agentHost.prompt', async (text?: string) =>
      run('Prompt', async () => {
        if (refuseInRestrictedMode()) return;
        const prompt = typeof text === 'string' ? text : await vscode.window.showInputBox({ prompt: vscode.l10n.t('Ask the agent'), ignoreFocusOut: true });
        if (!prompt) return;
        transcript.show();
        await manager.prompt(prompt);
      })(),
    ),
    registerCommand(
      'agentHost.cancel',
      needsAgent('Cancel', async () => {
        if (manager.current?.model.turn === 'idle') {
          void vscode.window.showInformationMessage(vscode.l10n.t('Atrium: no turn is running.'));
          return;
        }
        await manager.cancel();
      }),
    ),
    registerCommand('agentHost.noOutput', async () => {
      const seconds = manager.silentFor;
      if (seconds === undefined) {
        void vscode.window.showInformationMessage(vscode.l10n.t('Atrium: the agent is not silent (or no turn is running).'));
        return;
      }
      const cancel = { label: `$(debug-stop) ${vscode.l10n.t('Cancel the Turn')}` };
      const showLog = { label: `$(output) ${vscode.l10n.t('Show Log')}` };
      const wait = { label: `$(watch) ${vscode.l10n.t('Keep Waiting')}` };
      const pick = await vscode.window.showQuickPick([cancel, showLog, wait], {
        title: vscode.l10n.t('{0}: no output for {1} s', manager.agentName ?? '', seconds),
        placeHolder: vscode.l10n.t('A turn has no time limit: cancel it, or keep waiting'),
      });
      if (pick === cancel) await manager.cancel();
      else if (pick === showLog) log.show();
    }),
    registerCommand('agentHost.focusChat', () => chat.controller.focusInput()),
    registerCommand('agentHost.addSelectionToChat', () => chat.controller.addSelection()),
    registerCommand('agentHost.newChat', async () => {
      if (refuseInRestrictedMode()) return;
      await chat.controller.handle({ kind: 'request', id: 0, method: 'newSession', params: {} });
    }),
    // The view's one "+": a new conversation in a tab of its own (the current one keeps running in its tab).
    registerCommand('agentHost.newChatTab', async () => {
      if (refuseInRestrictedMode()) return;
      await chat.controller.handle({ kind: 'request', id: 0, method: 'newTab', params: {} });
    }),
    // Installs run npm and downloaded programs: not in Restricted Mode.
    registerCommand('agentHost.addAgent', async () => (refuseInRestrictedMode() ? undefined : (await import('./views/addAgent.js')).addAgent(installContext(ctx)))),
    registerCommand('agentHost.manageInstalledAgents', async () => (refuseInRestrictedMode() ? undefined : (await import('./views/addAgent.js')).manageInstalled(installContext(ctx)))),
    // Harmless in Restricted Mode too: the walkthrough's buttons run commands that refuse there themselves.
    registerCommand('agentHost.getStarted', async () => {
      await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${ctx.extension.extension.id}#${WALKTHROUGH_ID}`, false);
    }),
    registerCommand('agentHost.showTraffic', async () => {
      const { showTraffic } = await import('./views/trafficView.js');
      showTraffic({ manager, permissionTimeouts: () => ctx.host.broker?.timedOut ?? 0 });
    }),
    registerCommand('agentHost.checkCompatibility', async () => {
      if (refuseInRestrictedMode()) return undefined;
      const [{ checkCompatibility }, { runCompatCheck }, { openCheckHost }] = await Promise.all([import('./views/compatCheck.js'), import('./check/checkRun.js'), import('./check/checkHost.js')]);
      return checkCompatibility({
        agents: () => manager.agents(),
        ...(manager.agentName ? { current: manager.agentName } : {}),
        log,
        run: async (config, preset, scripted, line) => {
          // A remote agent is checked with the key or token the chat uses (asked once when none is stored).
          const apiKey = config.url ? await ctx.host.serviceKeys.get(config) : undefined;
          return runCompatCheck({
            config,
            ...(preset ? { preset } : {}),
            ...(apiKey ? { apiKey } : {}),
            scripted,
            timeoutMs: 30_000,
            openHost: (ws) => openCheckHost(ws, redactingLogger(log)),
            log: line,
            sandboxLauncher: { node: process.execPath, launcher: ctx.extension.asAbsolutePath(path.join('dist', 'sandbox.mjs')) },
          });
        },
      });
    }),
    registerCommand('agentHost.sessionHistory', async () => {
      if (refuseInRestrictedMode()) return;
      const { showSessionHistory } = await import('./views/sessionHistory.js');
      await showSessionHistory({
        manager,
        store: ctx.sessions,
        log,
        open: async (session, copy) => {
          await vscode.commands.executeCommand('agentHost.chat.focus');
          return chat.controller.openFromHistory(session, copy);
        },
      });
    }),
  ];
}

/** Keeps the context keys package.json's enablement clauses read in step with the agent. */
function trackContextKeys(ctx: Ctx): vscode.Disposable[] {
  const { manager, keys } = ctx;
  const update = () => {
    const session = manager.current;
    keys.set('agentHost.agentRunning', session !== undefined || manager.state === 'starting');
    keys.set('agentHost.turnRunning', session !== undefined && session.model.turn !== 'idle');
    keys.set('agentHost.agentHasCommands', session?.commands !== undefined);
    keys.set('agentHost.agentSilent', manager.silentFor !== undefined);
  };
  update();
  return [
    manager.onDidChangeState(update),
    manager.onDidChangeSession(update),
    manager.onSessionEvent((e) => {
      if (e.type === 'turn') update();
    }),
  ];
}

/** Where "Add Agent…" installs agents and caches the registry. */
function installContext(ctx: Ctx): AddAgentContext {
  const storage = vscode.workspace.getConfiguration('agentHost').get<string>('install.storageDir', '');
  const global = ctx.extension.globalStorageUri.fsPath;
  return { storage: storage || path.join(global, 'agents'), registryCache: path.join(global, 'registry'), log: ctx.log };
}
