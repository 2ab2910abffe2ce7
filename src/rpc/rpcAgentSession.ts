/**
 * A pi RPC session as an AgentSession: what views need from it in session terms — prompt capabilities, the
 * agent's own streaming queue (steer / follow-up), the command surface ("Agent Commands…") and a typed
 * projection of its state for the chat. Session stats are fetched after every turn here, not by a view.
 */
import { readdir } from 'node:fs/promises';
import * as path from 'node:path';
import type { ExitInfo } from '../core/agentProcess';
import type { AgentCommandMap, AgentCommandName, AgentCommands, CommandSupport, ImageInput } from '../session/agentCommands';
import { phrase } from '../session/notices';
import type { AgentExtras, AgentHealth, AgentSession, AttachInfo, PromptCapabilities, StreamingQueue } from '../session/agentSession';
import type { ContentPart, SessionModel } from '../session/sessionModel';
import { isRecord } from './json';
import { splitParts } from './piContent';
import type { RpcSession } from './rpcSession';

/** The agent state the chat shows, read from the model's `agentState` bag into typed fields (once, here). */
export function projectExtras(a: Record<string, unknown>): AgentExtras {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const texts = (v: unknown) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String((x as { text?: unknown })?.text ?? JSON.stringify(x)))) : []);
  const queue = isRecord(a.queue) ? a.queue : {};
  const widgets = Object.entries(isRecord(a.widgets) ? a.widgets : {}).map(([key, w]) => ({
    key,
    lines: (Array.isArray(w) ? w : isRecord(w) && Array.isArray(w.lines) ? w.lines : []).map(String),
  }));
  const status = Object.values(isRecord(a.extensionStatus) ? a.extensionStatus : {}).map(String);
  const st = isRecord(a.stats) ? a.stats : undefined;
  const tokens = st && isRecord(st.tokens) ? st.tokens : {};
  const opt = <K extends keyof AgentExtras>(k: K, v: AgentExtras[K] | undefined) => (v === undefined ? {} : { [k]: v });
  const stats = st
    ? {
        ...(num(tokens.total) !== undefined ? { totalTokens: num(tokens.total)! } : {}),
        ...(num(tokens.input) !== undefined ? { inputTokens: num(tokens.input)! } : {}),
        ...(num(tokens.output) !== undefined ? { outputTokens: num(tokens.output)! } : {}),
        ...(num(st.cost) !== undefined ? { cost: num(st.cost)! } : {}),
        ...(num(st.totalMessages) !== undefined ? { messages: num(st.totalMessages)! } : {}),
      }
    : undefined;
  return {
    queued: num(a.queuedMessageCount) ?? 0,
    steering: texts(queue.steering),
    followUp: texts(queue.followUp),
    ...opt('steeringMode', str(a.steeringMode)),
    ...opt('followUpMode', str(a.followUpMode)),
    ...opt('interruptMode', str(a.interruptMode)),
    ...opt('thinkingLevel', str(a.thinkingLevel)),
    ...opt('autoCompaction', bool(a.autoCompactionEnabled)),
    ...opt('autoRetry', bool(a.autoRetryEnabled)),
    widgets,
    status,
    ...opt('stats', stats),
    ...opt('editorText', str(a.editorText)),
  };
}

export class RpcAgentSession implements AgentSession {
  readonly promptCapabilities: PromptCapabilities = { image: true, embeddedContext: false };
  readonly queue: StreamingQueue;
  readonly commands: AgentCommands;
  /** One pi process runs one session: a new one is a fresh start. */
  readonly sessionsShareProcess = false;
  private readonly unsubscribe: () => void;

  readonly attach: AttachInfo;

  /** Use `open` (it reattaches); `attach` says how this session came to be. */
  constructor(
    readonly rpc: RpcSession,
    attach: AttachInfo = { how: 'new' },
  ) {
    const session = rpc;
    this.attach = attach;
    if (attach.requested && attach.how === 'new') {
      session.model.notice('warning', phrase('newSession'), phrase('newSessionDetail', attach.requested, attach.detail ?? phrase('noReasonGiven')));
    } else if (attach.requested) {
      session.model.notice('info', phrase('sessionResumed'), phrase('switchedDetail', attach.requested));
    }
    this.queue = {
      get canSteer() {
        return session.supports('steer').supported;
      },
      get canFollowUp() {
        return session.supports('follow_up').supported;
      },
      steer: async (parts) => {
        const { message, images } = splitParts(parts);
        await session.steer(message, images);
        session.model.notice('info', phrase('steeringQueued'), message);
      },
      followUp: async (parts) => {
        const { message, images } = splitParts(parts);
        await session.followUp(message, images);
        session.model.notice('info', phrase('followUpQueued'), message);
      },
    };
    this.commands = {
      supports: (name: AgentCommandName): CommandSupport => session.supports(name),
      run: <K extends AgentCommandName>(name: K, args: AgentCommandMap[K][0]) => runCommand(session, name, args),
    };
    // Tokens and cost for the usage meter after every turn.
    this.unsubscribe = session.model.on((e) => {
      if (e.type === 'turn' && e.state === 'idle' && session.supports('get_session_stats').supported) {
        session.getSessionStats().catch(() => undefined);
      }
    });
    session.onExit(() => this.unsubscribe());
  }

  /** The agent's own session id (it changes when a session file is switched to). */
  get sessionId(): string {
    return this.rpc.currentAgentSessionId || this.rpc.sessionId;
  }

  /**
   * A session on a started pi agent: new, or `attach`ed — pi keeps each session in a file named
   * `<time>_<id>.jsonl` beside the current one, and `switch_session` to it brings its context back.
   */
  static async open(rpc: RpcSession, attach?: { sessionId: string }): Promise<RpcAgentSession> {
    if (!attach) return new RpcAgentSession(rpc);
    return new RpcAgentSession(rpc, await reattach(rpc, attach.sessionId));
  }
  get model(): SessionModel {
    return this.rpc.model;
  }
  get agentInfo(): AgentSession['agentInfo'] {
    return this.rpc.agentInfo;
  }

  extras(): AgentExtras {
    return projectExtras(this.rpc.model.agentState);
  }

  prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }> {
    return this.rpc.prompt(parts, display);
  }
  cancel(): Promise<void> {
    return this.rpc.cancel();
  }
  setMode(modeId: string): Promise<void> {
    return this.rpc.setMode(modeId);
  }
  setConfigOption(configId: string, value: string | boolean): Promise<void> {
    return this.rpc.setConfigOption(configId, value);
  }
  setModel(modelId: string): Promise<void> {
    return this.rpc.setModel(modelId);
  }
  shutdown(): Promise<ExitInfo> {
    this.unsubscribe();
    return this.rpc.shutdown();
  }
  onExit(listener: (exit: ExitInfo) => void): () => void {
    return this.rpc.onExit(listener);
  }
  onHealth(listener: (health: AgentHealth, detail: string) => void): () => void {
    return this.rpc.onHealth(listener);
  }
  onActivity(listener: (waitingOnHost: boolean) => void): () => void {
    return this.rpc.onActivity(listener);
  }
}

/** The command surface by name, onto the session's typed methods. */
async function runCommand<K extends AgentCommandName>(s: RpcSession, name: K, args: AgentCommandMap[K][0]): Promise<AgentCommandMap[K][1]> {
  const a = args as Record<string, unknown>;
  const images = (a.images as ImageInput[] | undefined) ?? [];
  const table: { [N in AgentCommandName]: () => Promise<AgentCommandMap[N][1]> } = {
    steer: () => s.steer(String(a.message), images),
    follow_up: () => s.followUp(String(a.message), images),
    abort_and_prompt: () => s.abortAndPrompt(String(a.message), images),
    new_session: () => s.newSession(a.parentSession as string | undefined),
    get_available_models: () => s.getAvailableModels(),
    set_model: () => s.setModelById(String(a.provider), String(a.modelId)),
    cycle_model: () => s.cycleModel(),
    set_thinking_level: () => s.setThinkingLevel(String(a.level)),
    cycle_thinking_level: () => s.cycleThinkingLevel(),
    set_steering_mode: () => s.setSteeringMode(a.mode as AgentCommandMap['set_steering_mode'][0]['mode']),
    set_follow_up_mode: () => s.setFollowUpMode(a.mode as AgentCommandMap['set_follow_up_mode'][0]['mode']),
    set_interrupt_mode: () => s.setInterruptMode(a.mode as AgentCommandMap['set_interrupt_mode'][0]['mode']),
    compact: () => s.compact(a.customInstructions as string | undefined),
    set_auto_compaction: () => s.setAutoCompaction(a.enabled === true),
    set_auto_retry: () => s.setAutoRetry(a.enabled === true),
    abort_retry: () => s.abortRetry(),
    bash: () => s.bash(String(a.command)),
    abort_bash: () => s.abortBash(),
    get_session_stats: () => s.getSessionStats(),
    export_html: () => s.exportHtml(a.outputPath as string | undefined),
    switch_session: () => s.switchSession(String(a.sessionPath)),
    get_branch_messages: () => s.getBranchMessages(),
    branch: () => s.branch(String(a.entryId)),
    get_last_assistant_text: () => s.getLastAssistantText(),
    set_session_name: () => s.setSessionName(String(a.name)),
    get_messages: () => s.getMessages(),
  };
  return table[name]() as Promise<AgentCommandMap[K][1]>;
}

/** pi's reattach: find the session's file beside the current one and switch to it. */
async function reattach(rpc: RpcSession, requested: string): Promise<AttachInfo> {
  const fail = (detail: string): AttachInfo => ({ how: 'new', requested, detail });
  if (!rpc.supports('switch_session').supported) return fail('the agent cannot switch sessions');
  const file = (await rpc.getState()).sessionFile;
  if (!file) return fail('the agent keeps no session files (it runs with --no-session)');
  const dir = path.dirname(file);
  const name = (await readdir(dir).catch(() => [] as string[])).find((n) => n.endsWith(`_${requested}.jsonl`));
  if (!name) return fail(`no session file for it in ${dir}`);
  const switched = await rpc.switchSession(path.join(dir, name));
  if (switched.cancelled) return fail('switch_session was cancelled (by an extension of the agent)');
  await rpc.getState();
  return rpc.currentAgentSessionId === requested ? { how: 'resumed', requested } : fail(`after switch_session the agent reports session ${rpc.currentAgentSessionId}`);
}
