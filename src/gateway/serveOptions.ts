/**
 * `agent-host serve`'s own options: where it listens (loopback unless --allow-remote) and its limits, each with
 * a default a team server can live with. Every mistake is an Error that names the option (the CLI exits 2).
 */
import { isIP } from 'node:net';

export const SERVE_USAGE = `Usage: agent-host serve --listen HOST:PORT [agent] [--cwd DIR] [--allow-remote] [limits]

Exposes a local stdio ACP agent over ACP's remote transport (one /acp endpoint: Streamable HTTP and
WebSocket). Prints its URL (http://HOST:PORT/acp) as the first line on stdout once listening (port 0: a
free one). Every connection gets a fresh agent process, stopped with its whole process group when the
connection ends, is deleted (DELETE), idles too long, or the gateway stops (SIGTERM, SIGINT). One line per
connection on stderr when it ends.

Agent (one of): --config FILE [--agent NAME] | --command CMD [--arg ARG…] [--env K=V…] | -- CMD [ARG…]
                (ACP agents only)

Options:
  --listen HOST:PORT      where to listen (required); 127.0.0.1:0 picks a free port
  --allow-remote          allow a non-loopback address (0.0.0.0, a LAN address); plain HTTP, so put a
                          TLS proxy in front of it
  --cwd DIR               the agents' working folder (default: the current directory)
  --sandbox MODE          workspace-write (default: each agent writes only in --cwd, temp and its own
                          folders) or read-only; every agent serve starts runs in the sandbox
  --no-sandbox            start the agents unsandboxed, as you (serve refuses to otherwise: a server
                          must not hand a remote client the machine)
  --max-connections N     connections (agent processes) at once (default 8); more get 503
  --max-message-bytes N   largest message from a client (default 16777216, 16 MiB); a larger POST gets
                          413, a larger WebSocket frame closes the socket with 1009
  --idle-timeout S        a connection with no message either way for S seconds is closed and its agent
                          stopped (default 1800)
  --log-level LEVEL       trace|debug|info|warn|error|off for stderr (default warn)

The token: ACP_REMOTE_TOKEN in the environment (never a flag); every request must carry
"Authorization: Bearer <token>" (else 401). Without it serve exits 2.`;

export interface ServeLimits {
  maxConnections: number;
  maxMessageBytes: number;
  idleTimeoutMs: number;
}

export const DEFAULT_LIMITS: ServeLimits = { maxConnections: 8, maxMessageBytes: 16 * 1024 * 1024, idleTimeoutMs: 30 * 60 * 1000 };

export interface ListenAddress {
  /** As given, without brackets (an IPv6 address, a name, an IPv4 address). */
  host: string;
  port: number;
  loopback: boolean;
}

/** `HOST:PORT` or `[IPv6]:PORT`; loopback: 127.0.0.0/8, ::1, localhost. */
export function parseListen(value: string): ListenAddress {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(value) ?? /^([^:[\]]+):(\d+)$/.exec(value);
  if (!m) throw new Error(`--listen expects HOST:PORT (or [IPv6]:PORT), got "${value}"`);
  const host = m[1]!;
  const port = Number(m[2]);
  if (!(port >= 0 && port <= 65535)) throw new Error(`--listen: port ${m[2]} is out of range (0-65535)`);
  if (m[0].startsWith('[') && isIP(host) !== 6) throw new Error(`--listen: "${host}" is not an IPv6 address`);
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  return { host, port, loopback };
}

function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, got "${value}"`);
  return n;
}

/** The serve options from parsed flags: the address (refused off loopback without --allow-remote) and the limits. */
export function serveSettings(values: {
  listen?: string | undefined;
  'allow-remote'?: boolean | undefined;
  'max-connections'?: string | undefined;
  'max-message-bytes'?: string | undefined;
  'idle-timeout'?: string | undefined;
}): {
  listen: ListenAddress;
  limits: ServeLimits;
} {
  if (!values.listen) throw new Error('give --listen HOST:PORT (e.g. 127.0.0.1:0)');
  const listen = parseListen(values.listen);
  if (!listen.loopback && !values['allow-remote']) {
    throw new Error(`--listen ${values.listen} is not a loopback address: anyone who can reach it could try the token; give --allow-remote to serve there (and put TLS in front of it)`);
  }
  return {
    listen,
    limits: {
      maxConnections: positiveInteger('--max-connections', values['max-connections'], DEFAULT_LIMITS.maxConnections),
      maxMessageBytes: positiveInteger('--max-message-bytes', values['max-message-bytes'], DEFAULT_LIMITS.maxMessageBytes),
      idleTimeoutMs: positiveInteger('--idle-timeout', values['idle-timeout'], DEFAULT_LIMITS.idleTimeoutMs / 1000) * 1000,
    },
  };
}
