/**
 * The chat header's state (tabs, agents with where each is written, connection state, the session's pickers,
 * usage, commands) from the manager and the shown session. While an agent starts, its last offer (with the
 * choices made since) fills the pickers so they show at once.
 */
import type { AgentManager } from '../../manager/agentManager';
import { sourceLabel } from '../../manager/agentSources';
import type { PromptCapabilities } from '../../session/agentSession';
import type { SessionModel } from '../../session/sessionModel';
import type { HeaderState, RpcChatState } from '../../shared/chatProtocol';
import { normalizeConfigOptions } from './chatContent';
import { localizedRpcOptions } from './rpcOptionTexts';

export interface HeaderInputs {
  manager: AgentManager;
  /** The session the chat shows (perhaps not the manager's current one). */
  model: SessionModel | undefined;
  /** A prompt of the shown tab is in flight. */
  busy: boolean;
  /** The chat's cards answer permissions (inline mode); with the modal dialog, the card says where to answer. */
  permissionsInChat: boolean;
}

export function chatHeader({ manager, model, busy, permissionsInChat }: HeaderInputs): HeaderState {
  const rpc = agentState(manager, model);
  const caps = promptCaps(manager);
  const m = manager.current?.model === model ? model : undefined;
  const state = busy && manager.state === 'ready' ? 'busy' : manager.state;
  const error = manager.error?.split('\n')[0];
  const agentName = manager.agentName;
  if (m && agentName) {
    manager.defaults.keepOffer(agentName, { ...(m.modes ? { modes: m.modes } : {}), ...(m.models ? { models: m.models } : {}), configOptions: m.configOptions, commands: m.commands });
  }
  const agent = !m && manager.state === 'starting' ? manager.agents().find((a) => a.name === agentName) : undefined;
  const cached = agent ? manager.defaults.offerWithChoices(agent) : undefined;
  const o = m ?? cached;
  const agents = manager.agents();
  return {
    tabs: manager.tabs(),
    agents: agents.map((a) => a.name),
    agentSources: Object.fromEntries(agents.map((a) => [a.name, sourceLabel(manager.agentSource(a.name))])),
    ...(agentName ? { agentName } : {}),
    state,
    ...(error ? { error } : {}),
    turn: m?.turn ?? 'idle',
    ...(m && manager.silentFor !== undefined ? { silentSeconds: manager.silentFor } : {}),
    ...(o?.modes ? { modes: o.modes } : {}),
    ...(o?.models ? { models: o.models } : {}),
    configOptions: o ? localizedRpcOptions(normalizeConfigOptions(o.configOptions)) : [],
    ...(m?.usage ? { usage: m.usage } : {}),
    ...mcpOf(m),
    ...sandboxOf(m),
    commands: (o?.commands ?? []).map((c) => {
      const hint = (c.input as { hint?: unknown } | undefined)?.hint;
      return { name: c.name, description: c.description, ...(typeof hint === 'string' ? { hint } : {}) };
    }),
    caps,
    permissionsInChat,
    ...(m?.info.title ? { title: m.info.title } : {}),
    ...(rpc ? { rpc } : {}),
  };
}

/** The user's MCP servers the session received (set by the ACP adapter), for the header. */
/** The session's sandbox, as the factory set it in the agent state (src/adapters/factory.ts). */
function sandboxOf(model: SessionModel | undefined): Pick<HeaderState, 'sandbox'> {
  const s = model?.agentState.sandbox as { mode?: unknown; description?: unknown } | undefined;
  if (!s || typeof s.mode !== 'string') return {};
  return { sandbox: { mode: s.mode, ...(typeof s.description === 'string' ? { description: s.description } : {}) } };
}

function mcpOf(model: SessionModel | undefined): Pick<HeaderState, 'mcpServers'> {
  const list = model?.agentState.mcpServers;
  if (!Array.isArray(list) || !list.length) return {};
  return { mcpServers: list.map((m: { name?: unknown; type?: unknown }) => ({ name: String(m.name), type: String(m.type) })) };
}

/** The agent's own state as the chat shows it (undefined for agents without any). */
function agentState(manager: AgentManager, model: SessionModel | undefined): RpcChatState | undefined {
  const s = manager.current;
  if (!s || s.model !== model) return undefined;
  const extras = s.extras();
  if (!extras) return undefined;
  return { ...extras, canSteer: s.queue?.canSteer ?? false, canFollowUp: s.queue?.canFollowUp ?? false };
}

/** What the agent takes in a prompt besides text. */
export function promptCaps(manager: AgentManager): PromptCapabilities {
  return manager.current?.promptCapabilities ?? { image: false, embeddedContext: false };
}
