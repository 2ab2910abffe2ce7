/**
 * The gateway behind `agent-host serve`: one `/acp` endpoint speaking ACP's remote transport: Streamable HTTP
 * through the SDK's reference server (AcpServer with its Node adapter), WebSocket bridged straight to the agent
 * (SocketLink, `ws` in noServer mode). In front of both, ours: the bearer token on every request and upgrade,
 * the connection limit, the paths; behind them, a fresh agent process per connection. Each refusal is said to
 * the client: an HTTP status with a short text, or a WebSocket close code with a reason.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AcpServer } from '@agentclientprotocol/sdk/experimental/server' with { 'resolution-mode': 'import' };
import type { AgentSpawnSpec } from '../core/agentProcess';
import { redact, type Logger } from '../core/log';
import { AgentLink, type AgentLinkOptions, type Link, type MessageStream } from './agentLink';
import type { ListenAddress, ServeLimits } from './serveOptions';
import { SocketLink } from './socketLink';

export interface GatewayOptions {
  /** The agent's name, for the log line. */
  agentName: string;
  /** How each connection's agent is started (its environment already without the token). */
  spawn: AgentSpawnSpec;
  token: string;
  listen: ListenAddress;
  limits: ServeLimits;
  logger: Logger;
  /** The line said for each connection when it ends. */
  report: (line: string) => void;
}

export interface Gateway {
  /** `http://HOST:PORT/acp`, with the real port. */
  readonly url: string;
  /** Connections with a live agent. */
  readonly connections: number;
  /** Stops listening, ends every connection and waits until every agent process group is gone. */
  close(): Promise<void>;
}

const HEADER_CONNECTION_ID = 'acp-connection-id';
/** Close code for a connection closed for its idle time (4000-4999: the application's own). */
const IDLE_CLOSE_CODE = 4000;
/** How many ended HTTP connection ids are remembered, to answer their late requests with 410 and why. */
const GONE_REMEMBERED = 1000;

/** One client connection: who, over what, its agent, and why it ended (the first reason set wins). */
class Connection {
  link: Link | undefined;
  ws: WebSocket | undefined;
  acpId: string | undefined;
  reason: string | undefined;
  constructor(
    readonly peer: string,
    readonly transport: 'http' | 'websocket',
  ) {}
}

/** An HTTP status, its text and any headers besides. */
type Refusal = [number, string, Record<string, string>?];

/** Constant-time: both sides are hashed first, so neither the length nor a prefix of the token leaks. */
function tokenMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  if (given === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}

function peerOf(req: http.IncomingMessage): string {
  const { remoteAddress: a, remotePort: p } = req.socket;
  return a?.includes(':') ? `[${a}]:${p}` : `${a}:${p}`;
}

/** An HTTP answer written on a socket not yet upgraded (a refused WebSocket upgrade). */
function refuseUpgrade(socket: Duplex, [status, text, headers = {}]: Refusal): void {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n${extra.join('')}\r\n${text}`);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export async function startGateway(o: GatewayOptions): Promise<Gateway> {
  const { AcpServer: Server, DEFAULT_MAX_BUFFERED_BYTES } = await import('@agentclientprotocol/sdk/experimental/server');
  const { createNodeHttpHandler } = await import('@agentclientprotocol/sdk/experimental/node');
  const { limits, logger } = o;
  const current = new AsyncLocalStorage<Connection>();
  const live = new Set<Connection>();
  /** New connections admitted whose agent is not started yet (an initialize POST still being read). */
  const pending = new Set<Connection>();
  const byAcpId = new Map<string, Connection>();
  const gone = new Map<string, string>();
  let stopping = false;

  const ended = (conn: Connection) => {
    const link = conn.link!;
    live.delete(conn);
    if (conn.acpId) {
      byAcpId.delete(conn.acpId);
      gone.set(conn.acpId, conn.reason ?? 'the agent exited');
      if (gone.size > GONE_REMEMBERED) gone.delete(gone.keys().next().value!);
    }
    const c = link.counts;
    const why = conn.reason ?? `the agent ended (${link.exit ?? 'exited'})`;
    o.report(
      redact(
        `connection ended: peer ${conn.peer}, agent ${o.agentName} (pid ${link.pid ?? '-'}), ${conn.transport}, ${seconds(Date.now() - link.started)}, messages ${c.messagesIn} in / ${c.messagesOut} out, bytes ${c.bytesIn} in / ${c.bytesOut} out; ${why}`,
      ),
    );
  };

  const idleReason = `closed after ${limits.idleTimeoutMs / 1000} s without traffic (--idle-timeout)`;
  // What ends a connection on our side (idle time, the gateway stopping): the client is told, the agent stopped.
  const endConnection = (conn: Connection, reason: string, wsCode: number) => {
    conn.reason ??= reason;
    conn.ws?.close(wsCode, reason.slice(0, 120));
    if (conn.acpId && !conn.ws) void server.handleRequest(new Request('http://gateway/acp', { method: 'DELETE', headers: { [HEADER_CONNECTION_ID]: conn.acpId } }));
    void conn.link?.stop();
  };

  /** The options of a connection's agent link, and the link kept as the connection's once made. */
  const linkOptions = (conn: Connection): AgentLinkOptions => ({
    logger,
    maxMessageBytes: limits.maxMessageBytes,
    idleTimeoutMs: limits.idleTimeoutMs,
    onIdle: () => endConnection(conn, idleReason, IDLE_CLOSE_CODE),
  });
  const adopt = <L extends Link>(conn: Connection, link: L): L => {
    conn.link = link;
    live.add(conn);
    void link.ended.then(() => ended(conn));
    return link;
  };

  const server: AcpServer = new Server({
    // Called as the SDK creates a connection, inside the request that asked for it (see `current`).
    createAgent: () => ({
      connect: (stream: MessageStream) => {
        const conn = current.getStore();
        if (!conn) throw new Error('a gateway connection was created outside a request');
        pending.delete(conn);
        const link = adopt(conn, new AgentLink(o.spawn, stream, linkOptions(conn)));
        return { closed: link.ended };
      },
    }),
    // The SDK holds what the client has not read up to this; a message must fit in it with room to spare.
    maxBufferedBytes: Math.max(DEFAULT_MAX_BUFFERED_BYTES, 4 * limits.maxMessageBytes),
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes });
  const httpHandler = createNodeHttpHandler(server, { maxRequestBodyBytes: limits.maxMessageBytes });
  // The 101 answer names the connection, as the RFD asks (`Acp-Connection-Id`).
  const upgradeIds = new WeakMap<http.IncomingMessage, string>();
  wss.on('headers', (headers: string[], req: http.IncomingMessage) => {
    const id = upgradeIds.get(req);
    if (id) headers.push(`Acp-Connection-Id: ${id}`);
  });
  const acceptSocket = (conn: Connection, ws: WebSocket) => {
    watchSocket(conn, ws);
    adopt(conn, new SocketLink(o.spawn, ws, linkOptions(conn)));
  };

  const watchSocket = (conn: Connection, ws: WebSocket) => {
    conn.ws = ws;
    // `ws` closes an oversized frame's socket with 1009 and no reason: the reason says which limit.
    const close = ws.close.bind(ws);
    ws.close = (code?: number, reason?: string | Buffer) => {
      if (code === 1009 && !reason) {
        reason = `message over ${limits.maxMessageBytes} bytes (--max-message-bytes)`;
        conn.reason ??= `a message over ${limits.maxMessageBytes} bytes`;
      }
      close(code, reason);
    };
    ws.once('close', (code: number, reason: Buffer) => {
      // Closed because the agent ended: the log line says how it ended instead.
      if (!conn.link?.exit) conn.reason ??= `WebSocket closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`;
    });
  };

  /** The refusals before the SDK sees a request: the path, the token, the connection limit; undefined lets it through. */
  const refusal = (req: http.IncomingMessage, opensConnection: boolean): Refusal | undefined => {
    if (new URL(req.url ?? '/', 'http://gateway').pathname !== '/acp') return [404, 'Not found: the ACP endpoint is /acp'];
    if (!tokenMatches(req.headers.authorization, o.token)) {
      logger.warn(`Refused ${req.method} from ${peerOf(req)}: ${req.headers.authorization ? 'wrong token' : 'no token'}`);
      return [401, 'Unauthorized: send "Authorization: Bearer <token>" with the token the gateway was started with', { 'WWW-Authenticate': 'Bearer' }];
    }
    if (stopping) return [503, 'The gateway is stopping'];
    if (opensConnection && live.size + pending.size >= limits.maxConnections) {
      logger.warn(`Refused a connection from ${peerOf(req)}: ${live.size + pending.size} of ${limits.maxConnections} open`);
      return [503, `Too many connections: the gateway serves ${limits.maxConnections} at once (--max-connections); try again later`, { 'Retry-After': '10' }];
    }
    const id = req.headers[HEADER_CONNECTION_ID];
    // Ended, or ending (deleted or idle, its agent still going away: the SDK has forgotten it already).
    const why = typeof id === 'string' ? (gone.get(id) ?? byAcpId.get(id)?.reason) : undefined;
    return why ? [410, `This connection has ended: ${why}`] : undefined;
  };

  const httpServer = http.createServer((req, res) => {
    const opens = req.method === 'POST' && req.headers[HEADER_CONNECTION_ID] === undefined;
    const refused = refusal(req, opens);
    if (refused) {
      const [status, text, headers] = refused;
      res.writeHead(status, { 'Content-Type': 'text/plain', ...headers });
      res.end(text);
      return;
    }
    const id = req.headers[HEADER_CONNECTION_ID];
    const known = typeof id === 'string' ? byAcpId.get(id) : undefined;
    if (known && req.method === 'DELETE') known.reason ??= 'the client deleted it (DELETE)';
    if (!opens) return httpHandler(req, res);
    const conn = new Connection(peerOf(req), 'http');
    pending.add(conn);
    res.once('close', () => {
      pending.delete(conn);
      const acpId = res.getHeader(HEADER_CONNECTION_ID);
      if (conn.link && typeof acpId === 'string' && live.has(conn)) {
        conn.acpId = acpId;
        byAcpId.set(acpId, conn);
      }
    });
    current.run(conn, () => httpHandler(req, res));
  });

  httpServer.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const refused = refusal(req, true);
    if (refused) return refuseUpgrade(socket, refused);
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') return refuseUpgrade(socket, [400, 'Only WebSocket upgrades are served here']);
    const conn = new Connection(peerOf(req), 'websocket');
    upgradeIds.set(req, randomUUID());
    wss.handleUpgrade(req, socket, head, (ws) => acceptSocket(conn, ws));
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(o.listen.port, o.listen.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as { port: number }).port;
  const host = o.listen.host.includes(':') ? `[${o.listen.host}]` : o.listen.host;

  return {
    url: `http://${host}:${port}/acp`,
    get connections() {
      return live.size;
    },
    async close() {
      stopping = true;
      httpServer.close();
      const links = [...live].map((c) => c.link!.ended);
      for (const conn of live) endConnection(conn, 'the gateway stopped', 1001);
      await server.close();
      await Promise.all(links);
      httpServer.closeAllConnections();
      wss.close();
    },
  };
}
