/**
 * The command surface of an RPC session: every RPC command as a method, typed by the command map
 * (commands.ts) and mapped to the dialect's wire names; results the session model shows are applied on
 * the way back. RpcSession (rpcSession.ts) extends it with the lifecycle and the AgentSession methods.
 */
import type { Logger } from '../core/log';
import type { HostToolProvider } from '../session/hostTools';
import { phrase } from '../session/notices';
import type { SessionModel } from '../session/sessionModel';
import type { BashResult, ImageInput, InterruptMode, QueueMode, RpcCommandArgs, RpcCommandName, RpcCommandResult, RpcState, StreamingBehavior, ThinkingLevel, TodoPhase } from './commands';
import { UnsupportedCommandError, type CommandSupport, type RpcDialect } from './dialect';
import type { RpcConnection, RpcResponse } from './rpcConnection';
import { phasesToPlan, type ModelRef, type RpcStateSync } from './stateSync';
import type { RunTracker } from './turns';

export abstract class RpcCommandSurface {
  /** Set once the agent answered its first `get_state` (RpcSession.start resolves after that). */
  model!: SessionModel;
  dialect!: RpcDialect;
  protected state!: RpcStateSync;
  protected turns!: RunTracker;
  private stateRefresh: Promise<void> | undefined;

  protected constructor(
    readonly connection: RpcConnection,
    protected readonly logger: Logger,
    /** Timeout of each command other than the prompt turn (ms). */
    protected readonly commandTimeoutMs: number,
  ) {}

  /** Whether this agent has a command (and why not): the UI hides or disables what it lacks. */
  supports(command: string): CommandSupport {
    return this.dialect.supports(command);
  }

  /** A prompt while the agent is streaming: queued as steering or a follow-up. Resolves at the acknowledgement. */
  async promptWhileStreaming(message: string, streamingBehavior: StreamingBehavior, images: ImageInput[] = []): Promise<void> {
    await this.command('prompt', { message, streamingBehavior, ...(images.length ? { images } : {}) });
    this.model.notice('info', phrase(streamingBehavior === 'steer' ? 'steeringQueued' : 'followUpQueued'), message);
    void this.refreshState();
  }

  async steer(message: string, images: ImageInput[] = []): Promise<void> {
    await this.command('steer', { message, ...(images.length ? { images } : {}) });
    void this.refreshState();
  }

  async followUp(message: string, images: ImageInput[] = []): Promise<void> {
    await this.command('follow_up', { message, ...(images.length ? { images } : {}) });
    void this.refreshState();
  }

  async abort(): Promise<void> {
    return this.turns.abort();
  }

  /**
   * Aborts the running turn and sends a new prompt (fork: one command; upstream: abort, then prompt).
   * Resolves when the new prompt's run ends; a `prompt()` waiting on the aborted run resolves `cancelled`.
   */
  async abortAndPrompt(message: string, images: ImageInput[] = []): Promise<{ stopReason: string }> {
    const support = this.supports('abort_and_prompt');
    if (!support.supported) throw new UnsupportedCommandError('abort_and_prompt', support.reason ?? '');
    return support.emulated ? this.turns.abortThenPrompt(message, images) : this.turns.abortAndPrompt(message, images);
  }

  async newSession(parentSession?: string): Promise<{ cancelled: boolean }> {
    const r = await this.command('new_session', parentSession ? { parentSession } : {});
    await this.refreshState();
    return r ?? { cancelled: false };
  }

  async getState(): Promise<RpcState> {
    const seen = this.state.compactionEvents;
    return this.state.applyRaw(await this.command('get_state', {}), seen);
  }

  /** Replaces the todo list (fork only); the normalized phases become the model's plan. */
  async setTodos(phases: TodoPhase[]): Promise<TodoPhase[]> {
    const r = await this.command('set_todos', { phases });
    const out = r?.todoPhases ?? phases;
    this.model.setPlan(phasesToPlan(out));
    return out;
  }

  /** Registers a provider's tools with the agent (fork only); later calls arrive as `host_tool_call`. */
  async setHostTools(provider: HostToolProvider): Promise<string[]> {
    // "essential": offered to the model directly (omp defaults host tools to "discoverable", behind a search tool).
    const tools = provider.definitions().map((d) => ({ ...d, loadMode: 'essential' as const }));
    const r = await this.command('set_host_tools', { tools });
    return r?.toolNames ?? tools.map((t) => t.name);
  }

  async setModelById(provider: string, modelId: string): Promise<unknown> {
    const r = await this.command('set_model', { provider, modelId });
    await this.refreshState();
    return r;
  }

  async cycleModel(): Promise<unknown> {
    const r = await this.command('cycle_model', {});
    await this.refreshState();
    return r;
  }

  async getAvailableModels(): Promise<ModelRef[]> {
    const r = await this.command('get_available_models', {});
    return this.state.setAvailableModels(r?.models ?? []);
  }

  async setThinkingLevel(level: ThinkingLevel): Promise<void> {
    await this.command('set_thinking_level', { level });
    await this.refreshState();
  }

  async cycleThinkingLevel(): Promise<string | null> {
    const r = await this.command('cycle_thinking_level', {});
    await this.refreshState();
    return r?.level ?? null;
  }

  async setSteeringMode(mode: QueueMode): Promise<void> {
    await this.command('set_steering_mode', { mode });
    this.state.patch({ steeringMode: mode });
  }

  async setFollowUpMode(mode: QueueMode): Promise<void> {
    await this.command('set_follow_up_mode', { mode });
    this.state.patch({ followUpMode: mode });
  }

  async setInterruptMode(mode: InterruptMode): Promise<void> {
    await this.command('set_interrupt_mode', { mode });
    this.state.patch({ interruptMode: mode });
  }

  /** Manual compaction; may take as long as a model call, so it has no timeout. */
  async compact(customInstructions?: string): Promise<unknown> {
    const r = await this.command('compact', customInstructions ? { customInstructions } : {}, 0);
    void this.refreshState();
    return r;
  }

  async setAutoCompaction(enabled: boolean): Promise<void> {
    await this.command('set_auto_compaction', { enabled });
    this.state.patch({ autoCompactionEnabled: enabled });
  }

  async setAutoRetry(enabled: boolean): Promise<void> {
    await this.command('set_auto_retry', { enabled });
    this.state.patch({ autoRetryEnabled: enabled });
  }

  async abortRetry(): Promise<void> {
    await this.command('abort_retry', {});
  }

  /** Runs a shell command in the agent's session (its output joins the context); no timeout. */
  async bash(command: string): Promise<BashResult> {
    return this.command('bash', { command }, 0);
  }

  async abortBash(): Promise<void> {
    await this.command('abort_bash', {});
  }

  async getSessionStats(): Promise<Record<string, unknown>> {
    const stats = await this.command('get_session_stats', {});
    this.state.applySessionStats(stats);
    return stats;
  }

  /** Writes the session as HTML; returns the file's path (the UI opens it). */
  async exportHtml(outputPath?: string): Promise<string> {
    const r = await this.command('export_html', outputPath ? { outputPath } : {}, 0);
    return r.path;
  }

  async switchSession(sessionPath: string): Promise<{ cancelled: boolean }> {
    const r = await this.command('switch_session', { sessionPath });
    await this.refreshState();
    return r;
  }

  /** Branches from an earlier user message (upstream: `fork`). Returns that message's text. */
  async branch(entryId: string): Promise<{ text: string; cancelled: boolean }> {
    const r = await this.command('branch', { entryId });
    await this.refreshState();
    return r;
  }

  /** The user messages one can branch from (upstream: `get_fork_messages`). */
  async getBranchMessages(): Promise<{ entryId: string; text: string }[]> {
    const r = await this.command('get_branch_messages', {});
    return r?.messages ?? [];
  }

  async getLastAssistantText(): Promise<string | null> {
    const r = await this.command('get_last_assistant_text', {});
    return r?.text ?? null;
  }

  /** Names the session; an empty name is refused here, before it reaches the agent. */
  async setSessionName(name: string): Promise<void> {
    const trimmed = name.trim();
    if (!trimmed) throw new Error('Session name cannot be empty');
    await this.command('set_session_name', { name: trimmed });
    this.model.setInfo({ title: trimmed });
    this.state.patch({ sessionName: trimmed });
  }

  async getMessages(): Promise<unknown[]> {
    const r = await this.command('get_messages', {});
    return r?.messages ?? [];
  }

  /** Slash commands (extension commands, prompt templates, skills) the agent accepts in prompts. */
  async getCommands(): Promise<{ name: string; description?: string }[]> {
    const r = await this.command('get_commands', {});
    const commands = r?.commands ?? [];
    this.model.setCommands(commands.map((c) => ({ name: c.name, description: c.description ?? '' })));
    return commands;
  }

  /**
   * Any command by our name (see commands.ts for its arguments and result), mapped to the dialect's wire
   * name; throws UnsupportedCommandError without sending when the dialect lacks it, RpcCommandError when
   * the agent refuses it.
   */
  async command<K extends RpcCommandName>(name: K, args: RpcCommandArgs<K>, timeoutMs?: number): Promise<RpcCommandResult<K>> {
    const wire = this.dialect.wireName(name);
    return this.connection.call<RpcCommandResult<K>>({ type: wire, ...args }, { timeoutMs: timeoutMs ?? this.commandTimeoutMs });
  }

  /** A command sent as is, bypassing the dialect table and the command map (diagnostics and tests). */
  raw(command: { type: string; [key: string]: unknown }, timeoutMs?: number): Promise<RpcResponse> {
    return this.connection.send(command, { timeoutMs: timeoutMs ?? this.commandTimeoutMs });
  }

  /** Fetches `get_state` once for every caller asking while a fetch is under way; failures are only logged. */
  protected refreshState(): Promise<void> {
    this.stateRefresh ??= this.getState()
      .then(() => undefined)
      .catch((e: Error) => this.logger.debug(`get_state refresh: ${e.message}`))
      .finally(() => (this.stateRefresh = undefined));
    return this.stateRefresh;
  }
}
