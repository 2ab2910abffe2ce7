/**
 * The RPC command surface, declared once: every command by our name with its arguments and the `data` of
 * its successful response. `RpcSession.command()` is typed by this map; dialect.ts maps the names to each
 * dialect's wire names. Shapes follow pi 0.73.1 and omp 18.2.3 (`modes/rpc/rpc-types`), as far as we read them.
 */
import type { BashResult, ImageInput, InterruptMode, QueueMode, ThinkingLevel } from '../session/agentCommands';
import type { HostToolDefinition } from '../session/hostTools';

export type { BashResult, ImageInput, InterruptMode, QueueMode, ThinkingLevel } from '../session/agentCommands';
export type StreamingBehavior = 'steer' | 'followUp';

export interface TodoTask {
  id?: string;
  content: string;
  status: 'pending' | 'in_progress' | 'completed' | 'abandoned' | string;
  [key: string]: unknown;
}
export interface TodoPhase {
  id?: string;
  name: string;
  tasks: TodoTask[];
}

/** A model as the agent lists it (`provider/id` is what the session model shows). */
export interface RpcModel {
  provider: string;
  id: string;
  name?: string;
  contextWindow?: number;
  [key: string]: unknown;
}

/** `get_state`, with the queue count under one name whatever the dialect. */
export interface RpcState {
  model?: RpcModel | null;
  thinkingLevel?: ThinkingLevel;
  isStreaming: boolean;
  isCompacting: boolean;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  interruptMode?: InterruptMode;
  sessionFile?: string;
  sessionId: string;
  sessionName?: string;
  autoCompactionEnabled: boolean;
  messageCount: number;
  queuedMessageCount: number;
  todoPhases?: TodoPhase[];
  [key: string]: unknown;
}

export interface CompactionResult {
  summary?: string;
  tokensBefore?: number;
  [key: string]: unknown;
}

/** A host tool as `set_host_tools` takes it: our definition plus how omp offers it to the model. */
export interface HostToolRegistration extends HostToolDefinition {
  loadMode: 'essential' | 'discoverable';
}

type NoArgs = Record<string, never>;
type PromptText = { message: string; images?: ImageInput[] };

/** `{ ourName: [arguments, response data] }` for every command. */
export interface RpcCommandMap {
  prompt: [PromptText & { streamingBehavior?: StreamingBehavior }, { agentInvoked?: boolean } | undefined];
  steer: [PromptText, void];
  follow_up: [PromptText, void];
  abort: [NoArgs, void];
  abort_and_prompt: [PromptText, void];
  new_session: [{ parentSession?: string }, { cancelled: boolean }];
  /** Raw: the dialect normalizes it into RpcState. */
  get_state: [NoArgs, Record<string, unknown>];
  set_todos: [{ phases: TodoPhase[] }, { todoPhases?: TodoPhase[] }];
  set_host_tools: [{ tools: HostToolRegistration[] }, { toolNames?: string[] }];
  set_model: [{ provider: string; modelId: string }, RpcModel];
  cycle_model: [NoArgs, { model: RpcModel; thinkingLevel?: ThinkingLevel; isScoped?: boolean } | null];
  get_available_models: [NoArgs, { models?: RpcModel[] }];
  set_thinking_level: [{ level: ThinkingLevel }, void];
  cycle_thinking_level: [NoArgs, { level?: ThinkingLevel } | null];
  set_steering_mode: [{ mode: QueueMode }, void];
  set_follow_up_mode: [{ mode: QueueMode }, void];
  set_interrupt_mode: [{ mode: InterruptMode }, void];
  compact: [{ customInstructions?: string }, CompactionResult];
  set_auto_compaction: [{ enabled: boolean }, void];
  set_auto_retry: [{ enabled: boolean }, void];
  abort_retry: [NoArgs, void];
  bash: [{ command: string }, BashResult];
  abort_bash: [NoArgs, void];
  get_session_stats: [NoArgs, Record<string, unknown>];
  export_html: [{ outputPath?: string }, { path: string }];
  switch_session: [{ sessionPath: string }, { cancelled: boolean }];
  branch: [{ entryId: string }, { text: string; cancelled: boolean }];
  get_branch_messages: [NoArgs, { messages?: { entryId: string; text: string }[] }];
  get_last_assistant_text: [NoArgs, { text?: string | null }];
  set_session_name: [{ name: string }, void];
  get_messages: [NoArgs, { messages?: unknown[] }];
  get_commands: [NoArgs, { commands?: { name: string; description?: string }[] }];
  clone: [NoArgs, { cancelled: boolean }];
}

/** Every command the session exposes, by our (fork) name. */
export type RpcCommandName = keyof RpcCommandMap;
export type RpcCommandArgs<K extends RpcCommandName> = RpcCommandMap[K][0];
export type RpcCommandResult<K extends RpcCommandName> = RpcCommandMap[K][1];
