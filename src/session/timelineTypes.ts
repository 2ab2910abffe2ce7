/**
 * The shapes of a session's timeline and state (entities, turn, modes, models, usage) and the events its model
 * emits: plain JSON, no protocol types (src/session/sessionModel.ts keeps them).
 */
import type { Phrase } from './notices';
import type { SandboxBlock } from './sandboxBlocks';

export type Role = 'user' | 'agent' | 'thought';

/** A content block as agents send it (ACP ContentBlock shape: text, image, resource_link, …). */
export interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface MessageEntity {
  kind: 'message';
  id: string;
  role: Role;
  parts: ContentPart[];
  /** All text parts joined, kept up to date for cheap rendering (only the head once the message is `long`). */
  text: string;
  /** The text passed the model's limit: `text` holds its head, `file` the whole text (`chars` characters; `error` when a write failed). */
  long?: { file: string; chars: number; error?: string };
  /** A user message: the checkpoint taken before it was sent (workspace folder → the store's commit). */
  checkpoint?: Record<string, string>;
}

/** ACP's four, and ours: `cancelled` — the person stopped the turn while the call ran (whatever the agent said after). */
export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

export interface ToolCallEntity {
  kind: 'tool_call';
  id: string;
  title: string;
  toolKind: string;
  status: ToolStatus;
  content: unknown[];
  /** `label`: how a view shows the path (workspace-relative), set by the view; links use `path`. */
  locations: { path: string; line?: number | null; label?: string }[];
  rawInput?: unknown;
  rawOutput?: unknown;
  /** Which permission decision applied to it, when one did. */
  permission?: {
    optionId?: string;
    outcome: string;
    by: 'user' | 'policy' | 'rule' | 'timeout' | 'cancel';
    /** When a stored rule answered (`by: 'rule'`): the rule, as "Manage Permission Rules…" lists it, and its id (to revoke it). */
    rule?: string;
    ruleId?: string;
    /** The answer was a reject option (a card of a call that then failed says "rejected", not "failed"). */
    rejected?: boolean;
  };
  /** Why it ended unfinished: the agent went away before it finished (the card says so). */
  interrupted?: string;
  /** `interrupted` as a catalog phrase (src/session/notices.ts), for views that word it in the person's language. */
  interruptedPhrase?: Phrase;
  meta?: Record<string, unknown>;
  /** What the sandbox blocked while it ran (src/session/sandboxBlocks.ts): the card says so, with an action to allow it. */
  sandboxBlocked?: SandboxBlock[];
}

export interface PlanEntry {
  content: string;
  priority?: string;
  status: string;
  /** The phase (todo group) the entry belongs to, when the agent groups its plan (pi RPC `todoPhases`). */
  phase?: string;
}

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
  /** The name says the opposite of the kind (an "Always allow" named "Reject"): views flag it. */
  contradicts?: boolean;
}

export interface PermissionEntity {
  kind: 'permission';
  id: string;
  toolCallId: string;
  title: string;
  options: PermissionOption[];
  state: 'pending' | 'answered' | 'cancelled';
  answer?: string;
  /**
   * Set by the chat view while pending: the buttons to show, each saying what it does ("Always allow
   * `npm test`"), a broader rule as its own button (`scope: 'prefix'`); an "always" that can make no rule is left out.
   */
  buttons?: { optionId: string; kind: string; label: string; scope?: 'prefix' }[];
}

export interface NoticeEntity {
  kind: 'notice';
  id: string;
  severity: 'info' | 'warning' | 'error';
  title: string;
  detail?: string;
  /**
   * What it says, for views that word it themselves: `stopped` — the person stopped the turn; `long` — a message passed
   * the limit, its whole text in `file`; `changes` — the files the turn changed (`changes`), with Review and Undo all.
   */
  code?: 'stopped' | 'long' | 'changes' | 'sandbox';
  /** `sandbox`: what the sandbox blocked outside any tool call (a connection the agent made itself). */
  sandbox?: SandboxBlock;
  /** `changes`: the tab and turn whose changes these are, how many files, lines added and removed. */
  changes?: { tab: string; turn: number; files: number; added: number; removed: number };
  /** `long`: the file holding the whole message (unset when writing it failed). */
  file?: string;
  /** Which catalog texts `title` and `detail` are (src/session/notices.ts), for views that word them in the person's language; absent on agent text and on notices stored before. */
  phrases?: { title?: Phrase; detail?: Phrase };
  /** Its actions are done (the agent runs again since): views offer no Restart on it. */
  settled?: boolean;
}

export type TimelineEntity = MessageEntity | ToolCallEntity | PermissionEntity | NoticeEntity;

export type TurnState = 'idle' | 'running' | 'awaiting_permission' | 'cancelling';

export interface ModeState {
  currentModeId: string;
  availableModes: { id: string; name: string; description?: string | null }[];
}

export interface ModelState {
  currentModelId: string;
  availableModels: { modelId: string; name: string; description?: string | null }[];
}

export interface Usage {
  used: number;
  size: number;
  cost?: { amount: number; currency: string } | null;
  inputTokens?: number;
  outputTokens?: number;
}

export interface SessionInfo {
  title?: string | null;
  updatedAt?: string | null;
}

export type SessionEvent =
  | { type: 'entity'; entity: TimelineEntity; created: boolean }
  /**
   * Text appended to an existing message (a streamed chunk): the chunk only, never the whole message, so a
   * listener's cost per chunk does not grow with the message. The message itself: `model.get('message', id)`.
   */
  | { type: 'append'; id: string; role: Role; text: string }
  | { type: 'plan'; entries: PlanEntry[] }
  | { type: 'commands'; commands: { name: string; description: string; input?: unknown }[] }
  | { type: 'modes'; modes: ModeState }
  | { type: 'models'; models: ModelState }
  | { type: 'config'; options: unknown[] }
  | { type: 'usage'; usage: Usage }
  | { type: 'info'; info: SessionInfo }
  | { type: 'agent_state'; state: Record<string, unknown> }
  | { type: 'turn'; state: TurnState; stopReason?: string; error?: string }
  /** Entities were removed (the conversation went back to a checkpoint): views show the timeline again. */
  | { type: 'truncated' };
