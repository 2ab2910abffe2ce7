/**
 * The compatibility check's host (./checkRun.ts): the concrete adapters and services it runs an
 * agent with — sessions through `startAgentSession` with files and terminals confined to the workspace, a
 * tool served to ACP agents over the IDE MCP bridge (dist/ideBridge.js, socket + token), to pi RPC
 * agents as host tools and to an agent service's IDE-service requests (get_document_symbols over the workspace), and bare idle processes for the exit checks (the factory's `startIdleAgent`). The one
 * file of the check's room that may import the adapters and the host services (scripts/check-layers.mjs); only
 * the roots import it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startAgentSession, startIdleAgent } from '../adapters/factory';
import type { CheckHost, HostedToolCall } from './checkTypes';
import type { Logger } from '../core/log';
import { FileService } from '../host/fileService';
import { TerminalService } from '../host/terminalService';
import { workspaceFileTools } from '../host/workspaceFileTools';
import { startToolEndpoint } from '../mcp/toolEndpoint';
import { headlessRpcUi } from '../rpc/extensionUi';
import { agentEnvironment, type AgentConfig } from '../session/agentConfig';
import type { HostToolProvider } from '../session/hostTools';

const TOOL = 'read_project_file';

/** dist/ideBridge.js beside the bundled CLI; out/src/mcp/ideBridge.js when run from the compiled tree. */
function bridgePath(): string {
  const bundled = path.join(__dirname, 'ideBridge.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, '..', 'mcp', 'ideBridge.js');
}

/** The check's host for `workspace`; `close()` stops the tool endpoint (sessions are stopped by the check). */
export async function openCheckHost(workspace: string, logger: Logger): Promise<CheckHost> {
  const calls: HostedToolCall[] = [];
  const files = workspaceFileTools(workspace);
  const tools: HostToolProvider = {
    definitions: () => files.definitions().filter((d) => d.name === TOOL),
    call: (name, args, signal, onUpdate) => {
      calls.push({ name, args });
      return files.call(name, args, signal, onUpdate);
    },
  };
  const endpoint = await startToolEndpoint(tools, logger);
  return {
    tool: { name: TOOL, calls },
    async start(config: AgentConfig, request) {
      const env = Object.entries(endpoint.bridgeEnv()).map(([name, value]) => ({ name, value }));
      const session = await startAgentSession(config, {
        logger,
        cwd: request.cwd,
        decidePermission: request.decidePermission,
        files: new FileService(() => [request.cwd]),
        terminals: new TerminalService(() => [request.cwd], undefined, { baseEnv: () => agentEnvironment(config) }),
        ...(request.withTool ? { ideTools: { tools, mcpServer: async () => ({ name: 'agent-host-check', command: process.execPath, args: [bridgePath()], env }) } } : {}),
        ui: headlessRpcUi({ policy: 'deny-all', log: (l) => logger.info(l) }),
        requestTimeoutMs: request.timeoutMs,
        initializeTimeoutMs: request.timeoutMs,
        frameTap: (dir, frame) => request.frames.push({ dir, msg: frame as Record<string, unknown> }),
        ...(request.attach ? { attach: { ...request.attach, replay: true } } : {}),
        ...(request.apiKey ? { apiKey: request.apiKey } : {}),
        ...(request.sandbox ? { sandbox: request.sandbox } : {}),
      });
      return { session, frames: request.frames };
    },
    startIdle: (config, cwd, timeoutMs) => startIdleAgent(config, { logger, cwd, timeoutMs }),
    close: () => endpoint.close(),
  };
}
