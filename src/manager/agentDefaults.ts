import type * as vscode from 'vscode';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentSession } from '../session/agentSession';
import type { ModeState, ModelState } from '../session/sessionModel';

/** What a person chose for an agent: applied to every NEW session of that agent. */
export interface AgentChoices {
  modeId?: string;
  modelId?: string;
  config?: Record<string, string | boolean>;
}

/** What an agent offered last time (its pickers), shown at once while it starts again. */
export interface AgentOffer {
  modes?: ModeState;
  models?: ModelState;
  configOptions: unknown[];
  commands: { name: string; description: string; input?: unknown }[];
}

const CHOICES_KEY = 'agentHost.agentChoices';
const OFFERS_KEY = 'agentHost.agentOffers';

/**
 * Per-agent defaults and the cache of each agent's last offer, kept in global state (they belong to the
 * agent, not to a folder). A configured `defaults` ({mode, model, config}) is the start; a choice made in
 * the chat's header is remembered on top of it, option by option.
 */
export class AgentDefaults {
  /** Last written offer per agent (JSON), so an unchanged offer is not written again. */
  private readonly written = new Map<string, string>();

  constructor(private readonly memento?: vscode.Memento) {}

  /** The configured defaults with the remembered choices on top. */
  choices(agent: Pick<AgentConfig, 'name' | 'defaults'>): AgentChoices {
    const saved = this.memento?.get<Record<string, AgentChoices>>(CHOICES_KEY, {})[agent.name] ?? {};
    const configured = agent.defaults ?? {};
    const modeId = saved.modeId ?? configured.mode;
    const modelId = saved.modelId ?? configured.model;
    const config = { ...(configured.config ?? {}), ...(saved.config ?? {}) };
    return { ...(modeId ? { modeId } : {}), ...(modelId ? { modelId } : {}), ...(Object.keys(config).length ? { config } : {}) };
  }

  /** Remembers a choice made for `agentName` (a mode, a model or one config option). */
  async remember(agentName: string, change: AgentChoices): Promise<void> {
    if (!this.memento) return;
    const all = { ...this.memento.get<Record<string, AgentChoices>>(CHOICES_KEY, {}) };
    const prev = all[agentName] ?? {};
    all[agentName] = { ...prev, ...change, config: { ...(prev.config ?? {}), ...(change.config ?? {}) } };
    await this.memento.update(CHOICES_KEY, all);
  }

  /** The agent's last offer, if one was seen. */
  offer(agentName: string): AgentOffer | undefined {
    return this.memento?.get<Record<string, AgentOffer>>(OFFERS_KEY, {})[agentName];
  }

  /** The agent's last offer with the choices made since as current (what its pickers will show). */
  offerWithChoices(agent: Pick<AgentConfig, 'name' | 'defaults'>): AgentOffer | undefined {
    const offer = this.offer(agent.name);
    if (!offer) return undefined;
    const want = this.choices(agent);
    return {
      ...offer,
      ...(offer.modes && want.modeId ? { modes: { ...offer.modes, currentModeId: want.modeId } } : {}),
      ...(offer.models && want.modelId ? { models: { ...offer.models, currentModelId: want.modelId } } : {}),
      configOptions: offer.configOptions.map((c) => {
        const id = (c as { id?: unknown }).id;
        const v = typeof id === 'string' ? want.config?.[id] : undefined;
        return v === undefined ? c : { ...(c as object), currentValue: v };
      }),
    };
  }

  /** Keeps what the agent offers now (written only when it changed). */
  keepOffer(agentName: string, offer: AgentOffer): void {
    if (!this.memento) return;
    const json = JSON.stringify(offer);
    if (this.written.get(agentName) === json) return;
    this.written.set(agentName, json);
    const all = { ...this.memento.get<Record<string, AgentOffer>>(OFFERS_KEY, {}), [agentName]: offer };
    void this.memento.update(OFFERS_KEY, all);
  }

  /**
   * Applies the defaults to a new session: each only when the agent offers it and it is not already
   * current. Returns what was applied and what was not (with the reason), for the log.
   */
  async apply(session: AgentSession, agent: AgentConfig): Promise<{ applied: string[]; skipped: string[] }> {
    const want = this.choices(agent);
    const applied: string[] = [];
    const skipped: string[] = [];
    const m = session.model;
    const attempt = async (label: string, run: () => Promise<void>) => {
      try {
        await run();
        applied.push(label);
      } catch (error) {
        skipped.push(`${label}: ${(error as Error).message}`);
      }
    };
    if (want.modeId && m.modes?.currentModeId !== want.modeId) {
      if (m.modes?.availableModes.some((x) => x.id === want.modeId)) await attempt(`mode ${want.modeId}`, () => session.setMode(want.modeId!));
      else skipped.push(`mode ${want.modeId}: not offered`);
    }
    if (want.modelId && m.models?.currentModelId !== want.modelId) {
      if (m.models?.availableModels.some((x) => x.modelId === want.modelId)) await attempt(`model ${want.modelId}`, () => session.setModel(want.modelId!));
      else skipped.push(`model ${want.modelId}: not offered`);
    }
    for (const [id, value] of Object.entries(want.config ?? {})) {
      const option = m.configOptions.find((o) => (o as { id?: unknown }).id === id) as { currentValue?: unknown } | undefined;
      if (!option) skipped.push(`config ${id}: not offered`);
      else if (option.currentValue !== value) await attempt(`config ${id}=${String(value)}`, () => session.setConfigOption(id, value));
    }
    return { applied, skipped };
  }
}
