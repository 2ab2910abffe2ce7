import type { ExitInfo } from '../core/agentProcess';
export type { AgentExtras, AgentState } from './agentExtras';
import type { AgentCommands } from './agentCommands';
import type { AgentExtras } from './agentExtras';
import type { SelectionTasks } from './selectionTask';
import type { ContentPart, MessageEntity, SessionModel } from './sessionModel';

/** What the agent accepts in a prompt (ACP `promptCapabilities`; pi RPC takes images, context as text). */
export interface PromptCapabilities {
  image: boolean;
  embeddedContext: boolean;
}

/**
 * Messages an agent takes while its turn streams, waiting in the agent's own queue (pi RPC's steer and
 * follow-up). Absent on agents without such a queue: the chat queues locally instead.
 */
export interface StreamingQueue {
  readonly canSteer: boolean;
  readonly canFollowUp: boolean;
  /** Delivered after the running tool calls (or at once, by the agent's interrupt mode). */
  steer(parts: ContentPart[]): Promise<void>;
  /** Delivered when the running turn ends. */
  followUp(parts: ContentPart[]): Promise<void>;
}

export type AgentHealth = 'ok' | 'unresponsive';

/**
 * How this session came to be: `new`, or reattached to `requested` by `session/resume` (the agent keeps
 * the context, shows no history) or `session/load` (the agent replays it). When a reattach was asked for
 * and every rung failed, `how` is `new` and `detail` says why: a new session is never passed off as the old.
 */
export interface AttachInfo {
  how: 'new' | 'resumed' | 'loaded';
  requested?: string;
  detail?: string;
}

/** One entry of an agent's own session list (ACP `session/list`). */
export interface AgentSessionInfo {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt?: string;
}

/**
 * What a running agent session can do, whichever protocol it speaks. Views and commands use only this:
 * what differs between protocols is an optional capability here, never a class to test for.
 */
export interface AgentSession {
  readonly sessionId: string;
  readonly model: SessionModel;
  readonly agentInfo: { name: string; title?: string; version?: string; protocol: 'acp' | 'rpc' | 'agent-service'; protocolVersion?: number };
  readonly promptCapabilities: PromptCapabilities;
  readonly attach: AttachInfo;
  /** A new session can open on this session's running process (ACP agents share one per folder): a warm new chat. */
  readonly sessionsShareProcess: boolean;
  /** The agent's own session store over this connection (ACP `session/list`, `session/delete`). */
  readonly directory?: Omit<AgentSessionDirectory, 'close'> | undefined;
  /** The agent's own queue of messages sent while a turn streams (pi RPC). */
  readonly queue?: StreamingQueue;
  /** The agent's command surface beyond prompting ("Agent Commands…"; pi RPC). */
  readonly commands?: AgentCommands;
  /** Set when the agent goes back to before a user message in its own session (an ACP fork at a message). */
  readonly forkBefore?: ((message: MessageEntity) => Promise<void>) | undefined;
  /** The agent runs the selection commands itself from structured context (the agent service's `exec_*`). */
  readonly selectionTasks?: SelectionTasks;
  /**
   * Each prompt is a task on its own (the agent service): there is nothing to reattach, and a turn cut by a
   * dropped connection is not sent again.
   */
  readonly statelessTasks?: boolean;
  /** Agent-specific state the chat shows; undefined when the agent has none. */
  extras(): AgentExtras | undefined;
  /** `display`: what the transcript shows as the user's message instead of `parts` (e.g. a short label and chips). */
  prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }>;
  cancel(): Promise<void>;
  setMode(modeId: string): Promise<void>;
  setConfigOption(configId: string, value: string | boolean): Promise<void>;
  setModel(modelId: string): Promise<void>;
  /** Ends the session for good before the process goes (ACP `session/close` when the agent offers it). */
  close?(): Promise<void>;
  shutdown(): Promise<ExitInfo>;
  onExit(listener: (exit: ExitInfo) => void): () => void;
  /** 'unresponsive' after a request timed out, 'ok' again at the next answer. */
  onHealth(listener: (health: AgentHealth, detail: string) => void): () => void;
  /**
   * Fires whenever the agent writes to its protocol stream (any frame, even a partial or malformed one) and
   * when the host starts or finishes answering one of its requests. `waitingOnHost`: a request of the agent's
   * (a permission, a terminal's exit, a dialog) is still being answered, so its silence is the host's doing.
   */
  onActivity(listener: (waitingOnHost: boolean) => void): () => void;
}

/**
 * An agent's own store of sessions, reached without opening one (the CLI's `sessions` verbs, history).
 * `list` is undefined when the agent keeps no list it shares; `delete` false when it cannot delete.
 */
export interface AgentSessionDirectory {
  list(cwd?: string): Promise<AgentSessionInfo[] | undefined>;
  delete(sessionId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The agent refused the work for now (the agent service's full queue): the same request may go through later. */
export class AgentBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentBusyError';
  }
}

/** How a turn ended, as the CLI's exit code tells it. */
export const TURN_EXIT_CODES: Record<string, number> = {
  end_turn: 0,
  error: 1,
  usage: 2,
  start_failed: 3,
  agent_exited: 4,
  refusal: 5,
  max_tokens: 6,
  max_turn_requests: 6,
  cancelled: 7,
};
