/**
 * The WebSocket transport: one JSON object per text frame, over `ws` (the browser WebSocket cannot send the
 * headers a service authenticates with). A `wss` service whose certificate no system CA signed is reached with
 * a CA file, or by pinning the certificate's SHA-256 fingerprint (checked in the TLS handshake, before the
 * request and its headers are sent). What goes wrong at connect is named: refused credentials, an untrusted
 * certificate (with its fingerprint), a host that does not answer.
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import * as tls from 'node:tls';
import WebSocket from 'ws';
import { Listeners } from '../core/listeners';
import type { CookieJar } from './cookies';
import type { Logger } from '../core/log';
import { FramingError, MAX_WRITE_BACKLOG_BYTES, type Disposable, type StreamReceiver } from '../core/ndjson';
import type { CloseReason, MessageTransport, TransportStats } from './transport';
import { ReadTurns } from './readTurns';

export interface WebSocketOptions {
  headers?: Record<string, string>;
  /** PEM text of a CA to trust besides the system's. */
  ca?: string;
  /** SHA-256 fingerprint (hex, colons optional) of the one certificate to accept, self-signed or not. */
  fingerprint?: string;
  /** How long the connection and upgrade may take (ms). */
  connectTimeoutMs?: number;
  /** A larger frame from the peer closes the connection (ws `maxPayload`). */
  maxFrameBytes?: number;
  /** How long a write may wait for the peer to read before it is reported stalled (ms; 0 = never). */
  writeStallMs?: number;
  /** Cookies sent with the upgrade and kept from its answer (a load balancer's pin). */
  cookies?: CookieJar;
  /** The peer speaks JSON-RPC: a batch (a JSON array) is answered with one -32600 error and not read, as the ACP SDK does. */
  jsonRpc?: boolean;
}

export type ConnectFailure = 'unauthorized' | 'untrusted_certificate' | 'unreachable' | 'rejected' | 'timeout';

/** Why a connection could not be made; `fingerprint` names an untrusted certificate. */
export class WebSocketConnectError extends Error {
  constructor(
    readonly kind: ConnectFailure,
    message: string,
    readonly status?: number,
    readonly fingerprint?: string,
  ) {
    super(message);
    this.name = 'WebSocketConnectError';
  }
}

const UNTRUSTED = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED']);

/** `AB:CD:…` upper case, whatever the spelling given. */
export function normalizeFingerprint(value: string): string {
  const hex = value.replace(/[^0-9a-fA-F]/g, '').toUpperCase();
  return hex.match(/.{2}/g)?.join(':') ?? '';
}

/** The certificate a TLS server presents, without trusting it: read only to name it or check it against a pin. */
function presented(url: string, timeoutMs: number): Promise<tls.PeerCertificate | undefined> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const servername = isIP(u.hostname) ? undefined : u.hostname;
    const socket = tls.connect({ host: u.hostname, port: Number(u.port || 443), ...(servername ? { servername } : {}), rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      resolve(cert?.raw ? cert : undefined);
    });
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

export async function peerFingerprint(url: string, timeoutMs = 5000): Promise<string | undefined> {
  return (await presented(url, timeoutMs))?.fingerprint256;
}

async function peerCertificate(url: string, timeoutMs: number): Promise<string | undefined> {
  const cert = await presented(url, timeoutMs);
  return cert ? new X509Certificate(cert.raw).toString() : undefined;
}

export class WebSocketTransport implements MessageTransport {
  readonly closed: Promise<CloseReason>;
  private readonly counts = { bytesIn: 0, bytesOut: 0, messagesIn: 0, messagesOut: 0, linesDropped: 0 };
  private readonly stalls = new Listeners<{ bytes: number; ms: number }>();
  private receiver: StreamReceiver | undefined;
  private settle!: (reason: CloseReason) => void;
  private stallTimer: ReturnType<typeof setInterval> | undefined;
  /** The frames that arrive before the event loop turns are one read (adjacent chunks merge). */
  private readonly reads = new ReadTurns();
  /** Why the socket failed (said in the close reason): a frame over the limit, a reset. */
  private failure: string | undefined;

  private constructor(
    private readonly socket: WebSocket,
    readonly url: string,
    private readonly logger: Logger,
    writeStallMs: number,
    private readonly jsonRpc: boolean,
    maxFrameBytes: number,
  ) {
    this.closed = new Promise((resolve) => (this.settle = resolve));
    socket.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    socket.on('close', (code, reason) => this.finish(`${this.failure ? `${this.failure}; ` : ''}${code}${reason.length ? ` ${reason.toString('utf8')}` : ''}`, code));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.failure = error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? `a message over the ${maxFrameBytes}-byte limit arrived` : error.message;
      this.logger.warn(`${this.url}: ${this.failure}`);
    });
    if (writeStallMs > 0) this.watchStalls(writeStallMs);
  }

  /** Opens the connection; rejects with a WebSocketConnectError that says what went wrong. */
  static async connect(url: string, logger: Logger, options: WebSocketOptions = {}): Promise<WebSocketTransport> {
    const pinned = options.fingerprint ? normalizeFingerprint(options.fingerprint) : undefined;
    // A pinned (self-signed) certificate is trusted as its own CA; the handshake then checks its fingerprint
    // before the request and its headers go out. The hostname is not checked: the pin names the certificate.
    const pinnedPem = pinned ? await peerCertificate(url, options.connectTimeoutMs ?? 15_000) : undefined;
    if (pinned && !pinnedPem) throw new WebSocketConnectError('unreachable', `cannot reach ${url} to check its certificate`);
    const maxFrameBytes = options.maxFrameBytes ?? 64 * 1024 * 1024;
    const headers = { ...(options.headers ?? {}) };
    const jar = options.cookies;
    const cookie = jar && cookieHeader(jar, headers);
    if (cookie) headers.Cookie = cookie;
    const socket = new WebSocket(url, {
      headers,
      handshakeTimeout: options.connectTimeoutMs ?? 15_000,
      maxPayload: maxFrameBytes,
      perMessageDeflate: false,
      ...(options.ca || pinnedPem ? { ca: [...(options.ca ? [options.ca] : []), ...(pinnedPem ? [pinnedPem] : [])] } : {}),
      ...(pinned
        ? {
            checkServerIdentity: (_host: string, cert: tls.PeerCertificate) =>
              normalizeFingerprint(cert.fingerprint256 ?? '') === pinned ? undefined : new Error(`the certificate is not the one accepted (SHA-256 ${cert.fingerprint256})`),
          }
        : {}),
    });
    return new Promise((resolve, reject) => {
      let done = false;
      const fail = (error: WebSocketConnectError) => {
        if (done) return;
        done = true;
        socket.terminate();
        reject(error);
      };
      socket.once('open', () => {
        if (done) return;
        done = true;
        resolve(new WebSocketTransport(socket, url, logger, options.writeStallMs ?? 60_000, options.jsonRpc === true, maxFrameBytes));
      });
      if (jar) socket.once('upgrade', (res) => jar.storeRaw(res.headers['set-cookie']));
      socket.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        if (status === 401 || status === 403) fail(new WebSocketConnectError('unauthorized', `${url} refused the credentials (HTTP ${status})`, status));
        else fail(new WebSocketConnectError('rejected', `${url} answered HTTP ${status} instead of opening a WebSocket`, status));
      });
      let erred = false;
      socket.once('error', (error: NodeJS.ErrnoException) => {
        erred = true;
        const code = error.code ?? '';
        if (UNTRUSTED.has(code) || /self[- ]signed|unable to verify|not the one accepted/i.test(error.message)) {
          void peerFingerprint(url).then((fp) =>
            fail(new WebSocketConnectError('untrusted_certificate', `the certificate of ${url} is not trusted (${error.message})${fp ? `; its SHA-256 fingerprint is ${fp}` : ''}`, undefined, fp)),
          );
        } else if (/timed out|timeout/i.test(error.message)) fail(new WebSocketConnectError('timeout', `${url} did not answer in time`));
        else fail(new WebSocketConnectError('unreachable', `cannot reach ${url}: ${error.message}`));
      });
      // After an error the error says why (naming an untrusted certificate takes a moment).
      socket.once('close', (code) => erred || fail(new WebSocketConnectError('rejected', `${url} closed the connection while opening it (${code})`)));
    });
  }

  get stats(): TransportStats {
    return { ...this.counts };
  }

  get writable(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  listen(receiver: StreamReceiver): Disposable {
    if (this.receiver) throw new Error('This transport already has a listener');
    this.receiver = receiver;
    return { dispose: () => (this.receiver = undefined) };
  }

  write(message: object): Promise<void> {
    if (!this.writable) return Promise.reject(new Error(`the connection to ${this.url} is closed`));
    if (this.socket.bufferedAmount > MAX_WRITE_BACKLOG_BYTES) return Promise.reject(new Error(`${this.url} reads nothing: ${this.socket.bufferedAmount} bytes wait to be sent`));
    const text = JSON.stringify(message);
    this.counts.bytesOut += Buffer.byteLength(text);
    this.counts.messagesOut++;
    return new Promise((resolve, reject) => this.socket.send(text, (error) => (error ? reject(error) : resolve())));
  }

  close(): Promise<CloseReason> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(1000, 'closed by the client');
    // A peer that does not answer the close handshake is cut.
    const cut = setTimeout(() => this.socket.terminate(), 2000);
    return this.closed.finally(() => clearTimeout(cut));
  }

  onStall(listener: (waitingBytes: number, ms: number) => void): () => void {
    return this.stalls.add(({ bytes, ms }) => listener(bytes, ms));
  }

  private onFrame(data: WebSocket.RawData, isBinary: boolean): void {
    // ws hands a Buffer (a list of them when fragmented): read it as is, not a copy per frame.
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    this.counts.bytesIn += buffer.length;
    const receiver = this.receiver;
    if (!receiver) return;
    this.reads.begin(receiver, () => this.receiver);
    const text = buffer.toString('utf8');
    let value: unknown;
    try {
      value = isBinary ? undefined : JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      this.counts.messagesIn++;
      receiver.message(value);
    } else if (Array.isArray(value) && this.jsonRpc) {
      // ACP has no batches: answered as the SDK answers one, never handed on.
      this.counts.linesDropped++;
      receiver.malformed(new FramingError('a JSON-RPC batch (a JSON array; ACP has none): answered with -32600', text.slice(0, 200)));
      void this.write({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'JSON-RPC batches are not supported' } }).catch(() => undefined);
    } else {
      this.counts.linesDropped++;
      receiver.malformed(new FramingError(isBinary ? 'a binary frame (only JSON text frames are read)' : 'a frame that is not a JSON object', text.slice(0, 200)));
    }
  }

  private finish(how: string, code: number): void {
    if (this.stallTimer) clearInterval(this.stallTimer);
    this.receiver?.end?.();
    this.settle({ code: code === 1000 ? 0 : code, signal: null, disconnected: how, stderrTail: '' });
  }

  /** Reports a peer that takes nothing of what waits for it for `ms`. */
  private watchStalls(ms: number): void {
    let since: number | undefined;
    this.stallTimer = setInterval(
      () => {
        const waiting = this.socket.bufferedAmount;
        if (waiting === 0) since = undefined;
        else if (since === undefined) since = Date.now();
        else if (Date.now() - since >= ms) {
          this.stalls.fire({ bytes: waiting, ms });
          since = Date.now();
        }
      },
      Math.min(ms, 1000),
    );
    this.stallTimer.unref();
  }
}

/** The `Cookie` header: the jar's cookies, with the caller's own (by any spelling of the header's name) winning. */
function cookieHeader(jar: CookieJar, headers: Record<string, string>): string | undefined {
  const own = Object.keys(headers).find((k) => k.toLowerCase() === 'cookie');
  const merged = new Headers(own ? { Cookie: headers[own]! } : {});
  if (own) delete headers[own];
  jar.apply(merged);
  return merged.get('Cookie') ?? undefined;
}

/** The fingerprint of a PEM certificate (to accept a certificate file the user has). */
export function fingerprintOf(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}
