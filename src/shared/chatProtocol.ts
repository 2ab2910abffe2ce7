/**
 * The one contract between the chat webview (webview-ui/) and the extension (src/views/chat/).
 * Requests go webview → extension and are answered once (`ChatRequests`: method → [params, result]);
 * events go extension → webview (`HostEvent`). The webview's first request is `ready`; its answer is the whole
 * snapshot, and events are only posted to a webview after it asked, so nothing is lost or applied twice.
 * Type-only imports: nothing here runs, and nothing imports `vscode` or the DOM.
 */
import type { ModeState, ModelState, PlanEntry, TimelineEntity, TurnState, Usage } from '../session/sessionModel';

import type { AgentExtras, AgentState } from '../session/agentExtras';

export type { AgentExtras, AgentState };

export type { ModeState, ModelState, PlanEntry, TimelineEntity, TurnState, Usage };
export type {
  ContentPart,
  MessageEntity,
  NoticeEntity,
  PermissionEntity,
  ToolCallEntity,
} from '../session/sessionModel';

/** A select or boolean setting the agent offers (ACP `configOptions`), flattened for display. */
export interface ConfigOptionView {
  id: string;
  name: string;
  description?: string;
  category?: string;
  type: 'select' | 'boolean';
  currentValue: string | boolean;
  options: { value: string; name: string; description?: string; group?: string }[];
  /** Named by our own adapter (`_meta.hostNamed`), not by the agent: the views name it in the display language. */
  hostNamed?: true;
}

export interface SlashCommand {
  name: string;
  description: string;
  /** Hint for the command's input, when it takes one. */
  hint?: string;
}

/** Context attached to a prompt; becomes ACP `resource_link` / `resource` / `image` blocks on send. */
export interface ContextChip {
  id: string;
  kind: 'file' | 'folder' | 'selection' | 'problems' | 'image' | 'terminal' | 'git' | 'url';
  label: string;
  /** file (dropped): its size in bytes; terminal / git: the characters of its text. Shown on the chip. */
  size?: number;
  /** file / folder / selection: the file's URI (string form); url: the link. */
  uri?: string;
  /** selection: 1-based inclusive lines. */
  range?: { startLine: number; endLine: number };
  /** selection / problems / terminal / git: the text; image: base64 data. */
  text?: string;
  mimeType?: string;
}

export interface QueuedPrompt {
  id: string;
  text: string;
  context: ContextChip[];
}

/** One open conversation (chat tab). */
export interface TabView {
  id: string;
  title: string;
  agent?: string;
  state: AgentState;
  active: boolean;
  /** A background tab's unseen news: a permission waiting, or a turn that ended. */
  attention?: 'permission' | 'done';
}

export interface HeaderState {
  /** The open conversations, in order; one is active. */
  tabs: TabView[];
  agents: string[];
  /** Where each agent's entry is written ("User settings", …), shown beside its name in the picker. */
  agentSources?: Record<string, string>;
  agentName?: string;
  state: AgentState;
  /** Why the agent is stopped or failed (first line), when it is. */
  error?: string;
  turn: TurnState;
  /** Whole seconds the running turn has heard nothing from the agent, once past `agentHost.silenceWarningSeconds`. */
  silentSeconds?: number;
  modes?: ModeState;
  models?: ModelState;
  configOptions: ConfigOptionView[];
  usage?: Usage;
  /** The user's own MCP servers this session received (not the IDE lookups' server). */
  mcpServers?: { name: string; type: string }[];
  /** The session's sandbox (a local agent): its mode and what it allows. */
  sandbox?: { mode: string; description?: string };
  commands: SlashCommand[];
  /** What the agent accepts in a prompt (ACP promptCapabilities). */
  caps: { image: boolean; embeddedContext: boolean };
  /** Permission cards get buttons only when the host can answer from the chat. */
  permissionsInChat: boolean;
  title?: string;
  /** Agents with state of their own (pi RPC): their queue, modes, widgets and stats. */
  rpc?: RpcChatState;
}

/** What the chat shows of an agent's own state (pi RPC), and what its composer may do while a turn streams. */
export interface RpcChatState extends AgentExtras {
  /** Whether the agent takes steering / follow-up messages while streaming (else the composer queues locally). */
  canSteer: boolean;
  canFollowUp: boolean;
}

export interface Snapshot {
  /** The newest entities (src/views/chat/chatContent.ts SNAPSHOT_ENTITIES). */
  entities: TimelineEntity[];
  /** How many entities come before them (the page asks for them with `earlier`). */
  earlier: number;
  plan: PlanEntry[];
  header: HeaderState;
  queue: QueuedPrompt[];
  /** Context the user attached from the editor before the view was open. */
  pendingContext: ContextChip[];
  strings: ChatStrings;
  /** Restricted Mode: no agent runs; the page explains why and offers to manage trust instead of the chat. */
  restricted: boolean;
}

/** A tool card's terminal (the chat fills the `{type: "terminal", terminalId}` item the agent sent). */
export interface TerminalCardContent {
  type: 'terminal';
  terminalId: string;
  commandLine?: string;
  /** The end of its output. */
  output: string;
  /** Characters before `output` not kept. */
  dropped: number;
  exit?: { exitCode: number | null; signal: string | null };
  /** The agent released it: no "Show in Terminal". */
  released: boolean;
  /** Its tool call is over (an agent's own shell that reported no exit is not running any more). */
  ended?: boolean;
}

export interface FileHit {
  /** Default file. A symbol's chip is its lines (symbolContext). */
  kind?: 'file' | 'folder' | 'symbol';
  uri: string;
  label: string;
  description: string;
  /** symbol: 1-based inclusive lines. */
  range?: { startLine: number; endLine: number };
}

/** The commands the empty chat's first steps run (the walkthrough's buttons); the extension runs no other. */
export type FirstStepCommand = 'agentHost.selectAgent' | 'agentHost.addAgent' | 'agentHost.signIn' | 'agentHost.getStarted';

export type HostEvent =
  | { type: 'snapshot'; snapshot: Snapshot }
  | { type: 'entities'; entities: TimelineEntity[] }
  /** Text streamed onto messages the page already has (only the new text, never the whole message). */
  | { type: 'appends'; appends: { id: string; text: string }[] }
  | { type: 'plan'; entries: PlanEntry[] }
  | { type: 'header'; header: HeaderState }
  | { type: 'queue'; queue: QueuedPrompt[] }
  | { type: 'addContext'; chip: ContextChip }
  /** An RPC agent's `set_editor_text`: replaces the composer's text. */
  | { type: 'editorText'; text: string }
  | { type: 'focusInput' };

export interface ChatRequests {
  ready: [Record<string, never>, Snapshot];
  /** Up to `count` entities just before the one keyed `before` (kind:id), and how many come before those. */
  earlier: [{ before: string; count: number }, { entities: TimelineEntity[]; earlier: number }];
  /** Sends now when the agent is idle, else queues; answers whether it was queued (`untilStarted`: until the agent runs). */
  prompt: [{ text: string; context: ContextChip[] }, { queued: boolean; untilStarted?: boolean }];
  cancel: [Record<string, never>, void];
  /** RPC agents while a turn streams: deliver after the current tool calls (`steer`) or when the agent is done (`follow_up`). Idle: a plain prompt. */
  steer: [{ text: string; context: ContextChip[] }, { queued: boolean }];
  followUp: [{ text: string; context: ContextChip[] }, { queued: boolean }];
  removeQueued: [{ id: string }, void];
  editQueued: [{ id: string; text: string }, void];
  selectAgent: [{ name: string }, void];
  newSession: [Record<string, never>, void];
  /** Restarts the agent and reattaches its session (resume → load → new); the transcript stays. */
  restart: [Record<string, never>, void];
  /** Another conversation beside this one (same agent unless named); it becomes the active tab. */
  newTab: [{ agent?: string }, void];
  switchTab: [{ id: string }, void];
  closeTab: [{ id: string }, void];
  setMode: [{ modeId: string }, void];
  setModel: [{ modelId: string }, void];
  setConfigOption: [{ configId: string; value: string | boolean }, void];
  searchFiles: [{ query: string }, FileHit[]];
  /** Files and folders dropped on the composer (their URIs): chips for those inside the workspace, the others' names. */
  droppedUris: [{ uris: string[] }, { chips: ContextChip[]; refused: string[] }];
  /** The active editor's selection (or null) and the workspace problems, as chips. */
  editorContext: [{ what: 'selection' | 'problems' | 'terminal' | 'git' }, ContextChip | null];
  /** A workspace symbol found by `@`: its lines as a chip. */
  symbolContext: [{ uri: string; label: string; startLine: number; endLine: number }, ContextChip | null];
  openLocation: [{ path: string; line?: number | null }, void];
  openDiff: [{ path: string; oldText: string | null; newText: string }, void];
  openLink: [{ href: string }, void];
  copy: [{ text: string }, void];
  insertCode: [{ code: string }, void];
  applyCode: [{ code: string }, void];
  runInTerminal: [{ code: string }, void];
  /** A tool card's "Show in Terminal": the agent's terminal in a VS Code terminal. */
  showTerminal: [{ id: string }, void];
  /** A tool card's "Revoke rule": the stored rule that answered its permission. */
  revokeRule: [{ id: string }, void];
  /** "Allow" on what the sandbox blocked (a tool card's or a notice's): asked in a modal, then kept for the agent. */
  allowInSandbox: [{ kind: 'write' | 'network'; target: string }, void];
  /** The composer's "Run on several agents…": its text is the prompt (docs/fanout.md). */
  runOnSeveralAgents: [{ text: string }, void];
  /** A turn summary's Review (the multi-file diff) and Undo all (asks first), of that tab's turn while it is its last. */
  reviewChanges: [{ tab: string; turn: number }, void];
  undoChanges: [{ tab: string; turn: number }, void];
  /** A user message's "Restore checkpoint" (files, conversation or both), "Edit and resend" (`edit`) or "Retry" (`retry`), by its entity key. */
  restoreCheckpoint: [{ key: string; edit?: boolean; retry?: boolean }, void];
  answerPermission: [{ permissionId: string; optionId: string; scope?: 'prefix' }, void];
  showLog: [Record<string, never>, void];
  /** Opens VS Code's workspace trust editor (from the Restricted Mode page). */
  manageTrust: [Record<string, never>, void];
  /** One of the first steps shown in an empty chat: pick or add an agent, sign in, open the walkthrough. */
  runCommand: [{ command: FirstStepCommand }, void];
}

export type RequestMethod = keyof ChatRequests;
export type RequestParams<M extends RequestMethod> = ChatRequests[M][0];
export type RequestResult<M extends RequestMethod> = ChatRequests[M][1];

export type RequestMessage = {
  [M in RequestMethod]: { kind: 'request'; id: number; method: M; params: RequestParams<M> };
}[RequestMethod];

export type HostMessage = { kind: 'response'; id: number; ok: true; result: unknown } | { kind: 'response'; id: number; ok: false; error: string } | { kind: 'event'; event: HostEvent };

/** Every user-facing string of the webview, localized by the extension. */
export interface ChatStrings {
  /** The page's title and its (visually hidden) heading. */
  title: string;
  transcript: string;
  empty: string;
  emptyHint: string;
  inputPlaceholder: string;
  inputLabel: string;
  /** The composer's keyboard help, read by screen readers as its description. */
  keyboardHint: string;
  send: string;
  stop: string;
  queued: string;
  queuedUntilStarted: string;
  removeQueued: string;
  editQueued: string;
  attach: string;
  runOnSeveral: string;
  addSelection: string;
  addProblems: string;
  removeChip: string;
  agent: string;
  closeTab: string;
  tabs: string;
  tabNeedsPermission: string;
  tabFinished: string;
  mode: string;
  model: string;
  usage: string;
  /** "MCP servers" (the header's list of the user's servers the session received). */
  mcpServers: string;
  thinking: string;
  thought: string;
  you: string;
  agentRole: string;
  plan: string;
  rawInput: string;
  output: string;
  openDiff: string;
  copy: string;
  copied: string;
  insert: string;
  apply: string;
  run: string;
  restart: string;
  showLog: string;
  longMessage: string;
  openWholeMessage: string;
  answerInDialog: string;
  /** Permission buttons are labelled by the option's kind (the agent's own wording beside it). */
  optionKinds: Record<'allow_once' | 'allow_always' | 'reject_once' | 'reject_always', string>;
  /** Shown on an option whose name says the opposite of what it does. */
  optionContradicts: string;
  permissionRequest: string;
  /** Announced with a permission request the chat may answer: how to reach it from the composer. */
  permissionKeyHint: string;
  permissionAnswered: string;
  permissionCancelled: string;
  statusPending: string;
  statusRunning: string;
  statusDone: string;
  statusFailed: string;
  statusRejected: string;
  statusCancelled: string;
  stateStopped: string;
  stateStarting: string;
  stateReady: string;
  stateBusy: string;
  stateError: string;
  turnCancelled: string;
  /** `{0}`: seconds without any output from the agent while its turn runs. */
  noOutput: string;
  cancelTurn: string;
  commands: string;
  files: string;
  noMatches: string;
  loadEarlier: string;
  loadLater: string;
  agentAnswered: string;
  imagesUnsupported: string;
  dropRefused: string;
  addTerminal: string;
  addGitChanges: string;
  addLink: string;
  noTerminalOutput: string;
  noGitRepository: string;
  terminal: string;
  showTerminal: string;
  terminalRunning: string;
  /** "Exit code {0}" */
  terminalExit: string;
  /** "Ended by {0}" (a signal) */
  terminalSignal: string;
  /** "{0} earlier characters not shown" */
  terminalDropped: string;
  /** A terminal whose output this window does not hold (kept across a reload). */
  terminalGone: string;
  /** "Allowed by a rule: {0}" */
  allowedByRule: string;
  /** "Rejected by a rule: {0}" */
  rejectedByRule: string;
  revokeRule: string;
  /** What the sandbox blocked: "Blocked by the sandbox: write to {0}", "…: network to {0} refused", and the action. */
  sandboxWriteBlocked: string;
  sandboxNetworkBlocked: string;
  sandboxAllow: string;
  /** The header's sandbox badge: its label per mode, and the tooltip's heading. */
  sandbox: string;
  sandboxOff: string;
  /** A turn summary's buttons. */
  reviewChanges: string;
  undoChanges: string;
  /** An agent message's "Copy" (its markdown). */
  copyMessage: string;
  /** A user message's actions: back to its checkpoint, and edit it and send it again. */
  restoreCheckpoint: string;
  editResend: string;
  retryPrompt: string;
  steer: string;
  followUp: string;
  steerHint: string;
  followUpHint: string;
  agentQueue: string;
  agentState: string;
  widgets: string;
  restrictedMode: string;
  manageTrust: string;
  /** The empty chat's first steps (the walkthrough's, in short). */
  firstSteps: FirstStepStrings;
}

export interface FirstStepStrings {
  title: string;
  chooseAgent: string;
  addAgent: string;
  signIn: string;
  ask: string;
  /** One line: how to run a command on selected code. */
  selectionHint: string;
  walkthrough: string;
}
