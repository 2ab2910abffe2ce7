/**
 * An agent's command surface beyond prompting ("Atrium: Agent Commands…"), declared once: each command's
 * arguments and result. pi RPC agents implement it (their adapter maps each name to its dialect's wire
 * command); views call `run` and never see a protocol.
 */

export interface ImageInput {
  type: 'image';
  data: string;
  mimeType: string;
}

export type QueueMode = 'all' | 'one-at-a-time';
export type InterruptMode = 'immediate' | 'wait';
export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | (string & {});

export interface ModelChoice {
  provider: string;
  id: string;
  name?: string;
}

export interface BashResult {
  output?: string;
  exitCode?: number;
  cancelled?: boolean;
  truncated?: boolean;
  [key: string]: unknown;
}

/** Command name → [arguments, result]. */
export interface AgentCommandMap {
  steer: [{ message: string; images?: ImageInput[] }, void];
  follow_up: [{ message: string; images?: ImageInput[] }, void];
  /** Aborts the running turn and sends a new prompt; resolves when the new prompt's run ends. */
  abort_and_prompt: [{ message: string; images?: ImageInput[] }, { stopReason: string }];
  new_session: [{ parentSession?: string }, { cancelled: boolean }];
  get_available_models: [Record<string, never>, ModelChoice[]];
  set_model: [{ provider: string; modelId: string }, unknown];
  cycle_model: [Record<string, never>, unknown];
  set_thinking_level: [{ level: ThinkingLevel }, void];
  cycle_thinking_level: [Record<string, never>, string | null];
  set_steering_mode: [{ mode: QueueMode }, void];
  set_follow_up_mode: [{ mode: QueueMode }, void];
  set_interrupt_mode: [{ mode: InterruptMode }, void];
  /** Manual compaction; may take as long as a model call. */
  compact: [{ customInstructions?: string }, unknown];
  set_auto_compaction: [{ enabled: boolean }, void];
  set_auto_retry: [{ enabled: boolean }, void];
  abort_retry: [Record<string, never>, void];
  /** A shell command in the agent's session (its output joins the context). */
  bash: [{ command: string }, BashResult];
  abort_bash: [Record<string, never>, void];
  get_session_stats: [Record<string, never>, Record<string, unknown>];
  /** Writes the session as HTML; the result is the file's path. */
  export_html: [{ outputPath?: string }, string];
  switch_session: [{ sessionPath: string }, { cancelled: boolean }];
  /** The user messages one can branch from. */
  get_branch_messages: [Record<string, never>, { entryId: string; text: string }[]];
  branch: [{ entryId: string }, { text: string; cancelled: boolean }];
  get_last_assistant_text: [Record<string, never>, string | null];
  set_session_name: [{ name: string }, void];
  get_messages: [Record<string, never>, unknown[]];
}

export type AgentCommandName = keyof AgentCommandMap;

export interface CommandSupport {
  supported: boolean;
  /** Why not, when it is not. */
  reason?: string;
  /** Done with several commands of the agent (e.g. abort, then prompt). */
  emulated?: boolean;
}

export interface AgentCommands {
  supports(name: AgentCommandName): CommandSupport;
  /** Throws when the agent lacks the command (without sending anything) or refuses it. */
  run<K extends AgentCommandName>(name: K, args: AgentCommandMap[K][0]): Promise<AgentCommandMap[K][1]>;
}
