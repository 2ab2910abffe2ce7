/**
 * An agent in pi's RPC mode (`<agent> --mode rpc`) behind the same AgentSession interface ACP agents have:
 * events go into the SessionModel the views read, `prompt()` resolves when the agent run ends, and every RPC
 * command is a typed method. Works with both dialects (oh-my-pi and upstream pi; see dialect.ts).
 *
 * This is the facade: lifecycle, the AgentSession methods and event routing; the command methods come from
 * commandSurface.ts. Events become model changes in frameMapper.ts, runs and waiting prompts are tracked in
 * turns.ts, `get_state` and what derives from it is applied in stateSync.ts.
 */
import { AgentExitedError, type ExitInfo, type SandboxLaunch } from '../core/agentProcess';
import { cutByExit, exitPhrase, phrase } from '../session/notices';
import { Listeners } from '../core/listeners';
import type { Logger } from '../core/log';
import { spawnSpecOf, type AgentConfig } from '../session/agentConfig';
import type { AgentSession } from '../session/agentSession';
import type { HostToolProvider } from '../session/hostTools';
import { questionNotice, uiQuestionRecord } from '../session/questionRecord';
import { boundedModel } from '../session/longText';
import type { ContentPart } from '../session/sessionModel';
import type { InterruptMode, QueueMode, RpcState } from './commands';
import { RpcCommandSurface } from './commandSurface';
import { detectDialect } from './dialect';
import { ExtensionUiDispatcher, type RpcUiHandlers, type UiAnswer } from './extensionUi';
import { FrameMapper } from './frameMapper';
import { HostToolRunner } from './hostToolRunner';
import { splitParts } from './piContent';
import { RpcConnection, type RpcConnectionOptions, type RpcFrame } from './rpcConnection';
import { RpcStateSync } from './stateSync';
import { RunTracker } from './turns';

export type { ImageInput, InterruptMode, QueueMode, RpcState, StreamingBehavior, ThinkingLevel, TodoPhase, TodoTask } from './commands';
export { phasesToPlan } from './stateSync';

export interface RpcSessionOptions {
  logger: Logger;
  /** The workspace: the agent's cwd unless the config sets one. */
  cwd: string;
  /** Added to the agent's environment (e.g. API keys from sign-in); wins over the config's env. */
  env?: Record<string, string>;
  /** Start the agent inside the sandbox (docs/sandbox.md). */
  sandbox?: SandboxLaunch;
  /** Extension UI dialogs and status surfaces; without it every dialog is answered `cancelled`. */
  rpcUi?: RpcUiHandlers;
  /** Tools the host offers (registered with `set_host_tools` when the dialect has it). */
  hostTools?: HostToolProvider;
  /** Timeout of each command other than the prompt turn, and of each host tool call (ms; default 60 s). */
  requestTimeoutMs?: number;
  /** How long the agent may take to answer its first `get_state` (ms; default 60 s). */
  initializeTimeoutMs?: number;
  maxLineBytes?: number;
  /** How long a write may wait for the agent to read its input before it is stopped (ms; default 60 s). */
  writeStallMs?: number;
  frameTap?: RpcConnectionOptions['frameTap'];
}

export class RpcSession extends RpcCommandSurface {
  private mapper!: FrameMapper;
  private readonly ui: ExtensionUiDispatcher;
  private readonly hostToolRunner: HostToolRunner;
  /** Frames and UI calls that arrived before the first `get_state` answer (the model did not exist yet). */
  private early: { frames: RpcFrame[]; ui: [string, Record<string, unknown>][] } | undefined = { frames: [], ui: [] };
  private sawReady: Record<string, unknown> | undefined;
  private readonly activity = new Listeners<boolean>();

  private constructor(
    connection: RpcConnection,
    private readonly config: AgentConfig,
    private readonly options: RpcSessionOptions,
  ) {
    super(connection, options.logger, options.requestTimeoutMs ?? 60_000);
    // Answers to the agent's dialogs and host tool calls: the host no longer keeps it waiting.
    const write = (frame: Record<string, unknown>) => {
      const written = connection.write(frame);
      this.noteActivity();
      return written;
    };
    this.ui = new ExtensionUiDispatcher(
      options.rpcUi,
      write,
      options.logger,
      (method, frame) => this.observeUi(method, frame),
      (frame, answer) => this.recordQuestion(frame, answer),
    );
    this.hostToolRunner = new HostToolRunner(options.hostTools, write, options.logger, options.requestTimeoutMs ?? 60_000);
    connection.onOutput(() => this.noteActivity());
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
    return this.state?.agentSessionId ?? '';
  }

  /** Spawns the agent, detects its dialect, loads its state, and registers host tools. */
  static async start(config: AgentConfig, options: RpcSessionOptions): Promise<RpcSession> {
    const connection = RpcConnection.spawn(spawnSpecOf(config, options.cwd, options.env, options.sandbox), {
      logger: options.logger,
      commandTimeoutMs: options.requestTimeoutMs ?? 60_000,
      ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
      ...(options.writeStallMs !== undefined ? { writeStallMs: options.writeStallMs } : {}),
      ...(options.frameTap ? { frameTap: options.frameTap } : {}),
    });
    return RpcSession.open(connection, config, options);
  }

  /** A session on an agent already connected (any transport): detects its dialect, loads its state, registers host tools. */
  static async open(connection: RpcConnection, config: AgentConfig, options: RpcSessionOptions): Promise<RpcSession> {
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
    // The dialect is not known yet, so this one goes out as is.
    const raw = await this.connection.call<Record<string, unknown>>({ type: 'get_state' }, { timeoutMs: this.options.initializeTimeoutMs ?? 60_000 });
    this.dialect = detectDialect(!!this.sawReady, raw);
    this.options.logger.info(`RPC agent "${this.config.name}": ${this.dialect.label}, detected by ${this.dialect.detectedBy}`);
    const state = this.dialect.normalizeState(raw ?? {}) as RpcState;
    const agentSessionId = String(state.sessionId ?? '');
    this.model = boundedModel(agentSessionId || `rpc-${Date.now()}`);
    this.mapper = new FrameMapper(this.model);
    this.state = new RpcStateSync(this.model, this.dialect, agentSessionId);
    this.turns = new RunTracker(
      this.model,
      this.mapper,
      {
        newId: () => this.connection.newId(),
        send: (id, name, args) => this.connection.call({ id, type: this.dialect.wireName(name), ...args }, { timeoutMs: this.commandTimeoutMs }),
        isPending: (id) => this.connection.isPending(id),
        getState: () => this.getState(),
        runEnded: () => void this.refreshState(),
      },
      { slashCommandsMayRunLocally: this.dialect.name === 'upstream', compactsAfterRun: this.dialect.name === 'upstream' },
    );
    this.model.setAgentState({ protocol: 'rpc', dialect: this.dialect.name, dialectDetectedBy: this.dialect.detectedBy, commands: this.dialect.table() });
    this.state.apply(state);
    const early = this.early ?? { frames: [], ui: [] };
    this.early = undefined;
    for (const [method, frame] of early.ui) this.observeUi(method, frame);
    for (const frame of early.frames) this.handleEvent(frame);
    await Promise.all([
      this.registerHostTools(),
      this.getAvailableModels().catch((e: Error) => this.options.logger.warn(`get_available_models: ${e.message}`)),
      this.dialect.name === 'upstream' ? this.getCommands().catch((e: Error) => this.options.logger.debug(`get_commands: ${e.message}`)) : Promise.resolve(),
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

  /**
   * Sends a prompt and resolves when the agent run it started ends (`end_turn`, `cancelled`, `error`, …).
   * `display`: what the transcript shows for it instead of the text the agent echoes (as ACP sessions do).
   */
  async prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }> {
    const { message, images } = splitParts(parts);
    this.mapper.showNextUserAs(display);
    try {
      return await this.turns.prompt(message, images);
    } finally {
      // A prompt the agent refused or ran without a run echoed nothing: a later message must not take its display.
      this.mapper.showNextUserAs(undefined);
    }
  }

  /** Aborts the running turn (`abort`); the pending prompt resolves `cancelled`. */
  async cancel(): Promise<void> {
    if (!this.turns.busy) return;
    // A host tool the turn waits on is answered at once: the agent need not wait for a tool nobody wants.
    this.hostToolRunner.cancelAll('Cancelled: the user stopped the turn');
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
    const { provider, id } = this.state.resolveModel(modelId);
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

  /** See AgentSession.onActivity; the host keeps the agent waiting while a dialog or host tool call is open. */
  onActivity(listener: (waitingOnHost: boolean) => void): () => void {
    return this.activity.add(listener);
  }

  // ------------------------------------------------------------------------------------------ internals

  private noteActivity(): void {
    this.activity.fire(this.ui.openDialogs + this.hostToolRunner.runningCalls > 0);
  }

  /** A dialog's question and answer go into the transcript (one asked before the model exists is only logged). */
  private recordQuestion(frame: Record<string, unknown>, answer: UiAnswer): void {
    const record = uiQuestionRecord(frame, answer);
    if (!record || this.early) return;
    const { title, detail } = questionNotice(this.config.name, record);
    this.model.notice('info', title, detail);
  }

  private observeUi(method: string, frame: Record<string, unknown>): void {
    // Before init (e.g. an extension's setWidget at session_start): kept and applied once the model exists.
    if (this.early) this.early.ui.push([method, frame]);
    else this.mapper.applyUi(method, frame);
  }

  private onFrame(frame: RpcFrame): void {
    // These must work before the first response (an extension may ask during startup).
    switch (frame.type) {
      case 'ready':
        this.sawReady = frame;
        return;
      case 'extension_ui_request':
        this.ui.handle(frame);
        this.noteActivity();
        return;
      case 'host_tool_call':
        this.hostToolRunner.call(frame);
        this.noteActivity();
        return;
      case 'host_tool_cancel':
        this.hostToolRunner.cancel(frame);
        return;
    }
    if (this.early) this.early.frames.push(frame);
    else this.handleEvent(frame);
  }

  private handleEvent(frame: RpcFrame): void {
    const type = this.dialect.eventName(frame.type);
    const event = type === frame.type ? frame : { ...frame, type };
    if (type === 'auto_compaction_start' || type === 'auto_compaction_end') this.state.compactionEvents++;
    if (this.turns.handle(event)) return;
    const effects = this.mapper.apply(event);
    if (!effects.handled) this.options.logger.debug(`RPC event ${frame.type} not shown`);
    if (effects.modelError) this.options.logger.warn(`Model error: ${effects.modelError}`);
    if (effects.agentStateChanged) this.state.publishConfigOptions();
    if (effects.refreshState) void this.refreshState();
  }

  private onAgentExit(exit: ExitInfo): void {
    this.ui.dismissAll();
    this.hostToolRunner.abortAll();
    const error = new AgentExitedError(exit);
    if (this.model) {
      this.model.failUnfinishedToolCalls(cutByExit(exit));
      if (exit.code !== 0 || this.model.turn !== 'idle') this.model.notice('error', phrase('agentExited'), exitPhrase(exit));
      if (this.model.turn !== 'idle') this.model.endTurn(undefined, error.message);
    }
    this.turns?.agentExited(error);
  }
}
