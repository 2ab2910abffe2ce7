/**
 * The ACP SDK's reference server (`AcpServer` behind its Node HTTP and WebSocket upgrade handlers) on one `/acp`
 * endpoint, with a Bearer token check in front, putting a fresh local stdio agent behind each connection: what a
 * remote ACP agent looks like to our client. It can be killed (every socket cut, every agent killed) and brought
 * back on the same port, slowed down (each agent message held), and told to send something of its own to the
 * client next to the agent's messages. It records each request's Cookie header and sets an affinity cookie.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { WebSocketServer } from 'ws';

export interface AgentCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd: string;
}

export interface ReferenceServerOptions {
  token: string;
  agent: AgentCommand;
  /** Each agent→client message is held this long (a slow server). */
  delayMs?: number;
  port?: number;
}

type Message = Record<string, unknown>;

export class ReferenceServer {
  /** The Cookie header of every request (HTTP and upgrade) that passed the token check. */
  readonly cookies: (string | undefined)[] = [];
  /** Requests refused for their token. */
  refused = 0;
  readonly agents = new Set<ChildProcess>();
  delayMs: number;
  /** Called with each agent→client message; what it returns is sent instead (a list: each in turn). */
  rewrite: ((message: Message) => unknown[] | undefined) | undefined;
  private http: http.Server | undefined;
  private acp: { close(): Promise<void> } | undefined;
  private readonly sockets = new Set<Socket>();
  /** Open session event streams (Streamable HTTP `GET` with `Acp-Session-Id`). */
  private readonly sessionStreams = new Set<http.ServerResponse>();
  private port = 0;
  private ndJson: typeof import('@agentclientprotocol/sdk', { with: { 'resolution-mode': 'import' }}).ndJsonStream | undefined;

  private constructor(private readonly options: ReferenceServerOptions) {
    this.delayMs = options.delayMs ?? 0;
  }

  static async start(options: ReferenceServerOptions): Promise<ReferenceServer> {
    const server = new ReferenceServer(options);
    await server.listen(options.port ?? 0);
    return server;
  }

  url(scheme: 'ws' | 'http'): string {
    return `${scheme}://127.0.0.1:${this.port}/acp`;
  }

  /** Gone at once: every connection cut, every agent killed, nothing listening. */
  async kill(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await this.stopAgents();
    await new Promise<void>((resolve) => (this.http ? this.http.close(() => resolve()) : resolve()));
    this.http = undefined;
    await this.acp?.close().catch(() => undefined);
  }

  /** Ends every session event stream cleanly (as a proxy's idle timeout does); the connection stays. */
  endSessionStreams(): number {
    const n = this.sessionStreams.size;
    for (const res of this.sessionStreams) res.end();
    return n;
  }

  /** Back on the same port. */
  async revive(): Promise<void> {
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.kill();
  }

  private async listen(port: number): Promise<void> {
    const { AcpServer } = await import('@agentclientprotocol/sdk/experimental/server');
    const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import('@agentclientprotocol/sdk/experimental/node');
    this.ndJson = (await import('@agentclientprotocol/sdk')).ndJsonStream;
    const acp = new AcpServer({ createAgent: () => ({ connect: (stream: unknown) => this.connectAgent(stream as WebStreamPair) }) });
    this.acp = acp;
    const wss = new WebSocketServer({ noServer: true });
    wss.on('headers', (headers) => headers.push('Set-Cookie: lb=backend-7; Path=/; HttpOnly'));
    const handle = createNodeHttpHandler(acp);
    const upgrade = createNodeWebSocketUpgradeHandler(acp, wss as never);
    const allowed = (req: http.IncomingMessage) => {
      if (req.headers.authorization === `Bearer ${this.options.token}`) {
        this.cookies.push(req.headers.cookie);
        return true;
      }
      this.refused++;
      return false;
    };
    const server = http.createServer((req, res) => {
      if (!allowed(req)) {
        res.writeHead(401, { 'Content-Type': 'text/plain' }).end('bad token');
        return;
      }
      res.setHeader('Set-Cookie', 'lb=backend-7; Path=/; HttpOnly');
      if (req.method === 'GET' && req.headers['acp-session-id']) {
        this.sessionStreams.add(res);
        res.once('close', () => this.sessionStreams.delete(res));
      }
      handle(req, res);
    });
    server.on('upgrade', (req, socket, head) => {
      if (!allowed(req)) {
        socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      upgrade(req, socket, head);
    });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.http = server;
  }

  /** One connection: a fresh agent process, its NDJSON both ways, killed when the connection ends. */
  private connectAgent(stream: WebStreamPair): { closed: Promise<void> } {
    const ndJsonStream = this.ndJson!;
    const a = this.options.agent;
    const child = spawn(a.command, a.args, { cwd: a.cwd, env: a.env ?? process.env, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    this.agents.add(child);
    const closed = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    void closed.then(() => this.agents.delete(child));
    const agentSide = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>);
    void stream.readable
      .pipeTo(agentSide.writable as WritableStream<unknown>)
      .catch(() => undefined)
      .finally(() => stopGroup(child));
    const out = stream.writable.getWriter();
    void (async () => {
      const reader = agentSide.readable.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
          for (const m of this.rewrite?.(value as Message) ?? [value]) await out.write(m);
        }
        await out.close();
      } catch {
        stopGroup(child);
      }
    })();
    return { closed };
  }

  private async stopAgents(): Promise<void> {
    const all = [...this.agents];
    for (const child of all) stopGroup(child);
    await Promise.all(all.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
  }
}

type WebStreamPair = { readable: ReadableStream<unknown>; writable: WritableStream<unknown> };

/** SIGTERM to the agent's process group (codex-acp does not exit when its stdin closes), SIGKILL if it lingers. */
function stopGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  kill('SIGTERM');
  setTimeout(() => kill('SIGKILL'), 2000).unref();
}
