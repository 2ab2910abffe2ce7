/**
 * A remote ACP agent (an entry with `url`): the same JSON-RPC as over stdio, carried by the transport the URL's
 * scheme names — `ws(s)://` a WebSocket (one message per text frame), `http(s)://` Streamable HTTP. The token
 * goes as `Authorization: Bearer`; cookies the server sets are kept for the entry (a load balancer's pin); a CA
 * file may be named per entry. What goes wrong is said as the person can act on it: a refused token
 * (TokenRefusedError, `onKeyRefused` called), an untrusted certificate; a server that cannot be reached counts
 * as an agent that went away (the lifecycle tries again with its backoff).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AgentExitedError } from '../core/agentProcess';
import { DEFAULT_MAX_LINE_BYTES } from '../core/ndjson';
import type { AgentConfig } from '../session/agentConfig';
import { TokenRefusedError, type AgentStartOptions } from '../session/sessionHost';
import { cookieJarFor } from '../transport/cookies';
import { HttpStreamTransport } from '../transport/httpStream';
import type { MessageTransport } from '../transport/transport';
import { WebSocketConnectError, WebSocketTransport } from '../transport/webSocket';

type RemoteOptions = Pick<AgentStartOptions, 'logger' | 'cwd' | 'apiKey' | 'headers' | 'onKeyRefused' | 'onUntrustedCertificate' | 'maxLineBytes' | 'writeStallMs'>;

/** The entry names a remote ACP agent (its `url`) rather than a command to spawn. */
export function isRemoteAcp(config: AgentConfig): config is AgentConfig & { url: string } {
  return (config.protocol ?? 'acp') === 'acp' && typeof config.url === 'string';
}

/** A failure that says the agent is away for now (not a wrong setting): started again after the backoff. */
function away(message: string): AgentExitedError {
  return new AgentExitedError({ code: null, signal: null, disconnected: message, stderrTail: '' });
}

/** Opens the transport the entry's URL names (a WebSocket is connected now; Streamable HTTP on `initialize`). */
export async function connectRemote(config: AgentConfig & { url: string }, options: RemoteOptions): Promise<MessageTransport> {
  const url = config.url;
  const headers: Record<string, string> = { ...(options.headers ?? {}), ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}) };
  const ca = config.tls?.ca ? readFileSync(path.resolve(options.cwd, config.tls.ca), 'utf8') : undefined;
  const cookies = cookieJarFor(config.name, url);
  const maxBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (/^https?:/.test(url)) return HttpStreamTransport.open(url, options.logger, { headers, cookies, maxMessageBytes: maxBytes, ...(ca ? { ca } : {}) });
  try {
    return await WebSocketTransport.connect(url, options.logger, {
      headers,
      cookies,
      jsonRpc: true,
      maxFrameBytes: maxBytes,
      ...(ca ? { ca } : {}),
      ...(config.tls?.fingerprint ? { fingerprint: config.tls.fingerprint } : {}),
      ...(options.writeStallMs !== undefined ? { writeStallMs: options.writeStallMs } : {}),
    });
  } catch (error) {
    if (!(error instanceof WebSocketConnectError)) throw error;
    if (error.kind === 'unauthorized') throw refused(config, options, error.message);
    // The host may offer to pin it (wss:// only: the fingerprint goes in the entry's tls).
    if (error.kind === 'untrusted_certificate' && error.fingerprint) options.onUntrustedCertificate?.(error.fingerprint);
    if (error.kind === 'unreachable' || error.kind === 'timeout' || (error.status ?? 0) >= 500) throw away(error.message);
    throw error;
  }
}

/** What a start that failed on a remote transport failed with: the refused token or untrusted certificate it met, else `error`. */
export function remoteStartFailure(config: AgentConfig, options: RemoteOptions, transport: MessageTransport, error: unknown): unknown {
  const failure = transport instanceof HttpStreamTransport ? transport.failure : undefined;
  if (failure?.kind === 'unauthorized') return refused(config, options, failure.message);
  if (failure?.kind === 'untrusted_certificate') return new Error(failure.message);
  return error;
}

function refused(config: AgentConfig, options: RemoteOptions, detail: string): TokenRefusedError {
  options.logger.warn(`Remote agent "${config.name}" refused the token: ${detail}`);
  options.onKeyRefused?.();
  return new TokenRefusedError(config.name, detail);
}
