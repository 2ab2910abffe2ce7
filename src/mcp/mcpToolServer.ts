/**
 * An MCP server offering a HostToolProvider's tools over stdio (one JSON-RPC message per line): one
 * definition list serves pi RPC agents (`set_host_tools`) and ACP agents (MCP) alike. A tools-only server
 * needs few methods — initialize, ping, tools/list, tools/call, and notifications/cancelled — so they are
 * written here against the official SDK's types, imported as types only: the bridge bundle carries none of
 * the SDK's code (its server and validators were 600 KB of the bridge's 650). No vscode.
 */
import type { Readable, Writable } from 'node:stream';
import type { CallToolResult, Implementation, InitializeResult, JSONRPCErrorResponse, JSONRPCResultResponse, ListToolsResult, RequestId, Tool } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from '../core/lineSplitter';
import type { HostToolDefinition, HostToolProvider } from '../session/hostTools';

/** The protocol versions we answer in, newest first: the client's own when listed, else the newest. */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** A request answered with a JSON-RPC error instead of a result. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Params = Record<string, unknown>;

function isObject(value: unknown): value is Params {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}

/** 1 and "1" are different ids. */
function idKey(id: RequestId): string {
  return `${typeof id}:${id}`;
}

function toTool(d: HostToolDefinition): Tool {
  return {
    name: d.name,
    title: d.label,
    description: d.description,
    inputSchema: { type: 'object', ...d.parameters },
    annotations: { readOnlyHint: true },
  };
}

export interface McpServerOptions {
  /** Our name and version in the initialize answer. */
  info: Implementation;
  input: Readable;
  output: Writable;
  /** Longer messages are refused (default 16 MiB). */
  maxLineBytes?: number;
}

export interface RunningMcpServer {
  /** Settles when the input ends or the output breaks; every call still running is cancelled then. */
  readonly closed: Promise<void>;
}

/** Serves `provider`'s tools to the MCP client at the other end of `input` / `output` until it goes away. */
export function serveMcpTools(provider: HostToolProvider, options: McpServerOptions): RunningMcpServer {
  const { info, input, output } = options;
  const limit = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  /** The requests being served, to cancel one on notifications/cancelled (and every one at the end). */
  const running = new Map<string, AbortController>();

  const send = (message: JSONRPCResultResponse | JSONRPCErrorResponse) => {
    if (output.writable) output.write(`${JSON.stringify(message)}\n`);
  };
  /** Without a usable id (unparseable or invalid message) the error answer has none. */
  const fail = (id: RequestId | undefined, code: number, message: string) => send({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } });

  const methods: Record<string, (params: Params, signal: AbortSignal) => Promise<object> | object> = {
    initialize: (p): InitializeResult => {
      if (typeof p.protocolVersion !== 'string') throw new RpcError(INVALID_PARAMS, 'initialize: "protocolVersion" must be a string');
      if (!isObject(p.capabilities)) throw new RpcError(INVALID_PARAMS, 'initialize: "capabilities" must be an object');
      if (!isObject(p.clientInfo) || typeof p.clientInfo.name !== 'string' || typeof p.clientInfo.version !== 'string') {
        throw new RpcError(INVALID_PARAMS, 'initialize: "clientInfo" must have a name and a version');
      }
      const protocolVersion = MCP_PROTOCOL_VERSIONS.includes(p.protocolVersion) ? p.protocolVersion : MCP_PROTOCOL_VERSIONS[0]!;
      return { protocolVersion, capabilities: { tools: {} }, serverInfo: info };
    },
    ping: () => ({}),
    'tools/list': (): ListToolsResult => ({ tools: provider.definitions().map(toTool) }),
    'tools/call': async (p, signal): Promise<CallToolResult> => {
      const { name, arguments: args } = p;
      if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'tools/call: "name" must be a string');
      if (args !== undefined && !isObject(args)) throw new RpcError(INVALID_PARAMS, 'tools/call: "arguments" must be an object');
      if (!provider.definitions().some((d) => d.name === name)) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
      try {
        const result = await provider.call(name, args ?? {}, signal, () => undefined);
        return { content: result.content, ...(result.isError ? { isError: true } : {}) };
      } catch (error) {
        // A tool that fails is the model's to read, not a protocol error.
        return { content: [{ type: 'text', text: (error as Error).message }], isError: true };
      }
    },
  };

  const onRequest = async (id: RequestId, method: string, params: unknown) => {
    const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!handler) return fail(id, METHOD_NOT_FOUND, `Method not found: ${method}`);
    if (params !== undefined && !isObject(params)) return fail(id, INVALID_PARAMS, `${method}: "params" must be an object`);
    const key = idKey(id);
    if (running.has(key)) return fail(id, INVALID_REQUEST, `Request id ${JSON.stringify(id)} is already in use`);
    const abort = new AbortController();
    running.set(key, abort);
    try {
      const result = await handler(params ?? {}, abort.signal);
      // A cancelled request gets no answer (the client has stopped waiting for it).
      if (!abort.signal.aborted) send({ jsonrpc: '2.0', id, result: result as JSONRPCResultResponse['result'] });
    } catch (error) {
      if (abort.signal.aborted) return;
      if (error instanceof RpcError) fail(id, error.code, error.message);
      else fail(id, INTERNAL_ERROR, (error as Error).message);
    } finally {
      running.delete(key);
    }
  };

  const onNotification = (method: string, params: unknown) => {
    if (method !== 'notifications/cancelled' || !isObject(params) || !isRequestId(params.requestId)) return;
    running.get(idKey(params.requestId))?.abort();
  };

  const onLine = (line: string) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return fail(undefined, PARSE_ERROR, 'Parse error: the line is not JSON');
    }
    if (!isObject(message)) return fail(undefined, INVALID_REQUEST, Array.isArray(message) ? 'Batches are not supported' : 'Not a JSON-RPC message');
    const { id, method, params } = message;
    if (method === undefined && ('result' in message || 'error' in message)) return; // an answer: we ask nothing
    if (message.jsonrpc !== '2.0' || typeof method !== 'string' || (id !== undefined && !isRequestId(id))) {
      return fail(isRequestId(id) ? id : undefined, INVALID_REQUEST, 'Invalid request: needs "jsonrpc": "2.0", a "method" and a string or integer "id"');
    }
    if (id === undefined) onNotification(method, params);
    else void onRequest(id, method, params);
  };

  const splitter = new LineSplitter(limit, onLine, (bytes) => fail(undefined, INVALID_REQUEST, `Message of ${bytes} bytes refused: over the ${limit}-byte limit`));
  let stop!: () => void;
  const closed = new Promise<void>((resolve) => {
    stop = () => {
      for (const abort of running.values()) abort.abort();
      resolve();
    };
  });
  input.on('data', (chunk: Buffer) => splitter.push(chunk));
  input.on('end', () => {
    splitter.end();
    stop();
  });
  input.on('error', stop);
  output.on('error', stop);
  return { closed };
}
