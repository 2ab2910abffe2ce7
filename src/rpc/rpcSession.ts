/**
 * An agent in pi's RPC mode (`<agent> --mode rpc`) behind the same AgentSession interface ACP agents have:
 * events go into the SessionModel the views read, `prompt()` resolves when the agent run ends, and every RPC
 * command is a typed method. Works with both dialects (oh-my-pi and upstream pi; see dialect.ts).
 */
import { AgentExitedError, describeExit, type ExitInfo } from '../core/agentProcess';
import type { Logger } from '../core/log';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentSession } from '../session/agentSession';
import type { HostToolProvider } from '../session/hostTools';
import { SessionModel, type ContentPart, type PlanEntry, type ToolCallEntity } from '../session/sessionModel';
import { detectDialect, RpcDialect, UnsupportedCommandError, type CommandSupport } from './dialect';
import { ExtensionUiDispatcher, type RpcUiHandlers } from './extensionUi';
import { HostToolRunner } from './hostToolRunner';
import { RpcCommandError, RpcConnection, type RpcConnectionOptions, type RpcFrame, type RpcResponse } from './rpcConnection';

export interface RpcSessionOptions {
  logger: Logger;
  /** The workspace: the agent's cwd unless the config sets one. */
  cwd: string;
  /** Extension UI dialogs and status surfaces; without it every dialog is answered `cancelled`. */
  rpcUi?: RpcUiHandlers;
  /** Tools the host offers (registered with `set_host_tools` when the dialect has it). */
  hostTools?: HostToolProvider;
  /** Timeout of each command other than the prompt turn (ms; default 60 s). */
  requestTimeoutMs?: number;
  /** How long the agent may take to answer its first `get_state` (ms; default 60 s). */
  initializeTimeoutMs?: number;
  maxLineBytes?: number;
  frameTap?: RpcConnectionOptions['frameTap'];
}

export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | string;
export type QueueMode = 'all' | 'one-at-a-time';
export type InterruptMode = 'immediate' | 'wait';
export type StreamingBehavior = 'steer' | 'followUp';

export interface ImageInput {
  type: 'image';
  data: string;
  mimeType: string;
}

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

/** `get_state`, with the queue count under one name whatever the dialect. */
export interface RpcState {
  model?: { provider: string; id: string; name?: string; contextWindow?: number; [k: string]: unknown } | null;
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

interface RunWaiter {
  /** Resolves at the end of the first run that started after this run number. */
  afterRun: number;
  /** The prompt command's id, to match a late error response or `prompt_result`. */
  promptId?: string;
  resolve: (result: { stopReason: string }) => void;
  reject: (error: Error) => void;
}

const TOOL_KINDS: [RegExp, string][] = [
  [/^(read|view|cat)$|^read_/i, 'read'],
  [/^(write|edit|multi_?edit|patch|apply_patch|notebook_edit)$/i, 'edit'],
  [/^(bash|shell|exec|python|eval)$/i, 'execute'],
  [/^(grep|find|glob|ls|search|ast_grep|lsp)$|symbol|definition/i, 'search'],
  [/fetch|web_search|browser/i, 'fetch'],
  [/todo|plan|think/i, 'think'],
];

function toolKind(name: string): string {
  for (const [re, kind] of TOOL_KINDS) if (re.test(name)) return kind;
  return 'other';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toolTitle(name: string, args: unknown): string {
  if (!isRecord(args)) return name;
  const target = args.path ?? args.file_path ?? args.abspath ?? args.command ?? args.pattern ?? args.url;
  return typeof target === 'string' && target ? `${name} ${target.length > 120 ? `${target.slice(0, 117)}…` : target}` : name;
}

function toolLocations(args: unknown): ToolCallEntity['locations'] | undefined {
  if (!isRecord(args)) return undefined;
  const p = args.path ?? args.file_path ?? args.abspath;
  return typeof p === 'string' && p ? [{ path: p }] : undefined;
}

/** Tool result content (pi: `{content:[{type:"text"|"image"}]}`) as ACP tool-call content. */
function toolContent(result: unknown): unknown[] | undefined {
  if (!isRecord(result) || !Array.isArray(result.content)) return undefined;
  return result.content.filter(isRecord).map((c) => ({ type: 'content', content: c }));
}

/** pi message content (a string or blocks) as content parts. */
function messageParts(content: unknown): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isRecord).flatMap((c): ContentPart[] => {
    if (c.type === 'text') return [{ type: 'text', text: String(c.text ?? '') }];
    if (c.type === 'image') return [{ type: 'image', data: c.data, mimeType: c.mimeType }];
    return [];
  });
}

function textOf(content: unknown, type: 'text' | 'thinking'): string {
  if (!Array.isArray(content)) return typeof content === 'string' && type === 'text' ? content : '';
  return content
    .filter(isRecord)
    .filter((c) => c.type === type)
    .map((c) => String((type === 'text' ? c.text : c.thinking) ?? ''))
    .join('');
}

/** Flattens todo phases into plan entries (the phase name kept on each entry). */
export function phasesToPlan(phases: TodoPhase[] | undefined): PlanEntry[] {
  return (phases ?? []).flatMap((phase) =>
    (phase.tasks ?? []).map((t) => ({ content: t.content, status: t.status, ...(phase.name ? { phase: phase.name } : {}) })),
  );
}

/** How a finished run ended, from the messages `agent_end` carries. */
function runOutcome(messages: unknown, aborted: boolean): { stopReason: string; error?: string } {
  if (aborted) return { stopReason: 'cancelled' };
  const list = Array.isArray(messages) ? messages.filter(isRecord) : [];
  const last = [...list].reverse().find((m) => m.role === 'assistant');
  switch (last?.stopReason) {
    case 'aborted':
      return { stopReason: 'cancelled' };
    case 'error':
      return { stopReason: 'error', error: String(last.errorMessage ?? 'The model request failed') };
    case 'length':
      return { stopReason: 'max_tokens' };
    default:
      return { stopReason: 'end_turn' };
  }
}

export class RpcSession implements AgentSession {
  model!: SessionModel;
  dialect!: RpcDialect;
  private agentSessionId = '';
  private readonly ui: ExtensionUiDispatcher;
  private readonly hostToolRunner: HostToolRunner;
  /** Frames that arrived before the first `get_state` answer (the model did not exist yet). */
  private early: RpcFrame[] | undefined = [];
  private sawReady: Record<string, unknown> | undefined;
  private runSeq = 0;
  private running = false;
  private runAborted = false;
  private abortBeforeStart = false;
  private waiters: RunWaiter[] = [];
  private current: { role: string; timestamp: unknown; id: string } | undefined;
  private msgSeq = 0;
  private availableModels: { provider: string; id: string; name?: string }[] = [];
  private stateRefresh: Promise<void> | undefined;
  private earlyUi: [string, Record<string, unknown>][] = [];

  private constructor(
    readonly connection: RpcConnection,
    private readonly config: AgentConfig,
    private readonly options: RpcSessionOptions,
  ) {
    const write = (frame: Record<string, unknown>) => connection.write(frame);
    this.ui = new ExtensionUiDispatcher(options.rpcUi, write, options.logger, (method, frame) => this.observeUi(method, frame));
    this.hostToolRunner = new HostToolRunner(options.hostTools, write, options.logger);
    connection.onFrame((frame) => this.onFrame(frame));
    connection.onExit((exit) => this.onAgentExit(exit));
  }

  get sessionId(): string {
    return this.model.sessionId;
  }

  get agentInfo(): AgentSession['agentInfo'] {
    return {
      name: this.config.name,
      title: this.dialect ? this.dialect.label : 'pi RPC',
      protocol: 'rpc',
      ...(typeof this.sawReady?.protocolVersion === 'number' ? { protocolVersion: this.sawReady.protocolVersion } : {}),
    };
  }

  /** The agent's own current session id (changes with new_session / switch_session / branch). */
  get currentAgentSessionId(): string {
    return this.agentSessionId;
  }

  /** Spawns the agent, detects its dialect, loads its state, and registers host tools. */
  static async start(config: AgentConfig, options: RpcSessionOptions): Promise<RpcSession> {
    const connection = RpcConnection.spawn(
      { command: config.command, args: config.args ?? [], env: config.env ?? {}, cwd: config.cwd ?? options.cwd },
      {
        logger: options.logger,
        commandTimeoutMs: options.requestTimeoutMs ?? 60_000,
        ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
        ...(options.frameTap ? { frameTap: options.frameTap } : {}),
      },
    );
    const session = new RpcSession(connection, config, options);
    try {
      await session.init();
      return session;
    } catch (error) {
      session.ui.dismissAll();
      await connection.shutdown();
      throw error;
    }
  }

  private async init(): Promise<void> {
    const raw = await this.connection.call<Record<string, unknown>>({ type: 'get_state' }, { timeoutMs: this.options.initializeTimeoutMs ?? 60_000 });
    this.dialect = detectDialect(!!this.sawReady, raw);
    this.options.logger.info(`RPC agent "${this.config.name}": ${this.dialect.label}, detected by ${this.dialect.detectedBy}`);
    const state = this.dialect.normalizeState(raw ?? {}) as RpcState;
    this.agentSessionId = String(state.sessionId ?? '');
    this.model = new SessionModel(this.agentSessionId || `rpc-${Date.now()}`);
    this.model.setAgentState({ protocol: 'rpc', dialect: this.dialect.name, dialectDetectedBy: this.dialect.detectedBy, commands: this.dialect.table() });
    this.applyState(state);
    for (const [method, frame] of this.earlyUi.splice(0)) this.observeUi(method, frame);
    const early = this.early ?? [];
    this.early = undefined;
    for (const frame of early) this.handleFrame(frame);
    await Promise.all([
      this.registerHostTools(),
      this.getAvailableModels().catch((e: Error) => this.options.logger.warn(`get_available_models: ${e.message}`)),
      this.dialect.name === 'upstream'
        ? this.getCommands().catch((e: Error) => this.options.logger.debug(`get_commands: ${e.message}`))
        : Promise.resolve(),
    ]);
  }

  private async registerHostTools(): Promise<void> {
    const provider = this.options.hostTools;
    if (!provider) return;
    const support = this.dialect.supports('set_host_tools');
    if (!support.supported) {
      this.options.logger.info(`Host tools not registered: ${support.reason}`);
      this.model.setAgentState({ hostTools: { registered: [], reason: support.reason } });
      return;
    }
    const names = await this.setHostTools(provider);
    this.model.setAgentState({ hostTools: { registered: names } });
  }

  // ------------------------------------------------------------------------------------------ AgentSession

  /** Sends a prompt and resolves when the agent run it started ends (`end_turn`, `cancelled`, `error`, …). */
  async prompt(parts: ContentPart[]): Promise<{ stopReason: string }> {
    if (this.model.turn !== 'idle' || this.running) {
      throw new Error('A turn is already running in this session (steer or queue a follow-up instead)');
    }
    const { message, images } = this.splitParts(parts);
    this.model.beginTurn();
    const promptId = this.connection.newId();
    const done = this.waitForRun(this.runSeq, promptId);
    const before = this.runSeq;
    try {
      await this.connection.call({ id: promptId, type: 'prompt', message, ...(images.length ? { images } : {}) }, { timeoutMs: this.commandTimeout() });
    } catch (error) {
      this.dropWaiter(promptId);
      if (this.model.turn !== 'idle' && !this.running) this.model.endTurn(undefined, (error as Error).message);
      throw error;
    }
    // Upstream pi runs extension slash commands without an agent run and says so only by not starting one.
    if (message.startsWith('/') && this.runSeq === before && this.dialect.name === 'upstream') {
      const state = await this.getState().catch(() => undefined);
      if (state && !state.isStreaming && this.runSeq === before && !this.running) this.finishLocalPrompt(promptId);
    }
    return done;
  }

  /** Aborts the running turn (`abort`); the pending prompt resolves `cancelled`. */
  async cancel(): Promise<void> {
    if (this.model.turn === 'idle' && !this.running) return;
    await this.abort();
  }

  async setMode(modeId: string): Promise<void> {
    throw new Error(`pi RPC agents have no session modes (asked for "${modeId}")`);
  }

  /** Config options published in `model.configOptions` (ACP shape): queue modes, thinking level, auto-*. */
  async setConfigOption(configId: string, value: string | boolean): Promise<void> {
    switch (configId) {
      case 'thinking_level':
        return this.setThinkingLevel(String(value));
      case 'steering_mode':
        return this.setSteeringMode(String(value) as QueueMode);
      case 'follow_up_mode':
        return this.setFollowUpMode(String(value) as QueueMode);
      case 'interrupt_mode':
        return this.setInterruptMode(String(value) as InterruptMode);
      case 'auto_compaction':
        return this.setAutoCompaction(value === true || value === 'true');
      case 'auto_retry':
        return this.setAutoRetry(value === true || value === 'true');
      default:
        throw new Error(`Unknown config option "${configId}"`);
    }
  }

  /** `modelId` as `provider/id` (the ids in `model.models`). */
  async setModel(modelId: string): Promise<void> {
    const slash = modelId.indexOf('/');
    const found = this.availableModels.find((m) => `${m.provider}/${m.id}` === modelId || (slash < 0 && m.id === modelId));
    const provider = found?.provider ?? (slash > 0 ? modelId.slice(0, slash) : '');
    const id = found?.id ?? (slash > 0 ? modelId.slice(slash + 1) : modelId);
    await this.setModelById(provider, id);
  }

  async shutdown(): Promise<ExitInfo> {
    this.ui.dismissAll();
    this.hostToolRunner.abortAll();
    return this.connection.shutdown();
  }

  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.connection.onExit(listener);
  }

  onHealth(listener: (health: 'ok' | 'unresponsive', detail: string) => void): () => void {
    return this.connection.onHealth(listener);
  }

  // ------------------------------------------------------------------------------------------ command surface

  /** Whether this agent has a command (and why not): the UI hides or disables what it lacks. */
  supports(command: string): CommandSupport {
    return this.dialect.supports(command);
  }

  /** A prompt while the agent is streaming: queued as steering or a follow-up. Resolves at the acknowledgement. */
  async promptWhileStreaming(message: string, streamingBehavior: StreamingBehavior, images: ImageInput[] = []): Promise<void> {
    await this.command('prompt', { message, streamingBehavior, ...(images.length ? { images } : {}) });
    this.model.notice('info', streamingBehavior === 'steer' ? 'Steering message queued' : 'Follow-up queued', message);
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
    this.model.requestCancel();
    const seq = this.runSeq;
    const early = !this.running;
    if (this.running) this.runAborted = true;
    else this.abortBeforeStart = true;
    await this.command('abort', {});
    // omp drops a prompt aborted before its run starts without any agent_start/agent_end: settle it here.
    if (early && this.waiters.length) {
      await new Promise((r) => setTimeout(r, 150));
      if (this.runSeq !== seq || this.running) return;
      const state = await this.getState().catch(() => undefined);
      if (!state || state.isStreaming || this.runSeq !== seq || this.running) return;
      this.abortBeforeStart = false;
      const waiters = this.waiters;
      this.waiters = [];
      if (this.model.turn !== 'idle') this.model.endTurn('cancelled');
      for (const w of waiters) w.resolve({ stopReason: 'cancelled' });
    }
  }

  /**
   * Aborts the running turn and sends a new prompt (fork: one command; upstream: abort, then prompt).
   * Resolves when the new prompt's run ends; a `prompt()` waiting on the aborted run resolves `cancelled`.
   */
  async abortAndPrompt(message: string, images: ImageInput[] = []): Promise<{ stopReason: string }> {
    const support = this.supports('abort_and_prompt');
    if (!support.supported) throw new UnsupportedCommandError('abort_and_prompt', support.reason ?? '');
    if (this.running) this.runAborted = true;
    const extra = images.length ? { images } : {};
    if (support.emulated) {
      await this.command('abort', {});
      return this.prompt([{ type: 'text', text: message }, ...images.map((i) => ({ ...i }))]);
    }
    const promptId = this.connection.newId();
    const done = this.waitForRun(this.runSeq, promptId);
    try {
      await this.connection.call({ id: promptId, type: 'abort_and_prompt', message, ...extra }, { timeoutMs: this.commandTimeout() });
    } catch (error) {
      this.dropWaiter(promptId);
      throw error;
    }
    return done;
  }

  async newSession(parentSession?: string): Promise<{ cancelled: boolean }> {
    const r = await this.command<{ cancelled: boolean }>('new_session', parentSession ? { parentSession } : {});
    await this.refreshState();
    return r ?? { cancelled: false };
  }

  async getState(): Promise<RpcState> {
    const raw = await this.command<Record<string, unknown>>('get_state', {});
    const state = this.dialect.normalizeState(raw ?? {}) as RpcState;
    this.applyState(state);
    return state;
  }

  /** Replaces the todo list (fork only); the normalized phases become the model's plan. */
  async setTodos(phases: TodoPhase[]): Promise<TodoPhase[]> {
    const r = await this.command<{ todoPhases?: TodoPhase[] }>('set_todos', { phases });
    const out = r?.todoPhases ?? phases;
    this.model.setPlan(phasesToPlan(out));
    return out;
  }

  /** Registers a provider's tools with the agent (fork only); later calls arrive as `host_tool_call`. */
  async setHostTools(provider: HostToolProvider): Promise<string[]> {
    // "essential": offered to the model directly (omp defaults host tools to "discoverable", behind a search tool).
    const tools = provider.definitions().map((d) => ({ ...d, loadMode: 'essential' }));
    const r = await this.command<{ toolNames?: string[] }>('set_host_tools', { tools });
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

  async getAvailableModels(): Promise<{ provider: string; id: string; name?: string }[]> {
    const r = await this.command<{ models?: { provider: string; id: string; name?: string }[] }>('get_available_models', {});
    this.availableModels = (r?.models ?? []).map((m) => ({ provider: m.provider, id: m.id, ...(m.name ? { name: m.name } : {}) }));
    this.publishModels(this.model.models?.currentModelId);
    return this.availableModels;
  }

  async setThinkingLevel(level: ThinkingLevel): Promise<void> {
    await this.command('set_thinking_level', { level });
    await this.refreshState();
  }

  async cycleThinkingLevel(): Promise<string | null> {
    const r = await this.command<{ level?: string } | null>('cycle_thinking_level', {});
    await this.refreshState();
    return r?.level ?? null;
  }

  async setSteeringMode(mode: QueueMode): Promise<void> {
    await this.command('set_steering_mode', { mode });
    this.patchState({ steeringMode: mode });
  }

  async setFollowUpMode(mode: QueueMode): Promise<void> {
    await this.command('set_follow_up_mode', { mode });
    this.patchState({ followUpMode: mode });
  }

  async setInterruptMode(mode: InterruptMode): Promise<void> {
    await this.command('set_interrupt_mode', { mode });
    this.patchState({ interruptMode: mode });
  }

  /** Manual compaction; may take as long as a model call, so it has no timeout. */
  async compact(customInstructions?: string): Promise<unknown> {
    const r = await this.command('compact', customInstructions ? { customInstructions } : {}, 0);
    void this.refreshState();
    return r;
  }

  async setAutoCompaction(enabled: boolean): Promise<void> {
    await this.command('set_auto_compaction', { enabled });
    this.patchState({ autoCompactionEnabled: enabled });
  }

  async setAutoRetry(enabled: boolean): Promise<void> {
    await this.command('set_auto_retry', { enabled });
    this.patchState({ autoRetryEnabled: enabled });
  }

  async abortRetry(): Promise<void> {
    await this.command('abort_retry', {});
  }

  /** Runs a shell command in the agent's session (its output joins the context); no timeout. */
  async bash(command: string): Promise<{ output?: string; exitCode?: number; cancelled?: boolean; truncated?: boolean; [k: string]: unknown }> {
    return this.command('bash', { command }, 0);
  }

  async abortBash(): Promise<void> {
    await this.command('abort_bash', {});
  }

  async getSessionStats(): Promise<Record<string, unknown>> {
    const stats = await this.command<Record<string, unknown>>('get_session_stats', {});
    this.patchState({ stats });
    const tokens = isRecord(stats?.tokens) ? stats.tokens : undefined;
    const cost = typeof stats?.cost === 'number' ? stats.cost : undefined;
    const ctx = isRecord(stats?.contextUsage) ? stats.contextUsage : undefined;
    if (ctx && typeof ctx.tokens === 'number' && typeof ctx.contextWindow === 'number') {
      this.model.setUsage({
        used: ctx.tokens,
        size: ctx.contextWindow,
        ...(cost !== undefined ? { cost: { amount: cost, currency: 'USD' } } : {}),
        ...(typeof tokens?.input === 'number' ? { inputTokens: tokens.input } : {}),
        ...(typeof tokens?.output === 'number' ? { outputTokens: tokens.output } : {}),
      });
    }
    return stats;
  }

  /** Writes the session as HTML; returns the file's path (the UI opens it). */
  async exportHtml(outputPath?: string): Promise<string> {
    const r = await this.command<{ path: string }>('export_html', outputPath ? { outputPath } : {}, 0);
    return r.path;
  }

  async switchSession(sessionPath: string): Promise<{ cancelled: boolean }> {
    const r = await this.command<{ cancelled: boolean }>('switch_session', { sessionPath });
    await this.refreshState();
    return r;
  }

  /** Branches from an earlier user message (upstream: `fork`). Returns that message's text. */
  async branch(entryId: string): Promise<{ text: string; cancelled: boolean }> {
    const r = await this.command<{ text: string; cancelled: boolean }>('branch', { entryId });
    await this.refreshState();
    return r;
  }

  /** The user messages one can branch from (upstream: `get_fork_messages`). */
  async getBranchMessages(): Promise<{ entryId: string; text: string }[]> {
    const r = await this.command<{ messages?: { entryId: string; text: string }[] }>('get_branch_messages', {});
    return r?.messages ?? [];
  }

  async getLastAssistantText(): Promise<string | null> {
    const r = await this.command<{ text?: string | null }>('get_last_assistant_text', {});
    return r?.text ?? null;
  }

  /** Names the session; an empty name is refused here, before it reaches the agent. */
  async setSessionName(name: string): Promise<void> {
    const trimmed = name.trim();
    if (!trimmed) throw new Error('Session name cannot be empty');
    await this.command('set_session_name', { name: trimmed });
    this.model.setInfo({ title: trimmed });
    this.patchState({ sessionName: trimmed });
  }

  async getMessages(): Promise<unknown[]> {
    const r = await this.command<{ messages?: unknown[] }>('get_messages', {});
    return r?.messages ?? [];
  }

  /** Slash commands (extension commands, prompt templates, skills) the agent accepts in prompts. */
  async getCommands(): Promise<{ name: string; description?: string }[]> {
    const r = await this.command<{ commands?: { name: string; description?: string }[] }>('get_commands', {});
    const commands = r?.commands ?? [];
    this.model.setCommands(commands.map((c) => ({ name: c.name, description: c.description ?? '' })));
    return commands;
  }

  /**
   * Any command by our name, mapped to the dialect's wire name; throws UnsupportedCommandError without
   * sending when the dialect lacks it, RpcCommandError when the agent refuses it.
   */
  async command<T = unknown>(name: string, args: Record<string, unknown>, timeoutMs?: number): Promise<T> {
    const wire = this.dialect.wireName(name);
    return this.connection.call<T>({ type: wire, ...args }, { timeoutMs: timeoutMs ?? this.commandTimeout() });
  }

  /** A command sent as is, bypassing the dialect table (diagnostics and tests). */
  raw(command: { type: string; [key: string]: unknown }, timeoutMs?: number): Promise<RpcResponse> {
    return this.connection.send(command, { timeoutMs: timeoutMs ?? this.commandTimeout() });
  }

  // ------------------------------------------------------------------------------------------ internals

  private commandTimeout(): number {
    return this.options.requestTimeoutMs ?? 60_000;
  }

  private splitParts(parts: ContentPart[]): { message: string; images: ImageInput[] } {
    const texts: string[] = [];
    const images: ImageInput[] = [];
    for (const p of parts) {
      if (p.type === 'text') texts.push(p.text ?? '');
      else if (p.type === 'image' && typeof p.data === 'string') images.push({ type: 'image', data: p.data, mimeType: String(p.mimeType ?? 'image/png') });
      else if (p.type === 'resource_link' && typeof p.uri === 'string') texts.push(`@${String(p.uri).replace(/^file:\/\//, '')}`);
      else if (p.type === 'resource' && isRecord(p.resource) && typeof p.resource.text === 'string') texts.push(p.resource.text);
    }
    return { message: texts.join('\n'), images };
  }

  private waitForRun(afterRun: number, promptId?: string): Promise<{ stopReason: string }> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ afterRun, ...(promptId ? { promptId } : {}), resolve, reject });
    });
  }

  private dropWaiter(promptId: string): void {
    this.waiters = this.waiters.filter((w) => w.promptId !== promptId);
  }

  /** A prompt the agent handled without a run (slash command): the turn ends here. */
  private finishLocalPrompt(promptId: string | undefined): void {
    const w = this.waiters.find((x) => x.promptId === promptId);
    if (!w) return;
    this.dropWaiter(w.promptId!);
    if (!this.running && this.model.turn !== 'idle') this.model.endTurn('end_turn');
    w.resolve({ stopReason: 'end_turn' });
  }

  private patchState(patch: Record<string, unknown>): void {
    this.model.setAgentState(patch);
    this.publishConfigOptions();
  }

  private refreshState(): Promise<void> {
    this.stateRefresh ??= this.getState()
      .then(() => undefined)
      .catch((e: Error) => this.options.logger.debug(`get_state refresh: ${e.message}`))
      .finally(() => (this.stateRefresh = undefined));
    return this.stateRefresh;
  }

  private applyState(state: RpcState): void {
    this.agentSessionId = String(state.sessionId ?? this.agentSessionId);
    const patch: Record<string, unknown> = {};
    for (const k of [
      'thinkingLevel',
      'isStreaming',
      'isCompacting',
      'steeringMode',
      'followUpMode',
      'interruptMode',
      'sessionFile',
      'sessionName',
      'autoCompactionEnabled',
      'messageCount',
      'queuedMessageCount',
      'fastModeEnabled',
      'tokensPerSecond',
    ]) {
      if (state[k] !== undefined) patch[k] = state[k];
    }
    patch.agentSessionId = state.sessionId;
    if (state.model) {
      patch.model = { provider: state.model.provider, id: state.model.id, name: state.model.name };
      if (typeof state.model.contextWindow === 'number') patch.contextWindow = state.model.contextWindow;
    }
    this.model.setAgentState(patch);
    this.publishConfigOptions();
    if (state.todoPhases) {
      const plan = phasesToPlan(state.todoPhases);
      if (JSON.stringify(plan) !== JSON.stringify(this.model.plan)) this.model.setPlan(plan);
    }
    if (state.sessionName && state.sessionName !== this.model.info.title) this.model.setInfo({ title: state.sessionName });
    if (state.model) this.publishModels(`${state.model.provider}/${state.model.id}`, state.model);
    const ctx = isRecord(state.contextUsage) ? state.contextUsage : undefined;
    if (ctx && typeof ctx.tokens === 'number' && typeof ctx.contextWindow === 'number') {
      this.model.setUsage({ used: ctx.tokens, size: ctx.contextWindow });
    }
  }

  private publishModels(currentModelId: string | undefined, current?: { provider: string; id: string; name?: string }): void {
    const list = [...this.availableModels];
    if (current && !list.some((m) => m.provider === current.provider && m.id === current.id)) {
      list.unshift({ provider: current.provider, id: current.id, ...(current.name ? { name: current.name } : {}) });
    }
    if (!currentModelId && !list.length) return;
    this.model.setModels({
      currentModelId: currentModelId ?? '',
      availableModels: list.map((m) => ({ modelId: `${m.provider}/${m.id}`, name: m.name ?? m.id, description: m.provider })),
    });
  }

  /** Queue modes, thinking level and auto-* switches as ACP-shaped config options, so generic views show them. */
  private publishConfigOptions(): void {
    const s = this.model.agentState;
    const select = (id: string, name: string, value: unknown, values: string[], description?: string) => ({
      id,
      name,
      ...(description ? { description } : {}),
      type: 'select',
      currentValue: String(value),
      options: values.map((v) => ({ value: v, name: v })),
    });
    const options: unknown[] = [];
    if (s.thinkingLevel !== undefined) {
      options.push(select('thinking_level', 'Thinking level', s.thinkingLevel, ['off', 'minimal', 'low', 'medium', 'high', 'xhigh']));
    }
    if (s.steeringMode !== undefined) {
      options.push(select('steering_mode', 'Steering', s.steeringMode, ['one-at-a-time', 'all'], 'How queued steering messages are delivered'));
    }
    if (s.followUpMode !== undefined) {
      options.push(select('follow_up_mode', 'Follow-ups', s.followUpMode, ['one-at-a-time', 'all'], 'How queued follow-ups are delivered'));
    }
    if (s.interruptMode !== undefined && this.supports('set_interrupt_mode').supported) {
      options.push(select('interrupt_mode', 'Interrupt', s.interruptMode, ['wait', 'immediate'], 'Whether steering interrupts remaining tool calls'));
    }
    if (s.autoCompactionEnabled !== undefined) {
      options.push(select('auto_compaction', 'Auto-compaction', s.autoCompactionEnabled, ['true', 'false']));
    }
    if (s.autoRetryEnabled !== undefined) options.push(select('auto_retry', 'Auto-retry', s.autoRetryEnabled, ['true', 'false']));
    const before = JSON.stringify(this.model.configOptions);
    if (JSON.stringify(options) !== before) this.model.setConfigOptions(options);
  }

  private observeUi(method: string, frame: Record<string, unknown>): void {
    // Before init (e.g. an extension's setWidget at session_start): kept and applied once the model exists.
    if (!this.model) {
      this.earlyUi.push([method, frame]);
      return;
    }
    const str = (k: string) => (typeof frame[k] === 'string' ? (frame[k] as string) : undefined);
    switch (method) {
      case 'notify': {
        const t = str('notifyType');
        this.model.notice(t === 'error' ? 'error' : t === 'warning' ? 'warning' : 'info', str('message') ?? '');
        return;
      }
      case 'setStatus': {
        const status = { ...((this.model.agentState.extensionStatus as Record<string, string>) ?? {}) };
        const text = str('statusText');
        if (text === undefined) delete status[str('statusKey') ?? ''];
        else status[str('statusKey') ?? ''] = text;
        this.model.setAgentState({ extensionStatus: status });
        return;
      }
      case 'setWidget': {
        const widgets = { ...((this.model.agentState.widgets as Record<string, unknown>) ?? {}) };
        const key = str('widgetKey') ?? '';
        if (Array.isArray(frame.widgetLines)) widgets[key] = { lines: frame.widgetLines, placement: frame.widgetPlacement ?? 'aboveEditor' };
        else delete widgets[key];
        this.model.setAgentState({ widgets });
        return;
      }
      case 'setTitle':
        this.model.setInfo({ title: str('title') ?? null });
        return;
      case 'set_editor_text':
        this.model.setAgentState({ editorText: str('text') ?? '' });
        return;
      default:
        return;
    }
  }

  private onFrame(frame: RpcFrame): void {
    // These must work before the first response (an extension may ask during startup).
    switch (frame.type) {
      case 'ready':
        this.sawReady = frame;
        return;
      case 'extension_ui_request':
        this.ui.handle(frame);
        return;
      case 'host_tool_call':
        this.hostToolRunner.call(frame);
        return;
      case 'host_tool_cancel':
        this.hostToolRunner.cancel(frame);
        return;
    }
    if (this.early) this.early.push(frame);
    else this.handleFrame(frame);
  }

  private handleFrame(frame: RpcFrame): void {
    const m = this.model;
    const type = this.dialect.eventName(frame.type);
    const f = frame as Record<string, unknown>;
    switch (type) {
      case 'agent_start':
        this.runSeq++;
        this.running = true;
        this.runAborted = this.abortBeforeStart;
        this.abortBeforeStart = false;
        this.current = undefined;
        if (m.turn === 'idle') m.beginTurn();
        return;
      case 'agent_end': {
        if (f.isTerminal === false) return; // the session resumes on its own before it settles
        this.running = false;
        const outcome = runOutcome(f.messages, this.runAborted);
        this.runAborted = false;
        const settled = this.waiters.filter((w) => w.afterRun < this.runSeq);
        this.waiters = this.waiters.filter((w) => w.afterRun >= this.runSeq);
        if (outcome.error) m.notice('error', 'The turn failed', outcome.error);
        // Tool calls the run left unfinished (aborted mid-execution) will get no end event.
        for (const e of m.timeline()) {
          if (e.kind === 'tool_call' && (e.status === 'pending' || e.status === 'in_progress')) {
            m.upsertToolCall({ id: e.id, status: 'failed', meta: { ...e.meta, unfinished: outcome.stopReason } });
          }
        }
        if (!this.waiters.length && m.turn !== 'idle') m.endTurn(outcome.stopReason, outcome.error);
        for (const w of settled) w.resolve({ stopReason: outcome.stopReason });
        void this.refreshState();
        return;
      }
      case 'turn_start':
      case 'turn_end':
        return;
      case 'message_start':
        this.onMessage(f.message, 'start');
        return;
      case 'message_update':
        this.onMessageUpdate(f);
        return;
      case 'message_end':
        this.onMessage(f.message, 'end');
        return;
      case 'tool_execution_start': {
        const id = String(f.toolCallId ?? '');
        const name = String(f.toolName ?? 'tool');
        const locations = toolLocations(f.args);
        m.upsertToolCall({
          id,
          title: toolTitle(name, f.args),
          toolKind: toolKind(name),
          status: 'in_progress',
          rawInput: f.args,
          ...(locations ? { locations } : {}),
          meta: { toolName: name, ...(f.intent ? { intent: f.intent } : {}) },
        });
        return;
      }
      case 'tool_execution_update': {
        const content = toolContent(f.partialResult);
        m.upsertToolCall({ id: String(f.toolCallId ?? ''), status: 'in_progress', ...(content ? { content } : {}) });
        return;
      }
      case 'tool_execution_end': {
        const content = toolContent(f.result);
        m.upsertToolCall({
          id: String(f.toolCallId ?? ''),
          status: f.isError ? 'failed' : 'completed',
          rawOutput: f.result,
          ...(content ? { content } : {}),
        });
        if (/todo/i.test(String(f.toolName ?? ''))) void this.refreshState();
        return;
      }
      case 'auto_compaction_start':
        m.notice('info', 'Compacting the context…', [f.reason, f.action].filter(Boolean).join(', ') || undefined);
        this.patchState({ isCompacting: true });
        return;
      case 'auto_compaction_end': {
        this.patchState({ isCompacting: false });
        if (f.aborted) m.notice('warning', 'Compaction aborted');
        else if (f.errorMessage) m.notice('error', 'Compaction failed', String(f.errorMessage));
        else if (f.skipped) m.notice('info', 'Compaction skipped');
        else {
          const r = isRecord(f.result) ? f.result : {};
          m.notice('info', 'Context compacted', typeof r.tokensBefore === 'number' ? `${r.tokensBefore} tokens before` : undefined);
        }
        return;
      }
      case 'auto_retry_start':
        m.notice(
          'warning',
          `Retrying after an error (attempt ${String(f.attempt)}/${String(f.maxAttempts)}, in ${Math.round(Number(f.delayMs ?? 0) / 1000)} s)`,
          typeof f.errorMessage === 'string' ? f.errorMessage : undefined,
        );
        return;
      case 'auto_retry_end':
        if (f.success) m.notice('info', `Retry succeeded (attempt ${String(f.attempt)})`);
        else m.notice('error', 'Retries exhausted', typeof f.finalError === 'string' ? f.finalError : undefined);
        return;
      case 'retry_fallback_applied':
        m.notice('warning', `Falling back from ${String(f.from)} to ${String(f.to)}`);
        return;
      case 'ttsr_triggered': {
        const rules = Array.isArray(f.rules) ? f.rules.filter(isRecord).map((r) => String(r.name ?? r.id ?? '?')) : [];
        m.notice('info', 'Rules triggered mid-stream', rules.join(', ') || undefined);
        return;
      }
      case 'todo_reminder': {
        const todos = Array.isArray(f.todos) ? f.todos.filter(isRecord).map((t) => `- ${String(t.content ?? '')}`) : [];
        m.notice('info', `Todo reminder (${String(f.attempt)}/${String(f.maxAttempts)})`, todos.join('\n') || undefined);
        return;
      }
      case 'todo_auto_clear':
        m.notice('info', 'Todo list cleared (all done)');
        m.setPlan([]);
        return;
      case 'queue_update': {
        const steering = Array.isArray(f.steering) ? f.steering : [];
        const followUp = Array.isArray(f.followUp) ? f.followUp : [];
        this.patchState({ queue: { steering, followUp }, queuedMessageCount: steering.length + followUp.length });
        return;
      }
      case 'extension_error':
        m.notice('error', `Extension error${f.event ? ` in ${String(f.event)}` : ''}`, [f.extensionPath, f.error].filter(Boolean).map(String).join(': '));
        return;
      case 'notice': {
        const level = f.level === 'error' ? 'error' : f.level === 'warning' ? 'warning' : 'info';
        m.notice(level, String(f.message ?? ''), typeof f.source === 'string' ? f.source : undefined);
        return;
      }
      case 'available_commands_update': {
        const list = Array.isArray(f.commands) ? f.commands.filter(isRecord) : [];
        m.setCommands(list.map((c) => ({ name: String(c.name), description: String(c.description ?? ''), ...(c.input ? { input: c.input } : {}) })));
        return;
      }
      case 'thinking_level_changed':
        this.patchState({ thinkingLevel: f.level ?? f.thinkingLevel });
        return;
      case 'session_info_changed':
        m.setInfo({ title: typeof f.name === 'string' ? f.name : null });
        return;
      case 'model_changed':
        void this.refreshState();
        return;
      case 'prompt_result':
        if (f.agentInvoked === false) this.finishLocalPrompt(typeof f.id === 'string' ? f.id : undefined);
        return;
      case 'response': {
        // A second answer to a prompt already acknowledged: scheduling it failed after all.
        const w = this.waiters.find((x) => x.promptId && x.promptId === f.id);
        if (w && f.success === false) {
          this.dropWaiter(w.promptId!);
          const error = new RpcCommandError(String(f.command), frame as unknown as RpcResponse);
          if (!this.running && m.turn !== 'idle') m.endTurn(undefined, error.message);
          w.reject(error);
        }
        return;
      }
      default:
        this.options.logger.debug(`RPC event ${frame.type} not shown`);
    }
  }

  private messageId(message: Record<string, unknown>, phase: 'start' | 'update' | 'end'): string {
    const role = String(message.role ?? '');
    const cur = this.current;
    if (phase !== 'start' && cur && cur.role === role && (cur.timestamp === message.timestamp || message.timestamp === undefined)) return cur.id;
    const id = `${role}-${++this.msgSeq}`;
    this.current = { role, timestamp: message.timestamp, id };
    return id;
  }

  private onMessage(message: unknown, phase: 'start' | 'end'): void {
    if (!isRecord(message)) return;
    const id = this.messageId(message, phase);
    const m = this.model;
    switch (message.role) {
      case 'user': {
        const parts = messageParts(message.content);
        if (parts.length) m.replaceMessage('user', id, parts);
        return;
      }
      case 'assistant': {
        if (phase === 'start') return; // its content arrives as deltas
        const text = textOf(message.content, 'text');
        const thinking = textOf(message.content, 'thinking');
        const prev = m.get('message', `agent:${id}`);
        if (text && (!prev || (prev.kind === 'message' && prev.text !== text))) m.replaceMessage('agent', id, [{ type: 'text', text }]);
        const prevThought = m.get('message', `thought:${id}`);
        if (thinking && (!prevThought || (prevThought.kind === 'message' && prevThought.text !== thinking))) {
          m.replaceMessage('thought', id, [{ type: 'text', text: thinking }]);
        }
        if (Array.isArray(message.content)) {
          for (const c of message.content.filter(isRecord)) {
            if (c.type === 'toolCall' && typeof c.id === 'string') {
              const existing = m.toolCall(c.id);
              m.upsertToolCall({
                id: c.id,
                rawInput: c.arguments,
                ...(existing ? {} : { title: toolTitle(String(c.name), c.arguments), toolKind: toolKind(String(c.name)), status: 'pending' as const }),
              });
            }
          }
        }
        const usage = isRecord(message.usage) ? message.usage : undefined;
        if (usage && typeof usage.totalTokens === 'number' && usage.totalTokens > 0) {
          const size = Number((this.model.agentState.contextWindow as number | undefined) ?? m.usage?.size ?? 0);
          const cost = isRecord(usage.cost) && typeof usage.cost.total === 'number' ? usage.cost.total : undefined;
          m.setUsage({
            used: usage.totalTokens,
            size,
            ...(typeof usage.input === 'number' ? { inputTokens: usage.input } : {}),
            ...(typeof usage.output === 'number' ? { outputTokens: usage.output } : {}),
            ...(cost !== undefined ? { cost: { amount: cost, currency: 'USD' } } : {}),
          });
        }
        return;
      }
      default:
        return; // toolResult: shown through tool_execution_*; custom messages are the agent's own bookkeeping
    }
  }

  private onMessageUpdate(f: Record<string, unknown>): void {
    const message = isRecord(f.message) ? f.message : { role: 'assistant' };
    const ev = isRecord(f.assistantMessageEvent) ? f.assistantMessageEvent : undefined;
    if (!ev) return;
    const id = this.messageId(message, 'update');
    const m = this.model;
    switch (ev.type) {
      case 'text_delta':
        if (typeof ev.delta === 'string' && ev.delta) m.appendChunk('agent', { type: 'text', text: ev.delta }, id);
        return;
      case 'thinking_delta':
        if (typeof ev.delta === 'string' && ev.delta) m.appendChunk('thought', { type: 'text', text: ev.delta }, id);
        return;
      case 'toolcall_start':
      case 'toolcall_end': {
        // (toolcall_delta only grows the arguments; the final ones come with toolcall_end.)
        const partial = isRecord(ev.partial) ? ev.partial : undefined;
        const idx = typeof ev.contentIndex === 'number' ? ev.contentIndex : -1;
        const tc = isRecord(ev.toolCall)
          ? ev.toolCall
          : partial && Array.isArray(partial.content) && isRecord(partial.content[idx])
            ? (partial.content[idx] as Record<string, unknown>)
            : undefined;
        if (!tc || typeof tc.id !== 'string' || !tc.id) return;
        const existing = m.toolCall(tc.id);
        if (existing && existing.status !== 'pending') return; // already executing: execution events own it
        const name = String(tc.name ?? 'tool');
        m.upsertToolCall({ id: tc.id, title: toolTitle(name, tc.arguments), toolKind: toolKind(name), status: 'pending', rawInput: tc.arguments });
        return;
      }
      case 'error': {
        const err = isRecord(ev.error) ? ev.error : undefined;
        if (err?.stopReason === 'error' && err.errorMessage) this.options.logger.warn(`Model error: ${String(err.errorMessage)}`);
        return;
      }
      default:
        return;
    }
  }

  private onAgentExit(exit: ExitInfo): void {
    this.ui.dismissAll();
    this.hostToolRunner.abortAll();
    const error = new AgentExitedError(exit);
    const waiters = this.waiters;
    this.waiters = [];
    this.running = false;
    if (this.model) {
      if (exit.code !== 0 || this.model.turn !== 'idle') this.model.notice('error', 'Agent exited', describeExit(exit));
      if (this.model.turn !== 'idle') this.model.endTurn(undefined, error.message);
    }
    for (const w of waiters) w.reject(error);
  }
}
