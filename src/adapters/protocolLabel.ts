/**
 * The name a configured agent's protocol is shown by. Apart from the factory so the extension's activation
 * can name it without loading the adapters the factory imports.
 */
import type { AgentConfig } from '../session/agentConfig';

const LABELS: Record<NonNullable<AgentConfig['protocol']>, string> = { acp: 'ACP', rpc: 'pi RPC', 'agent-service': 'agent service' };

export function protocolLabel(agent: Pick<AgentConfig, 'protocol'>): string {
  return LABELS[agent.protocol ?? 'acp'];
}
