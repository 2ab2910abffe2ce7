/**
 * Applies pi RPC event frames (already renamed to our event names by the dialect) to a SessionModel:
 * messages, thoughts, tool calls, notices, the plan, usage and agentState patches; and the extension UI's
 * fire-and-forget methods (status, widgets, title, composer text). Pure: no I/O and no
 * connection; what needs either (a `get_state` refresh, the log) comes back as effects for the caller.
 */
import { phrase } from '../session/notices';
import type { ContentPart, SessionModel } from '../session/sessionModel';
import { isRecord } from './json';
import { messageParts, textOf, toolContent, toolKind, toolLocations, toolTitle } from './piContent';
import type { RpcFrame } from './rpcConnection';

/** What the caller still has to do after a frame was applied. */
export interface FrameEffects {
  /** false: not an event the mapper knows (the caller may handle or log it). */
  handled: boolean;
  /** agentState changed: what is derived from it (the config options) needs republishing. */
  agentStateChanged?: boolean;
  /** Something changed that only `get_state` reports (the model, the todo list, the state after a run). */
  refreshState?: boolean;
  /** A model error reported mid-stream, for the log (the run's end shows it to the user). */
  modelError?: string;
}

/** How a run ended. */
export interface RunOutcome {
  stopReason: string;
  error?: string;
}

const HANDLED: FrameEffects = { handled: true };

/** How a finished run ended, from the messages `agent_end` carries (`aborted`: we aborted it). */
export function runOutcome(messages: unknown, aborted: boolean): RunOutcome {
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

export class FrameMapper {
  /** The message deltas and ends append to (pi frames carry no message id). */
  private current: { role: string; timestamp: unknown; id: string } | undefined;
  private messageSeq = 0;
  /** What the prompt's echoed user message shows instead of its text, and (once echoed) that message's id. */
  private display: { parts: ContentPart[]; id?: string } | undefined;

  constructor(private readonly model: SessionModel) {}

  /** The next user message the agent echoes shows `parts` (a selection command's short label and chip), not the prompt text; undefined: as echoed. */
  showNextUserAs(parts: ContentPart[] | undefined): void {
    this.display = parts ? { parts } : undefined;
  }

  /**
   * Applies one event. `agent_start` / `agent_end` are applied as a run nobody else tracks; a session that
   * tracks runs calls beginRun / endRun itself with what it knows (an abort, a queued prompt).
   */
  apply(event: RpcFrame): FrameEffects {
    const m = this.model;
    const f: Record<string, unknown> = event;
    switch (event.type) {
      case 'agent_start':
        this.beginRun();
        return HANDLED;
      case 'agent_end':
        if (f.isTerminal === false) return HANDLED; // the session resumes on its own before it settles
        this.endRun(runOutcome(f.messages, false), false);
        return { handled: true, refreshState: true };
      case 'turn_start':
      case 'turn_end':
        return HANDLED;
      case 'message_start':
        this.onMessage(f.message, 'start');
        return HANDLED;
      case 'message_update':
        return this.onMessageUpdate(f);
      case 'message_end':
        this.onMessage(f.message, 'end');
        return HANDLED;
      case 'tool_execution_start': {
        const name = String(f.toolName ?? 'tool');
        const locations = toolLocations(f.args);
        m.upsertToolCall({
          id: String(f.toolCallId ?? ''),
          title: toolTitle(name, f.args),
          toolKind: toolKind(name),
          status: 'in_progress',
          rawInput: f.args,
          ...(locations ? { locations } : {}),
          meta: { toolName: name, ...(f.intent ? { intent: f.intent } : {}) },
        });
        return HANDLED;
      }
      case 'tool_execution_update': {
        const content = toolContent(f.partialResult);
        m.upsertToolCall({ id: String(f.toolCallId ?? ''), status: 'in_progress', ...(content ? { content } : {}) });
        return HANDLED;
      }
      case 'tool_execution_end': {
        const content = toolContent(f.result);
        m.upsertToolCall({
          id: String(f.toolCallId ?? ''),
          status: f.isError ? 'failed' : 'completed',
          rawOutput: f.result,
          ...(content ? { content } : {}),
        });
        return /todo/i.test(String(f.toolName ?? '')) ? { handled: true, refreshState: true } : HANDLED;
      }
      case 'auto_compaction_start':
        m.notice('info', phrase('compacting'), [f.reason, f.action].filter(Boolean).join(', ') || undefined);
        m.setAgentState({ isCompacting: true });
        return { handled: true, agentStateChanged: true };
      case 'auto_compaction_end': {
        m.setAgentState({ isCompacting: false });
        if (f.aborted) m.notice('warning', phrase('compactionAborted'));
        else if (f.errorMessage) m.notice('error', phrase('compactionFailed'), String(f.errorMessage));
        else if (f.skipped) m.notice('info', phrase('compactionSkipped'));
        else {
          const r = isRecord(f.result) ? f.result : {};
          m.notice('info', phrase('compacted'), typeof r.tokensBefore === 'number' ? phrase('tokensBefore', String(r.tokensBefore)) : undefined);
        }
        return { handled: true, agentStateChanged: true };
      }
      case 'auto_retry_start':
        m.notice(
          'warning',
          phrase('retrying', String(f.attempt), String(f.maxAttempts), String(Math.round(Number(f.delayMs ?? 0) / 1000))),
          typeof f.errorMessage === 'string' ? f.errorMessage : undefined,
        );
        return HANDLED;
      case 'auto_retry_end':
        if (f.success) m.notice('info', phrase('retrySucceeded', String(f.attempt)));
        else m.notice('error', phrase('retriesExhausted'), typeof f.finalError === 'string' ? f.finalError : undefined);
        return HANDLED;
      case 'retry_fallback_applied':
        m.notice('warning', phrase('fallingBack', String(f.from), String(f.to)));
        return HANDLED;
      case 'ttsr_triggered': {
        const rules = Array.isArray(f.rules) ? f.rules.filter(isRecord).map((r) => String(r.name ?? r.id ?? '?')) : [];
        m.notice('info', phrase('rulesTriggered'), rules.join(', ') || undefined);
        return HANDLED;
      }
      case 'todo_reminder': {
        const todos = Array.isArray(f.todos) ? f.todos.filter(isRecord).map((t) => `- ${String(t.content ?? '')}`) : [];
        m.notice('info', phrase('todoReminder', String(f.attempt), String(f.maxAttempts)), todos.join('\n') || undefined);
        return HANDLED;
      }
      case 'todo_auto_clear':
        m.notice('info', phrase('todoCleared'));
        m.setPlan([]);
        return HANDLED;
      case 'queue_update': {
        const steering = Array.isArray(f.steering) ? f.steering : [];
        const followUp = Array.isArray(f.followUp) ? f.followUp : [];
        m.setAgentState({ queue: { steering, followUp }, queuedMessageCount: steering.length + followUp.length });
        return { handled: true, agentStateChanged: true };
      }
      case 'extension_error':
        m.notice('error', f.event ? phrase('extensionErrorIn', String(f.event)) : phrase('extensionError'), [f.extensionPath, f.error].filter(Boolean).map(String).join(': '));
        return HANDLED;
      case 'notice': {
        const level = f.level === 'error' ? 'error' : f.level === 'warning' ? 'warning' : 'info';
        m.notice(level, String(f.message ?? ''), typeof f.source === 'string' ? f.source : undefined);
        return HANDLED;
      }
      case 'available_commands_update': {
        const list = Array.isArray(f.commands) ? f.commands.filter(isRecord) : [];
        m.setCommands(list.map((c) => ({ name: String(c.name), description: String(c.description ?? ''), ...(c.input ? { input: c.input } : {}) })));
        return HANDLED;
      }
      case 'thinking_level_changed':
        m.setAgentState({ thinkingLevel: f.level ?? f.thinkingLevel });
        return { handled: true, agentStateChanged: true };
      case 'session_info_changed':
        m.setInfo({ title: typeof f.name === 'string' ? f.name : null });
        return HANDLED;
      case 'model_changed':
        return { handled: true, refreshState: true };
      default:
        return { handled: false };
    }
  }

  /** The fire-and-forget extension UI methods the model keeps: notices, status, widgets, title, composer text. */
  applyUi(method: string, request: Record<string, unknown>): void {
    const m = this.model;
    const str = (k: string) => (typeof request[k] === 'string' ? (request[k] as string) : undefined);
    switch (method) {
      case 'notify': {
        const t = str('notifyType');
        m.notice(t === 'error' ? 'error' : t === 'warning' ? 'warning' : 'info', str('message') ?? '');
        return;
      }
      case 'setStatus': {
        const status = { ...((m.agentState.extensionStatus as Record<string, string>) ?? {}) };
        const text = str('statusText');
        if (text === undefined) delete status[str('statusKey') ?? ''];
        else status[str('statusKey') ?? ''] = text;
        m.setAgentState({ extensionStatus: status });
        return;
      }
      case 'setWidget': {
        const widgets = { ...((m.agentState.widgets as Record<string, unknown>) ?? {}) };
        const key = str('widgetKey') ?? '';
        if (Array.isArray(request.widgetLines)) widgets[key] = { lines: request.widgetLines, placement: request.widgetPlacement ?? 'aboveEditor' };
        else delete widgets[key];
        m.setAgentState({ widgets });
        return;
      }
      case 'setTitle':
        m.setInfo({ title: str('title') ?? null });
        return;
      case 'set_editor_text':
        m.setAgentState({ editorText: str('text') ?? '' });
        return;
      default:
        return;
    }
  }

  /** A run started: message ids start afresh, and the turn begins unless a prompt began it already. */
  beginRun(): void {
    this.current = undefined;
    if (this.model.turn === 'idle') this.model.beginTurn();
  }

  /**
   * A run ended: its error as a notice, tool calls it left unfinished marked failed, and the turn ended
   * unless `turnContinues` (a prompt queued behind this run still waits for its own).
   */
  endRun(outcome: RunOutcome, turnContinues: boolean): void {
    const m = this.model;
    if (outcome.error) m.notice('error', phrase('turnFailed'), outcome.error);
    // Tool calls the run left unfinished (aborted mid-execution) will get no end event.
    for (const e of m.timeline()) {
      if (e.kind === 'tool_call' && (e.status === 'pending' || e.status === 'in_progress')) {
        m.upsertToolCall({ id: e.id, status: 'failed', meta: { ...e.meta, unfinished: outcome.stopReason } });
      }
    }
    if (!turnContinues && m.turn !== 'idle') m.endTurn(outcome.stopReason, outcome.error);
  }

  private messageId(message: Record<string, unknown>, phase: 'start' | 'update' | 'end'): string {
    const role = String(message.role ?? '');
    const cur = this.current;
    if (phase !== 'start' && cur && cur.role === role && (cur.timestamp === message.timestamp || message.timestamp === undefined)) return cur.id;
    const id = `${role}-${++this.messageSeq}`;
    this.current = { role, timestamp: message.timestamp, id };
    return id;
  }

  private onMessage(message: unknown, phase: 'start' | 'end'): void {
    if (!isRecord(message)) return;
    const id = this.messageId(message, phase);
    const m = this.model;
    switch (message.role) {
      case 'user': {
        const display = this.display;
        // pi echoes the prompt as it sent it (message_start, then message_end): both take the display.
        if (display && (display.id === undefined || display.id === id)) {
          display.id = id;
          m.replaceMessage('user', id, display.parts);
          return;
        }
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
        this.applyMessageUsage(message.usage);
        return;
      }
      default:
        return; // toolResult: shown through tool_execution_*; custom messages are the agent's own bookkeeping
    }
  }

  private applyMessageUsage(value: unknown): void {
    const usage = isRecord(value) ? value : undefined;
    if (!usage || typeof usage.totalTokens !== 'number' || usage.totalTokens <= 0) return;
    const m = this.model;
    const size = Number((m.agentState.contextWindow as number | undefined) ?? m.usage?.size ?? 0);
    const cost = isRecord(usage.cost) && typeof usage.cost.total === 'number' ? usage.cost.total : undefined;
    m.setUsage({
      used: usage.totalTokens,
      size,
      ...(typeof usage.input === 'number' ? { inputTokens: usage.input } : {}),
      ...(typeof usage.output === 'number' ? { outputTokens: usage.output } : {}),
      ...(cost !== undefined ? { cost: { amount: cost, currency: 'USD' } } : {}),
    });
  }

  private onMessageUpdate(f: Record<string, unknown>): FrameEffects {
    const message = isRecord(f.message) ? f.message : { role: 'assistant' };
    const ev = isRecord(f.assistantMessageEvent) ? f.assistantMessageEvent : undefined;
    if (!ev) return HANDLED;
    const id = this.messageId(message, 'update');
    const m = this.model;
    switch (ev.type) {
      case 'text_delta':
        if (typeof ev.delta === 'string' && ev.delta) m.appendChunk('agent', { type: 'text', text: ev.delta }, id);
        return HANDLED;
      case 'thinking_delta':
        if (typeof ev.delta === 'string' && ev.delta) m.appendChunk('thought', { type: 'text', text: ev.delta }, id);
        return HANDLED;
      case 'toolcall_start':
      case 'toolcall_end': {
        // (toolcall_delta only grows the arguments; the final ones come with toolcall_end.)
        const partial = isRecord(ev.partial) ? ev.partial : undefined;
        const idx = typeof ev.contentIndex === 'number' ? ev.contentIndex : -1;
        const tc = isRecord(ev.toolCall) ? ev.toolCall : partial && Array.isArray(partial.content) && isRecord(partial.content[idx]) ? (partial.content[idx] as Record<string, unknown>) : undefined;
        if (!tc || typeof tc.id !== 'string' || !tc.id) return HANDLED;
        const existing = m.toolCall(tc.id);
        if (existing && existing.status !== 'pending') return HANDLED; // already executing: execution events own it
        const name = String(tc.name ?? 'tool');
        m.upsertToolCall({ id: tc.id, title: toolTitle(name, tc.arguments), toolKind: toolKind(name), status: 'pending', rawInput: tc.arguments });
        return HANDLED;
      }
      case 'error': {
        const err = isRecord(ev.error) ? ev.error : undefined;
        return err?.stopReason === 'error' && err.errorMessage ? { handled: true, modelError: String(err.errorMessage) } : HANDLED;
      }
      default:
        return HANDLED;
    }
  }
}
