/**
 * The adapter factories: the one place besides the roots that knows which protocol adapter serves which
 * configured agent. The extension and the CLI call it; everything else sees an AgentSession.
 */
import { AcpClient } from '../acp/acpClient';
import { ServiceSession } from '../agentService/serviceSession';
import { AcpSession, clientCapabilities } from '../acp/acpSession';
import { missingCompanion, presetFor } from '../agents/presets';
import { type AgentProcess, type ExitInfo, killGroup, type SandboxReport } from '../core/agentProcess';
import type { Logger } from '../core/log';
import { RpcAgentSession } from '../rpc/rpcAgentSession';
import { RpcConnection } from '../rpc/rpcConnection';
import { RpcSession } from '../rpc/rpcSession';
import { agentEnvironment, spawnSpecOf, type AgentConfig } from '../session/agentConfig';
import { namedForAgent } from '../session/mcpConfig';
import { phrase } from '../session/notices';
import type { SandboxBlock } from '../session/sandboxBlocks';
import type { AgentSession, AgentSessionDirectory } from '../session/agentSession';
import type { AgentStartOptions } from '../session/sessionHost';

/** The agent as its preset knows it: one that ignores stdin closing is stopped with SIGTERM at once. */
function withPresetStop(config: AgentConfig): AgentConfig {
  return config.ignoresInputClose === undefined && presetFor(config)?.ignoresInputClose ? { ...config, ignoresInputClose: true } : config;
}

/**
 * Starts an agent with the adapter its configured protocol needs. In the sandbox, the session knows it (its tool
 * cards name the writes the read-only filesystem refused; the header shows the mode) and each connection the
 * sandbox refused is named on the running tool calls, or in a notice — those refused before the session existed too.
 */
export async function startAgentSession(agent: AgentConfig, options: AgentStartOptions): Promise<AgentSession> {
  const sandbox = options.sandbox;
  if (!sandbox) {
    const session = await startProtocolSession(agent, options);
    // A local agent without the sandbox: the header says so (a remote one runs under its own machine's rules).
    if (!agent.url) session.model.setAgentState({ sandbox: { mode: 'off' } });
    return session;
  }
  let session: AgentSession | undefined;
  const early: SandboxBlock[] = [];
  const onReport = (report: SandboxReport) => {
    sandbox.onReport?.(report);
    if (report.type !== 'network') return;
    const block: SandboxBlock = { kind: 'network', target: report.port && report.port !== 443 && report.port !== 80 ? `${report.host}:${report.port}` : report.host };
    if (session) session.model.sandboxBlocked(block);
    else early.push(block);
  };
  session = await startProtocolSession(agent, { ...options, sandbox: { ...sandbox, onReport } });
  session.model.sandboxed = true;
  session.model.setAgentState({ sandbox: { mode: sandbox.mode, ...(sandbox.description ? { description: sandbox.description } : {}) } });
  for (const block of early.splice(0)) session.model.sandboxBlocked(block);
  return session;
}

async function startProtocolSession(agent: AgentConfig, options: AgentStartOptions): Promise<AgentSession> {
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
        ...(options.sandbox ? { sandbox: options.sandbox } : {}),
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
        return saidNoMcp(await RpcAgentSession.open(rpc, options.attach), config, options);
      } catch (error) {
        await rpc.shutdown();
        throw error;
      }
    }
    case 'agent-service':
      return saidNoMcp(await ServiceSession.start(config, options), config, options);
  }
}

/** Protocols without MCP take none of the user's MCP servers: said once in the new session (and the log). */
function saidNoMcp(session: AgentSession, config: AgentConfig, options: AgentStartOptions): AgentSession {
  const names = (options.mcpServers ?? []).map((m) => m.name).filter((name) => namedForAgent(name, config.mcpServers));
  if (names.length) {
    session.model.notice('info', phrase('mcpNotPassed'), phrase('mcpNoneTaken', names.join(', ')));
    options.logger.info(`MCP servers not passed to ${config.name} (${config.protocol}): it takes none (${names.join(', ')})`);
  }
  return session;
}

/** The agent's own session store without opening a session; undefined for protocols that share none (pi RPC). */
export async function openSessionDirectory(
  config: AgentConfig,
  options: Pick<AgentStartOptions, 'logger' | 'cwd' | 'env' | 'requestTimeoutMs' | 'initializeTimeoutMs' | 'apiKey' | 'onKeyRefused'>,
): Promise<AgentSessionDirectory | undefined> {
  return (config.protocol ?? 'acp') === 'acp' ? AcpSession.directory(withPresetStop(config), options) : undefined;
}

/** A started agent that holds no session: what the compatibility check's exit checks drive by hand. */
export interface IdleAgentProcess {
  closeInput(): void;
  /** SIGTERM to the agent's process group, as Atrium's own stop sends it. */
  terminate(): void;
  readonly exited: Promise<ExitInfo>;
  /** Stops it for good (stdin, SIGTERM, SIGKILL) and waits. */
  stop(): Promise<ExitInfo>;
}

function idle(process: AgentProcess): IdleAgentProcess {
  return {
    closeInput: () => process.child.stdin.end(),
    terminate: () => {
      if (process.pid !== undefined) killGroup(process.pid, 'SIGTERM');
    },
    exited: process.exited,
    stop: () => process.shutdown(),
  };
}

/** Spawns the agent bare and waits for its handshake (ACP initialize, pi `get_state`), then leaves it idle; as configured, no preset stop. */
export async function startIdleAgent(config: AgentConfig, options: { logger: Logger; cwd: string; timeoutMs: number }): Promise<IdleAgentProcess> {
  const { logger, cwd, timeoutMs } = options;
  if (config.url) throw new Error(`"${config.name}" is a remote agent (${config.url}): there is no process of ours to start idle`);
  switch (config.protocol ?? 'acp') {
    case 'acp': {
      const client = AcpClient.spawn(spawnSpecOf(config, cwd), {
        logger,
        initializeTimeoutMs: timeoutMs,
        handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) },
      });
      try {
        await client.initialize(clientCapabilities({}));
      } catch (error) {
        await client.shutdown();
        throw error;
      }
      return idle(client.process);
    }
    case 'rpc': {
      const connection = RpcConnection.spawn(spawnSpecOf(config, cwd), { logger, commandTimeoutMs: timeoutMs });
      try {
        await connection.call({ type: 'get_state' }, { timeoutMs });
      } catch (error) {
        await connection.shutdown();
        throw error;
      }
      return idle(connection.process);
    }
    case 'agent-service':
      throw new Error(`"${config.name}" is a remote agent service: there is no process of ours to start idle`);
  }
}
