import { AcpSession, type AcpSessionOptions } from '../acp/acpSession';
import type { AgentConfig } from './agentConfig';
import type { AgentSession } from './agentSession';

/** Options every protocol adapter understands; adapters ignore what their protocol cannot use. */
export type StartSessionOptions = AcpSessionOptions;

/** Starts an agent with the adapter its configured protocol needs. */
export async function startAgentSession(config: AgentConfig, options: StartSessionOptions): Promise<AgentSession> {
  switch (config.protocol ?? 'acp') {
    case 'acp':
      return AcpSession.start(config, options);
    case 'rpc':
      throw new Error(`Agent "${config.name}": RPC mode (protocol "rpc") is not supported by this build yet`);
  }
}
