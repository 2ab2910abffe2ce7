/**
 * What the editor hands an agent at each start: the services it lends (permissions UI, files, terminals, MCP
 * servers, dialogs, host tools), sign-in keys, and this start's settings. The slot's lifecycle calls it.
 */
import * as vscode from 'vscode';
import { DEFAULT_MAX_LINE_BYTES } from '../core/lineSplitter';
import { redactingLogger, registerEnvSecrets } from '../core/log';
import { agentEnvironment, type AgentConfig } from '../session/agentConfig';
import type { AgentSession } from '../session/agentSession';
import type { AttachRequest, LifecycleTexts } from '../session/lifecycle';
import type { SessionModel } from '../session/sessionModel';
import { exitPhrase } from '../session/notices';
import { policyDecider } from '../session/permissions';
import { withMcpLoopback } from '../session/sandboxPolicy';
import { AuthRequiredError, type AgentStartOptions, type SignInHandler } from '../session/sessionHost';
import { trafficLogger, type TrafficLog } from '../session/traffic';
import { noticeText } from './noticeTexts';
import { RestrictedModeError } from './workspaceTrust';

/**
 * What the editor lends a session (permissions UI, files, terminals, MCP servers, extension dialogs,
 * host tools). Called at every agent start, so settings changes apply on restart; async for what starts on first use.
 */
type Lent = Partial<AgentStartOptions>;
export type SessionServices = (agent: AgentConfig, cwd: string, env: AgentEnvironment, where: StartFolders) => Lent | Promise<Lent>;

/** The folders a start works in: the workspace's, or (`pinned`) the one folder of a tab pinned to it. */
export interface StartFolders {
  folders: readonly string[];
  pinned: boolean;
}

/** The agent's environment for this start: `extra` (sign-in keys) on top of its config; `full` what it runs with. */
export interface AgentEnvironment {
  extra: Record<string, string>;
  full: () => Record<string, string>;
}

/** Starts a configured agent with its protocol's adapter (the composition root supplies it). */
export type StartAgent = (config: AgentConfig, options: AgentStartOptions) => Promise<AgentSession>;

/** Which configured agent a process runs, and in which folder. */
export interface ProcessContext {
  agent: AgentConfig;
  cwd: string;
}

/**
 * A tab pinned to a folder of its own instead of the workspace's (a fan-out run's worktree, docs/fanout.md): its
 * agent works there, its file boundary is that folder, and it is not kept across reloads.
 */
export interface PinnedWorkspace {
  folder: string;
  /** The tab's title ("codex · run 2"). */
  label: string;
}

/** Which tab a turn is in, and that tab's session model (read when the hook runs: a turn may start the agent). */
export interface TurnTab {
  id: string;
  model: () => SessionModel | undefined;
  /** Before a turn: the session the prompt goes to (the agent is ready). */
  session?: AgentSession;
}
export type TurnHook = (tab: TurnTab) => Promise<void>;

/** What a slot borrows from the manager: the configuration, the host's hooks, and where to remember. */
export interface SlotHost {
  readonly log: vscode.LogOutputChannel;
  readonly startAgent: StartAgent;
  agents(): AgentConfig[];
  services(): SessionServices[];
  signIn(): SignInHandler | undefined;
  beforeTurn(): TurnHook[];
  afterTurn(): TurnHook[];
  processHooks(): ((session: AgentSession, context: ProcessContext) => vscode.Disposable)[];
  /** The slot's session (or title) changed: persist the tabs. */
  remember(): void;
  /** A NEW session (not resumed or loaded) before it is ready: the agent's defaults go in. */
  prepareNew(session: AgentSession, agent: AgentConfig): Promise<void>;
}

/** One start's agent and folders, the session to reattach, and where its traffic and env secrets go. */
export interface LaunchRequest {
  agent: AgentConfig;
  cwd: string;
  folders: string[];
  /** The tab works in `folders[0]` alone (a fan-out run's worktree), not in the workspace. */
  pinned: boolean;
  attach: AttachRequest | undefined;
  traffic: TrafficLog;
  secrets: { forget: () => void };
}

/** Starts the agent in the editor; signed in outside the agent (a terminal login), it is started again, at most twice. */
export async function launchAgent(host: SlotHost, request: LaunchRequest): Promise<AgentSession> {
  for (let attempt = 0; ; attempt++) {
    const signedIn = { restart: false };
    try {
      return await launchOnce(host, request, signedIn);
    } catch (error) {
      if (!(error instanceof AuthRequiredError && signedIn.restart && attempt < 2)) throw error;
      host.log.info(`Signed in outside "${request.agent.name}": starting it again`);
    }
  }
}

/** Starts the agent with what the editor lends it (services, sign-in keys) and the settings of this start. */
async function launchOnce(host: SlotHost, { agent, cwd, folders, pinned, attach, traffic, secrets }: LaunchRequest, signedIn: { restart: boolean }): Promise<AgentSession> {
  const config = vscode.workspace.getConfiguration('agentHost');
  const signIn = host.signIn();
  const env = signIn ? await signIn.env(agent) : {};
  secrets.forget();
  secrets.forget = registerEnvSecrets(agent.env, env);
  const environment: AgentEnvironment = { extra: env, full: () => agentEnvironment(agent, env) };
  const extra = Object.assign({}, ...(await Promise.all(host.services().map((s) => s(agent, cwd, environment, { folders, pinned }))))) as Partial<AgentStartOptions>;
  if (Object.keys(env).length) extra.env = { ...(extra.env ?? {}), ...env };
  // The sandbox and the MCP servers are lent by different services: the servers' loopback ports join the sandbox here.
  if (extra.sandbox && extra.mcpServers) extra.sandbox = withMcpLoopback(extra.sandbox, extra.mcpServers);
  if (signIn) {
    extra.signIn = async (methods) => {
      const answer = await signIn.signIn(agent, methods);
      if (answer === 'restart') signedIn.restart = true;
      return typeof answer === 'object' ? answer.authenticate : undefined;
    };
  }
  return host.startAgent(agent, {
    // Without a host that asks the person, nothing is approved.
    decidePermission: policyDecider('deny-all'),
    ...extra,
    logger: trafficLogger(redactingLogger(host.log), traffic),
    frameTap: (direction, frame, text?: string) => traffic.frame(direction, frame, Date.now(), text),
    cwd,
    roots: folders,
    requestTimeoutMs: config.get<number>('requestTimeoutSeconds', 60) * 1000,
    initializeTimeoutMs: config.get<number>('initializeTimeoutSeconds', 60) * 1000,
    maxLineBytes: config.get<number>('maxLineBytes', DEFAULT_MAX_LINE_BYTES),
    ...(attach ? { attach } : {}),
    shareProcess: true,
  });
}

/** The crash and breaker notices in the person's language. */
export const LIFECYCLE_TEXTS: LifecycleTexts = {
  restarting: (agent, how, seconds) => vscode.l10n.t('Agent "{0}" exited ({1}); starting it again in {2} s', agent, how, seconds),
  breaker: (agent, n, window, exit) => vscode.l10n.t('Agent "{0}" crashed {1} times within {2} s, so it is not started again. Last exit: {3}', agent, n, window, exit),
  superseded: (agent) => vscode.l10n.t('Agent "{0}" was stopped while it started', agent),
  exit: (exit) => noticeText(exitPhrase(exit)),
};

/** The error state's text for a failed start; Restricted Mode leaves the state as it is (views say it with a way out). */
export function failureText(error: Error): string | undefined {
  if (error instanceof RestrictedModeError) return undefined;
  if (error instanceof AuthRequiredError) return vscode.l10n.t('{0}: {1}. Run "Atrium: Sign In" to sign in.', error.message, error.methods.map((m) => m.name).join(', '));
  return error.message;
}
