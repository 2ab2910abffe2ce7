/**
 * Tools the host (the editor) offers to the agent, whatever the protocol: pi RPC registers them with
 * `set_host_tools` and answers `host_tool_call`; the ACP side can serve the same provider through MCP.
 * The extension supplies a provider backed by the editor's language services (src/host/vscode), the CLI
 * and tests one over plain files (src/host/workspaceFileTools.ts).
 */

export interface HostToolDefinition {
  name: string;
  label: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

export interface HostToolContent {
  type: 'text';
  text: string;
}

export interface HostToolResult {
  content: HostToolContent[];
  isError?: boolean;
}

export interface HostToolProvider {
  definitions(): HostToolDefinition[];
  /**
   * Runs one tool. `signal` aborts when the agent cancels the call; `onUpdate` streams partial output.
   * A thrown error is reported to the agent as an error result.
   */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal, onUpdate: (partial: HostToolResult) => void): Promise<HostToolResult>;
}
