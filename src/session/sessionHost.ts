/**
 * What a protocol adapter receives from a composition root (the extension or the CLI) to serve the agent:
 * permissions, files, terminals, dialogs, host tools, MCP servers, sign-in. All in the session layer's own
 * types: adapters map their protocol onto these, host services implement them, and neither imports the
 * other.
 */
import type { Logger } from '../core/log';
import type { SandboxLaunch } from '../core/agentProcess';
import type { AgentConfig } from './agentConfig';
import type { HostToolProvider } from './hostTools';
import type { McpServerEntry } from './mcpConfig';
import type { PermissionDecider } from './permissions';

/** A request the host refused or could not serve; each adapter maps `kind` to its protocol's error. */
export class HostRequestError extends Error {
  constructor(
    readonly kind: 'not_found' | 'refused' | 'invalid' | 'rejected',
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'HostRequestError';
  }
}

/** Text files for the agent, confined to the workspace (the extension overlays unsaved editor buffers). */
export interface FileAccess {
  /** 1-based `line` and a line `limit`, as ACP asks. Throws HostRequestError `not_found` / `refused`. */
  readTextFile(request: { path: string; line?: number | null; limit?: number | null }): Promise<string>;
  writeTextFile(request: { path: string; content: string }): Promise<void>;
}

export interface TerminalSpec {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  cwd?: string | null;
  outputByteLimit?: number | null;
}

export interface TerminalExitStatus {
  exitCode: number | null;
  signal: string | null;
}

export interface TerminalOutput {
  output: string;
  truncated: boolean;
  exitStatus?: TerminalExitStatus;
}

export interface TerminalCreated {
  terminalId: string;
  /** The variables the agent asked for that the command did not get, and how the user allows them. */
  droppedEnv?: string;
}

/** Commands the agent runs through the host (ACP `terminal/*`). */
export interface TerminalAccess {
  create(spec: TerminalSpec): Promise<TerminalCreated>;
  output(terminalId: string): Promise<TerminalOutput>;
  waitForExit(terminalId: string): Promise<TerminalExitStatus>;
  kill(terminalId: string): Promise<void>;
  release(terminalId: string): Promise<void>;
  /** Ids of the commands still running. */
  running(): string[];
  /** Kills every live command (the agent went away). */
  disposeAll(): void;
}

/** Who watches the agent's terminals (the editor shows them live). */
export interface TerminalEvents {
  onCreate?(id: string, commandLine: string): void;
  onOutput?(id: string, data: string): void;
  onExit?(id: string, status: TerminalExitStatus): void;
  /** The agent released it (`terminal/release`), or it went away. */
  onRelease?(id: string): void;
}

export interface UiDialogBase {
  /** The agent's request id. */
  id: string;
  title: string;
  /** Milliseconds after which the agent falls back to the default on its own. */
  timeout?: number;
}
export interface UiSelectRequest extends UiDialogBase {
  options: string[];
  optionDetails?: { description?: string }[];
}
export interface UiConfirmRequest extends UiDialogBase {
  message: string;
}
export interface UiInputRequest extends UiDialogBase {
  placeholder?: string;
}
export interface UiEditorRequest extends UiDialogBase {
  prefill?: string;
}

/**
 * Dialogs and status surfaces an agent's extensions ask for (pi RPC extension UI). Dialogs resolve to the
 * answer, or `undefined` when dismissed. `signal` aborts when the dialog times out or the agent withdraws it.
 */
export interface AgentUiHandlers {
  select(request: UiSelectRequest, signal: AbortSignal): Promise<string | undefined>;
  confirm(request: UiConfirmRequest, signal: AbortSignal): Promise<boolean | undefined>;
  input(request: UiInputRequest, signal: AbortSignal): Promise<string | undefined>;
  editor(request: UiEditorRequest, signal: AbortSignal): Promise<string | undefined>;
  notify(message: string, type: 'info' | 'warning' | 'error'): void;
  /** `text` undefined clears the entry. */
  setStatus(key: string, text: string | undefined): void;
  /** `lines` undefined removes the widget. */
  setWidget(key: string, lines: string[] | undefined, placement?: 'aboveEditor' | 'belowEditor'): void;
  setTitle(title: string): void;
  setEditorText(text: string): void;
}

/** A stdio MCP server handed to the agent. */
export interface McpServerSpec {
  name: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
}

/** The editor's tools for the agent, whatever its protocol: pi RPC registers them as host tools, ACP gets them as an MCP server. */
export interface IdeToolsService {
  readonly tools: HostToolProvider;
  /** The stdio MCP server that serves `tools` (for agents that take MCP servers); undefined when none can be offered. */
  mcpServer(): Promise<McpServerSpec | undefined>;
}

export interface QuestionOption {
  label: string;
  description?: string;
}

/** A question the agent asks the person: free text without options, else a choice (several when `multiple`; "Other…" when `allowCustom`). */
export interface AskUserRequest {
  question?: string;
  header?: string;
  options: QuestionOption[];
  multiple: boolean;
  allowCustom: boolean;
}
export type AskUserAnswer = { outcome: 'answered'; text: string } | { outcome: 'cancelled' };

/** One value a form asks for (a JSON Schema property, flattened). */
export interface ElicitField {
  name: string;
  type?: string;
  title?: string;
  description?: string;
  /** The allowed values (`enum`, `oneOf[].const`, or an array's `items.enum`). */
  choices?: unknown[];
  default?: unknown;
  required: boolean;
}
/** Structured input the agent asks for: a form of fields, or a link for the person to open. */
export type ElicitRequest = { mode: 'form'; message: string; fields: ElicitField[] } | { mode: 'url'; message: string; url: string };
export type ElicitAnswer = { action: 'accept'; content?: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

/** Answers a question; `signal` aborts when the turn is cancelled or the agent goes away. */
export type AskUserService = (request: AskUserRequest, signal: AbortSignal) => Promise<AskUserAnswer>;
export type ElicitService = (request: ElicitRequest, signal: AbortSignal) => Promise<ElicitAnswer>;
/**
 * The agent needs sign-in: answer a method id to authenticate with (then the session is retried in the same
 * process), or undefined to give up (start fails with AuthRequiredError).
 */
export type SignInService = (methods: AuthMethodInfo[], detail: string) => Promise<string | undefined>;

/** A sign-in method an agent offers (ACP `authMethods`; plain JSON beyond these fields). */
export interface AuthMethodInfo {
  id: string;
  name: string;
  description?: string | null;
  type?: string;
  [key: string]: unknown;
}

/** The agent asked for sign-in before it would open a session. */
export class AuthRequiredError extends Error {
  constructor(
    readonly methods: AuthMethodInfo[],
    detail: string,
  ) {
    super(`The agent needs you to sign in first (${detail})`);
    this.name = 'AuthRequiredError';
  }
}

/** A remote agent refused its token (HTTP 401/403): the editor offers to change it (`onKeyRefused` was called). */
export class TokenRefusedError extends Error {
  constructor(
    readonly agent: string,
    detail: string,
  ) {
    super(`The agent "${agent}" refused the token (${detail})`);
    this.name = 'TokenRefusedError';
  }
}

/** Sign-in for agents that need it (the extension's implementation asks the person). */
export interface SignInHandler {
  /** Extra environment for the agent (API keys kept from an earlier sign-in). */
  env(agent: AgentConfig): Promise<Record<string, string>>;
  /**
   * The agent needs sign-in: offer its methods. `{authenticate}`: call it and retry in the same process;
   * 'restart': signed in outside the agent (terminal login, a stored key), start it again; undefined: give up.
   */
  signIn(agent: AgentConfig, methods: AuthMethodInfo[]): Promise<{ authenticate: string } | 'restart' | undefined>;
}

/** Everything an adapter needs to start one agent session; adapters ignore what their protocol cannot use. */
export interface AgentStartOptions {
  logger: Logger;
  /** The workspace: the session's cwd and the boundary for file and terminal requests. */
  cwd: string;
  roots?: string[];
  decidePermission: PermissionDecider;
  files?: FileAccess;
  /** This session's terminals; the adapter disposes them when the agent goes away. */
  terminals?: TerminalAccess;
  /** Tools the host offers the agent; without it the agent gets none. */
  ideTools?: IdeToolsService;
  /**
   * The user's own MCP servers, trusted and with their variables resolved (src/session/mcpConfig.ts): an ACP agent
   * gets those its `mcpCapabilities` and its entry's `mcpServers` allow, the rest named in the chat; other
   * protocols take none and say so.
   */
  mcpServers?: McpServerEntry[];
  /** Questions the agent asks the person; without it they are answered with an error. */
  askUser?: AskUserService;
  /** Forms and links the agent asks the person for; without it they are answered with an error. */
  elicit?: ElicitService;
  /** Extension UI (pi RPC); without it every dialog is answered `cancelled`. */
  ui?: AgentUiHandlers;
  /** Added to the agent's environment (e.g. API keys from SecretStorage); wins over the config's env. */
  env?: Record<string, string>;
  /** Start the agent inside the sandbox (src/session/sandboxPolicy.ts, docs/sandbox.md); without it, as the user. */
  sandbox?: SandboxLaunch;
  /**
   * A remote agent's secret: the agent service's API key (`X-Api-Key`; AGENT_SERVICE_API_KEY in the CLI) or a remote
   * ACP agent's token (`Authorization: Bearer`; ACP_REMOTE_TOKEN in the CLI). From SecretStorage in the editor.
   */
  apiKey?: string;
  /** A remote agent's extra headers, its references already looked up (see remoteHeaders.ts). */
  headers?: Record<string, string>;
  /** The remote agent refused `apiKey` (the key is then forgotten and asked for again). */
  onKeyRefused?: () => void;
  /** A `wss://` agent presented a certificate nothing trusts: its SHA-256 fingerprint, to offer trusting it. */
  onUntrustedCertificate?: (fingerprint: string) => void;
  /** Sign-in when the agent asks for it; without it the start fails with AuthRequiredError. */
  signIn?: SignInService;
  requestTimeoutMs?: number;
  initializeTimeoutMs?: number;
  maxLineBytes?: number;
  /** How long a write may wait for the agent to read its input before it is stopped (ms; default 60 s). */
  writeStallMs?: number;
  /** Sees every frame in both directions (protocol traces, tests). */
  frameTap?: (direction: 'in' | 'out', frame: unknown) => void;
  /**
   * Reattach to this earlier session instead of opening a new one, by the ladder resume → load → new (each
   * step only when the agent offers it). `replay`: keep what `session/load` replays in the model (history
   * view); otherwise the replay is dropped because the host already shows its own copy. `via`: take only that
   * rung (the compatibility check tests each on its own); when it fails the session is new, with the reason.
   */
  attach?: { sessionId: string; replay?: boolean; via?: 'resume' | 'load' };
  /**
   * Share one agent process between the sessions of the same agent and folder (the editor's tabs), when
   * the protocol allows several sessions on one connection (ACP). The CLI runs one process per run.
   */
  shareProcess?: boolean;
}
