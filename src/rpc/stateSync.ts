/**
 * The agent's state as the session model shows it: `get_state` (normalized by the dialect) applied to
 * agentState, plan, title, usage; the queue modes, thinking level and auto-* switches published as
 * ACP-shaped config options; the model list published as the model picker's models. No I/O: the session
 * fetches, this module applies.
 */
import type { PlanEntry, SessionModel } from '../session/sessionModel';
import type { RpcModel, RpcState, TodoPhase } from './commands';
import type { RpcDialect } from './dialect';
import { isRecord } from './json';

/** A model by provider and id, as the session lists them. */
export type ModelRef = { provider: string; id: string; name?: string };

/** The state fields copied into agentState as they are. */
const STATE_FIELDS = [
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
] as const;

/** Flattens todo phases into plan entries (the phase name kept on each entry). */
export function phasesToPlan(phases: TodoPhase[] | undefined): PlanEntry[] {
  return (phases ?? []).flatMap((phase) => (phase.tasks ?? []).map((t) => ({ content: t.content, status: t.status, ...(phase.name ? { phase: phase.name } : {}) })));
}

function modelRef(m: RpcModel): ModelRef {
  return { provider: m.provider, id: m.id, ...(m.name ? { name: m.name } : {}) };
}

export class RpcStateSync {
  /** The agent's own current session id (changes with new_session / switch_session / branch). */
  agentSessionId: string;
  private availableModels: ModelRef[] = [];

  constructor(
    private readonly model: SessionModel,
    private readonly dialect: RpcDialect,
    agentSessionId: string,
  ) {
    this.agentSessionId = agentSessionId;
  }

  /** Compaction start and end events seen so far (a `get_state` asked before the last one answers an older state). */
  compactionEvents = 0;

  /**
   * A `get_state` answer as the dialect sent it: normalized, applied, and returned. `seen`: compactionEvents when it
   * was asked; a compaction event since then knows better than the answer whether the agent compacts.
   */
  applyRaw(raw: Record<string, unknown> | undefined, seen?: number): RpcState {
    const state = this.dialect.normalizeState(raw ?? {}) as RpcState;
    if (seen !== undefined && seen !== this.compactionEvents) {
      const { isCompacting: _stale, ...rest } = state;
      this.apply(rest as RpcState);
    } else this.apply(state);
    return state;
  }

  apply(state: RpcState): void {
    const model = this.model;
    this.agentSessionId = String(state.sessionId ?? this.agentSessionId);
    const patch: Record<string, unknown> = {};
    for (const k of STATE_FIELDS) if (state[k] !== undefined) patch[k] = state[k];
    patch.agentSessionId = state.sessionId;
    if (state.model) {
      patch.model = { provider: state.model.provider, id: state.model.id, name: state.model.name };
      if (typeof state.model.contextWindow === 'number') patch.contextWindow = state.model.contextWindow;
    }
    model.setAgentState(patch);
    this.publishConfigOptions();
    if (state.todoPhases) {
      const plan = phasesToPlan(state.todoPhases);
      if (JSON.stringify(plan) !== JSON.stringify(model.plan)) model.setPlan(plan);
    }
    if (state.sessionName && state.sessionName !== model.info.title) model.setInfo({ title: state.sessionName });
    if (state.model) this.publishModels(`${state.model.provider}/${state.model.id}`, state.model);
    const ctx = isRecord(state.contextUsage) ? state.contextUsage : undefined;
    if (ctx && typeof ctx.tokens === 'number' && typeof ctx.contextWindow === 'number') {
      model.setUsage({ used: ctx.tokens, size: ctx.contextWindow });
    }
  }

  /** agentState fields we know changed (a command succeeded) without asking the agent. */
  patch(patch: Record<string, unknown>): void {
    this.model.setAgentState(patch);
    this.publishConfigOptions();
  }

  /** The `get_available_models` list: kept for setModel() and published with the current model. */
  setAvailableModels(models: RpcModel[]): ModelRef[] {
    this.availableModels = models.map(modelRef);
    this.publishModels(this.model.models?.currentModelId);
    return this.availableModels;
  }

  /** `provider/id` (or a bare id the list knows) as the provider and id `set_model` takes. */
  resolveModel(modelId: string): { provider: string; id: string } {
    const slash = modelId.indexOf('/');
    const found = this.availableModels.find((m) => `${m.provider}/${m.id}` === modelId || (slash < 0 && m.id === modelId));
    return {
      provider: found?.provider ?? (slash > 0 ? modelId.slice(0, slash) : ''),
      id: found?.id ?? (slash > 0 ? modelId.slice(slash + 1) : modelId),
    };
  }

  /** `get_session_stats`: kept in agentState, its context usage and cost shown in the usage meter. */
  applySessionStats(stats: Record<string, unknown>): void {
    this.patch({ stats });
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
  }

  /**
   * Queue modes, thinking level and auto-* switches as ACP-shaped config options, so generic views show them. Named
   * here in English with their raw values; `_meta.hostNamed` tells the views these are ours to name (in the display
   * language: src/views/chat/rpcOptionTexts.ts).
   */
  publishConfigOptions(): void {
    const s = this.model.agentState;
    const select = (id: string, name: string, value: unknown, values: string[], description?: string) => ({
      id,
      name,
      ...(description ? { description } : {}),
      type: 'select',
      currentValue: String(value),
      options: values.map((v) => ({ value: v, name: v })),
      _meta: { hostNamed: true },
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
    if (s.interruptMode !== undefined && this.dialect.supports('set_interrupt_mode').supported) {
      options.push(select('interrupt_mode', 'Interrupt', s.interruptMode, ['wait', 'immediate'], 'Whether steering interrupts remaining tool calls'));
    }
    if (s.autoCompactionEnabled !== undefined) {
      options.push(select('auto_compaction', 'Auto-compaction', s.autoCompactionEnabled, ['true', 'false']));
    }
    if (s.autoRetryEnabled !== undefined) options.push(select('auto_retry', 'Auto-retry', s.autoRetryEnabled, ['true', 'false']));
    if (JSON.stringify(options) !== JSON.stringify(this.model.configOptions)) this.model.setConfigOptions(options);
  }

  private publishModels(currentModelId: string | undefined, current?: RpcModel): void {
    const list = [...this.availableModels];
    if (current && !list.some((m) => m.provider === current.provider && m.id === current.id)) list.unshift(modelRef(current));
    if (!currentModelId && !list.length) return;
    this.model.setModels({
      currentModelId: currentModelId ?? '',
      availableModels: list.map((m) => ({ modelId: `${m.provider}/${m.id}`, name: m.name ?? m.id, description: m.provider })),
    });
  }
}
