/**
 * The stdio MCP server the agent starts (`mcpServers: [{name: "ide", command: node, args: [dist/ideBridge.js]}]`):
 * it lists and calls the editor's IDE tools through the extension's private socket (src/mcp/toolEndpoint.ts).
 * Bundled on its own by esbuild.mjs; stdout is MCP only, diagnostics go to stderr.
 */
import { connectToolEndpoint, ENV_SOCKET, ENV_TOKEN } from './toolEndpoint';
import { serveMcpTools } from './mcpToolServer';

async function main(): Promise<void> {
  const socketPath = process.env[ENV_SOCKET];
  const token = process.env[ENV_TOKEN];
  if (!socketPath || !token) throw new Error(`${ENV_SOCKET} and ${ENV_TOKEN} must be set (Atrium starts this bridge)`);
  const provider = await connectToolEndpoint(socketPath, token);
  const server = serveMcpTools(provider, { info: { name: 'agent-host-ide', version: '0.1.0' }, input: process.stdin, output: process.stdout });
  await server.closed;
}

main().catch((error: unknown) => {
  process.stderr.write(`agent-host ide bridge: ${(error as Error).message}\n`);
  process.exit(1);
});
