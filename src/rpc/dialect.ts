/**
 * The two dialects of pi's RPC mode and how one command surface maps onto both.
 *
 * - `fork`: oh-my-pi (`omp`, npm `@oh-my-pi/pi-coding-agent`) and its fork xcsh. Sends a `ready` frame first;
 *   `get_state` has `queuedMessageCount`, `interruptMode`, `todoPhases`. Has todos, host tools, interrupt mode,
 *   `abort_and_prompt`, `branch`/`get_branch_messages`, `auto_compaction_*` events.
 * - `upstream`: pi (`@mariozechner/pi-coding-agent`). `get_state` has `pendingMessageCount`. Names the branch
 *   commands `fork`/`get_fork_messages`, compaction events `compaction_*`; has `get_commands`, `clone`.
 *
 * Our command names are the fork's (the design documents' names). `wire` is what goes on the wire,
 * `emulated` says we compose it from other commands.
 */
import type { RpcCommandName } from './commands';

export type { RpcCommandName } from './commands';

export type RpcDialectName = 'fork' | 'upstream';

export interface CommandSupport {
  supported: boolean;
  /** The wire name in this dialect (when supported and not emulated). */
  wire?: string;
  /** Composed by the host from other commands (e.g. abort then prompt). */
  emulated?: boolean;
  /** Why it is unsupported or emulated: fit to show as a tooltip in the UI. */
  reason?: string;
}

type Row = { fork: string | null | 'emulate'; upstream: string | null | 'emulate'; whyNotFork?: string; whyNotUpstream?: string };

const UPSTREAM_NO = {
  todos: 'upstream pi has no todo list (todos are an oh-my-pi feature)',
  hostTools: 'upstream pi has no host tools (set_host_tools is an oh-my-pi feature)',
  interrupt: 'upstream pi has no interrupt mode; steering always waits for the current tool calls',
};

/** The mapping table, a row for every command of the command map. Commands absent from a dialect are `null` with the reason. */
const TABLE: Record<RpcCommandName, Row> = {
  prompt: { fork: 'prompt', upstream: 'prompt' },
  steer: { fork: 'steer', upstream: 'steer' },
  follow_up: { fork: 'follow_up', upstream: 'follow_up' },
  abort: { fork: 'abort', upstream: 'abort' },
  abort_and_prompt: {
    fork: 'abort_and_prompt',
    upstream: 'emulate',
    whyNotUpstream: 'upstream pi has no abort_and_prompt: sent as abort, then prompt',
  },
  new_session: { fork: 'new_session', upstream: 'new_session' },
  get_state: { fork: 'get_state', upstream: 'get_state' },
  set_todos: { fork: 'set_todos', upstream: null, whyNotUpstream: UPSTREAM_NO.todos },
  set_host_tools: { fork: 'set_host_tools', upstream: null, whyNotUpstream: UPSTREAM_NO.hostTools },
  set_model: { fork: 'set_model', upstream: 'set_model' },
  cycle_model: { fork: 'cycle_model', upstream: 'cycle_model' },
  get_available_models: { fork: 'get_available_models', upstream: 'get_available_models' },
  set_thinking_level: { fork: 'set_thinking_level', upstream: 'set_thinking_level' },
  cycle_thinking_level: { fork: 'cycle_thinking_level', upstream: 'cycle_thinking_level' },
  set_steering_mode: { fork: 'set_steering_mode', upstream: 'set_steering_mode' },
  set_follow_up_mode: { fork: 'set_follow_up_mode', upstream: 'set_follow_up_mode' },
  set_interrupt_mode: { fork: 'set_interrupt_mode', upstream: null, whyNotUpstream: UPSTREAM_NO.interrupt },
  compact: { fork: 'compact', upstream: 'compact' },
  set_auto_compaction: { fork: 'set_auto_compaction', upstream: 'set_auto_compaction' },
  set_auto_retry: { fork: 'set_auto_retry', upstream: 'set_auto_retry' },
  abort_retry: { fork: 'abort_retry', upstream: 'abort_retry' },
  bash: { fork: 'bash', upstream: 'bash' },
  abort_bash: { fork: 'abort_bash', upstream: 'abort_bash' },
  get_session_stats: { fork: 'get_session_stats', upstream: 'get_session_stats' },
  export_html: { fork: 'export_html', upstream: 'export_html' },
  switch_session: { fork: 'switch_session', upstream: 'switch_session' },
  branch: { fork: 'branch', upstream: 'fork' },
  get_branch_messages: { fork: 'get_branch_messages', upstream: 'get_fork_messages' },
  get_last_assistant_text: { fork: 'get_last_assistant_text', upstream: 'get_last_assistant_text' },
  set_session_name: { fork: 'set_session_name', upstream: 'set_session_name' },
  get_messages: { fork: 'get_messages', upstream: 'get_messages' },
  get_commands: {
    fork: 'get_available_commands',
    upstream: 'get_commands',
  },
  clone: { fork: null, upstream: 'clone', whyNotFork: 'oh-my-pi has no clone command (branch from the last entry instead)' },
};

/** Every command the session exposes, by our (fork) name, in the table's order. */
export const RPC_COMMANDS: readonly RpcCommandName[] = Object.keys(TABLE) as RpcCommandName[];

/** Event names that differ: the wire name → our name. */
const EVENT_ALIASES: Record<string, string> = {
  compaction_start: 'auto_compaction_start',
  compaction_end: 'auto_compaction_end',
};

export class RpcDialect {
  constructor(
    readonly name: RpcDialectName,
    /** How the dialect was recognised (for logs and the UI). */
    readonly detectedBy: string,
  ) {}

  supports(command: string): CommandSupport {
    const row = TABLE[command as RpcCommandName];
    if (!row) return { supported: false, reason: `unknown command "${command}"` };
    const wire = row[this.name];
    const why = this.name === 'fork' ? row.whyNotFork : row.whyNotUpstream;
    if (wire === null) return { supported: false, reason: why ?? `not available in ${this.label}` };
    if (wire === 'emulate') return { supported: true, emulated: true, ...(why ? { reason: why } : {}) };
    return { supported: true, wire };
  }

  /** The wire name of a command; throws with the reason when the dialect lacks it. */
  wireName(command: string): string {
    const s = this.supports(command);
    if (!s.supported) throw new UnsupportedCommandError(command, s.reason ?? 'unsupported');
    return s.wire ?? command;
  }

  /** Our name for an event type. */
  eventName(wireType: string): string {
    return EVENT_ALIASES[wireType] ?? wireType;
  }

  /** `get_state` with the queue count under one name (`queuedMessageCount`). */
  normalizeState(state: Record<string, unknown>): Record<string, unknown> {
    const out = { ...state };
    if (out.queuedMessageCount === undefined && typeof out.pendingMessageCount === 'number') {
      out.queuedMessageCount = out.pendingMessageCount;
    }
    delete out.pendingMessageCount;
    return out;
  }

  get label(): string {
    return this.name === 'fork' ? 'oh-my-pi (fork dialect)' : 'pi (upstream dialect)';
  }

  /** Every command with its support, for the UI to hide or disable entries. */
  table(): Record<RpcCommandName, CommandSupport> {
    return Object.fromEntries(RPC_COMMANDS.map((c) => [c, this.supports(c)])) as Record<RpcCommandName, CommandSupport>;
  }
}

export class UnsupportedCommandError extends Error {
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`${command} is not supported by this agent: ${reason}`);
    this.name = 'UnsupportedCommandError';
  }
}

/**
 * Decides the dialect from what the agent said first: a `ready` frame (fork), or `get_state` fields
 * (fork: `queuedMessageCount` / `interruptMode` / `todoPhases`; upstream: `pendingMessageCount`).
 */
export function detectDialect(sawReady: boolean, state: Record<string, unknown> | undefined): RpcDialect {
  if (sawReady) return new RpcDialect('fork', 'ready frame');
  if (state) {
    const forkKeys = ['queuedMessageCount', 'interruptMode', 'todoPhases'].filter((k) => k in state);
    if (forkKeys.length) return new RpcDialect('fork', `get_state has ${forkKeys.join(', ')}`);
    if ('pendingMessageCount' in state) return new RpcDialect('upstream', 'get_state has pendingMessageCount');
  }
  return new RpcDialect('upstream', 'no fork markers (assumed upstream)');
}
