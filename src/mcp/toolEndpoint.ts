/**
 * The extension's side of the IDE MCP server: host tools served over a private local socket (a Unix socket
 * in a 0700 folder, a named pipe on Windows) to the stdio bridge the agent starts (src/mcp/ideBridge.ts).
 * Every request needs the random bearer token. Two routes only — list the tools, call one — never an eval.
 * No vscode: the provider decides what the tools do.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdtempSync, promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerSecret, type Logger } from '../core/log';
import type { HostToolProvider, HostToolResult } from '../session/hostTools';

export const ENV_SOCKET = 'AGENT_HOST_IDE_SOCKET';
export const ENV_TOKEN = 'AGENT_HOST_IDE_TOKEN';
const MAX_BODY = 1024 * 1024;

export interface ToolEndpoint {
  readonly socketPath: string;
  readonly token: string;
  /** Settles when the socket listens (bridges started earlier retry nothing: they connect later anyway). */
  readonly ready: Promise<void>;
  /** The environment the bridge needs to reach this endpoint. */
  bridgeEnv(): Record<string, string>;
  close(): Promise<void>;
}

function privateSocketPath(): { socketPath: string; cleanup: () => Promise<void> } {
  const id = randomBytes(8).toString('hex');
  if (process.platform === 'win32') return { socketPath: `\\\\.\\pipe\\agent-host-ide-${id}`, cleanup: async () => undefined };
  // Unix socket paths are limited to ~104 bytes: fall back to /tmp when TMPDIR is deep.
  const base = os.tmpdir().length < 60 ? os.tmpdir() : '/tmp';
  const dir = mkdtempSync(path.join(base, 'agent-host-ide-'));
  chmodSync(dir, 0o700);
  return { socketPath: path.join(dir, 'ide.sock'), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const got = Buffer.from(header?.replace(/^Bearer\s+/i, '') ?? '');
  const want = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Starts serving `provider` and waits until it listens; `close()` stops it and removes the socket. */
export async function startToolEndpoint(provider: HostToolProvider, logger?: Pick<Logger, 'info' | 'warn'>): Promise<ToolEndpoint> {
  const endpoint = createToolEndpoint(provider, logger);
  await endpoint.ready;
  return endpoint;
}

/**
 * Starts serving `provider`. The socket path and token are known at once, so an agent started before the
 * socket listens still gets a working bridge configuration (the bridge connects only when the agent runs it).
 */
export function createToolEndpoint(provider: HostToolProvider, logger?: Pick<Logger, 'info' | 'warn'>): ToolEndpoint {
  const token = randomBytes(32).toString('hex');
  // It rides in session/new's mcpServers env: every redacted log line masks it.
  const forgetToken = registerSecret(token);
  const { socketPath, cleanup } = privateSocketPath();
  const server = http.createServer((req, res) => {
    if (!tokenMatches(req.headers.authorization, token)) return send(res, 401, { error: 'unauthorized' });
    if (req.method === 'GET' && req.url === '/tools') return send(res, 200, { tools: provider.definitions() });
    if (req.method !== 'POST' || req.url !== '/call') return send(res, 404, { error: 'not found' });
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    void (async () => {
      let result: HostToolResult;
      try {
        const body = (await readBody(req)) as { name?: unknown; arguments?: unknown };
        if (typeof body.name !== 'string') throw new Error('"name" must be a string');
        const args = body.arguments && typeof body.arguments === 'object' ? (body.arguments as Record<string, unknown>) : {};
        result = await provider.call(body.name, args, abort.signal, () => undefined);
      } catch (error) {
        result = { content: [{ type: 'text', text: (error as Error).message }], isError: true };
      }
      if (!abort.signal.aborted) send(res, 200, result);
    })();
  });
  const ready = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  }).then(async () => {
    if (process.platform !== 'win32') await fs.chmod(socketPath, 0o600);
    logger?.info(`IDE tools served to agents on ${socketPath}`);
  });
  return {
    socketPath,
    token,
    ready,
    bridgeEnv: () => ({ [ENV_SOCKET]: socketPath, [ENV_TOKEN]: token }),
    close: async () => {
      await ready.catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await cleanup();
      forgetToken();
    },
  };
}

/** The bridge's view of the endpoint: a HostToolProvider whose calls go over the socket. */
export async function connectToolEndpoint(socketPath: string, token: string): Promise<HostToolProvider> {
  const request = (method: 'GET' | 'POST', route: string, body?: unknown, signal?: AbortSignal) =>
    new Promise<unknown>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          socketPath,
          method,
          path: route,
          headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
          ...(signal ? { signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) return reject(new Error(`IDE endpoint answered ${res.statusCode}: ${text}`));
            try {
              resolve(JSON.parse(text));
            } catch (error) {
              reject(error as Error);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const { tools } = (await request('GET', '/tools')) as { tools: ReturnType<HostToolProvider['definitions']> };
  return {
    definitions: () => tools,
    call: async (name, args, signal) => (await request('POST', '/call', { name, arguments: args }, signal)) as HostToolResult,
  };
}
