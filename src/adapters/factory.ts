/**
 * The adapter factories: the one place besides the roots that knows which protocol adapter serves which
 * configured agent. The extension and the CLI call it; everything else sees an AgentSession.
 */
import { AcpSession } from '../acp/acpSession';
import { missingCompanion, presetFor } from '../agents/presets';
import { RpcAgentSession } from '../rpc/rpcAgentSession';
import { RpcSession } from '../rpc/rpcSession';
import { agentEnvironment, type AgentConfig } from '../session/agentConfig';
import type { AgentSession, AgentSessionDirectory } from '../session/agentSession';
import type { AgentStartOptions } from '../session/sessionHost';

/** The agent as its preset knows it: one that ignores stdin closing is stopped with SIGTERM at once. */
function withPresetStop(config: AgentConfig): AgentConfig {
  return config.ignoresInputClose === undefined && presetFor(config)?.ignoresInputClose ? { ...config, ignoresInputClose: true } : config;
}

/** Starts an agent with the adapter its configured protocol needs. */
export async function startAgentSession(agent: AgentConfig, options: AgentStartOptions): Promise<AgentSession> {
  const config = withPresetStop(agent);
  // Said before the agent runs: pi-acp without pi would ask to sign in instead of naming what is missing.
  const missing = missingCompanion(config, agentEnvironment(config, options.env));
  if (missing) throw new Error(missing);
  switch (config.protocol ?? 'acp') {
    case 'acp':
      return AcpSession.start(config, options);
    case 'rpc': {
      const rpc = await RpcSession.start(config, {
        logger: options.logger,
        cwd: options.cwd,
        ...(options.env ? { env: options.env } : {}),
        ...(options.ui ? { rpcUi: options.ui } : {}),
        // pi RPC has no MCP: the IDE tools are registered as host tools.
        ...(options.ideTools ? { hostTools: options.ideTools.tools } : {}),
        ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
        ...(options.initializeTimeoutMs ? { initializeTimeoutMs: options.initializeTimeoutMs } : {}),
        ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
        ...(options.writeStallMs !== undefined ? { writeStallMs: options.writeStallMs } : {}),
        ...(options.frameTap ? { frameTap: options.frameTap } : {}),
      });
      try {
        return await RpcAgentSession.open(rpc, options.attach);
      } catch (error) {
        await rpc.shutdown();
        throw error;
      }
    }
  }
}

/** The agent's own session store without opening a session; undefined for protocols that share none (pi RPC). */
export async function openSessionDirectory(
  config: AgentConfig,
  options: Pick<AgentStartOptions, 'logger' | 'cwd' | 'env' | 'requestTimeoutMs' | 'initializeTimeoutMs'>,
): Promise<AgentSessionDirectory | undefined> {
  return (config.protocol ?? 'acp') === 'acp' ? AcpSession.directory(withPresetStop(config), options) : undefined;
}
