/**
 * An MCP server (the official SDK) that offers a HostToolProvider's tools: one definition list serves pi RPC
 * agents (`set_host_tools`) and ACP agents (MCP) alike. No vscode.
 */
import type { HostToolProvider } from '../session/hostTools';

export interface RunningMcpServer {
  close(): Promise<void>;
}

/** Serves `provider` over MCP on this process's stdin/stdout until the client goes away. */
export async function serveToolsOverStdio(provider: HostToolProvider, name: string, version: string): Promise<RunningMcpServer> {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { ListToolsRequestSchema, CallToolRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const server = new Server({ name, version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: provider.definitions().map((d) => ({
      name: d.name,
      title: d.label,
      description: d.description,
      inputSchema: { type: 'object' as const, ...d.parameters },
      annotations: { readOnlyHint: true },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    try {
      const result = await provider.call(request.params.name, request.params.arguments ?? {}, extra.signal, () => undefined);
      return { content: result.content, ...(result.isError ? { isError: true } : {}) };
    } catch (error) {
      return { content: [{ type: 'text' as const, text: (error as Error).message }], isError: true };
    }
  });
  await server.connect(new StdioServerTransport());
  return { close: () => server.close() };
}
