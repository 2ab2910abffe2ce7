import { AcpSession, type AcpSessionOptions } from '../acp/acpSession';
import type { RpcUiHandlers } from '../rpc/extensionUi';
import { RpcSession } from '../rpc/rpcSession';
import type { AgentConfig } from './agentConfig';
import type { AgentSession } from './agentSession';
import type { HostToolProvider } from './hostTools';

/** Options every protocol adapter understands; adapters ignore what their protocol cannot use. */
export type StartSessionOptions = AcpSessionOptions & {
  /** pi RPC: the extension UI (dialogs, status, widgets); without it dialogs are answered `cancelled`. */
  rpcUi?: RpcUiHandlers;
  /** Tools the host offers the agent (pi RPC: `set_host_tools`, fork dialect only). */
  hostTools?: HostToolProvider;
};

/** Starts an agent with the adapter its configured protocol needs. */
export async function startAgentSession(config: AgentConfig, options: StartSessionOptions): Promise<AgentSession> {
  switch (config.protocol ?? 'acp') {
    case 'acp':
      return AcpSession.start(config, options);
    case 'rpc':
      return RpcSession.start(config, options);
  }
}
