/**
 * The Streamable HTTP transport (the ACP remote-transport RFD: `POST` for our messages, the answers and the
 * agent's messages on SSE streams from `GET`, `DELETE` to end): the ACP SDK's client carries the frames, our
 * JSON-RPC engine stays on top. Requests go through Node's http/https (not the global fetch): a CA per entry,
 * TLS errors with their codes, no body timeout on a long quiet event stream. What ends the connection is
 * named: a refused token (401/403), a connection the server no longer knows (404/410), a server that cannot be
 * reached, an untrusted certificate, a message over the size limit.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { Readable } from 'node:stream';
import { Listeners } from '../core/listeners';
import type { Logger } from '../core/log';
import { FramingError, type Disposable, type StreamReceiver } from '../core/ndjson';
import type { CookieJar } from './cookies';
import type { CloseReason, MessageTransport, TransportStats } from './transport';
import { ReadTurns } from './readTurns';
import { peerFingerprint } from './webSocket';

export interface HttpStreamOptions {
  headers?: Record<string, string>;
  /** PEM text of a CA to trust besides the system's. */
  ca?: string;
  /** Kept across requests (and reconnects): a load balancer's pin. */
  cookies?: CookieJar;
  /** A larger message from the server ends the connection. */
  maxMessageBytes?: number;
}

export type HttpFailure = 'unauthorized' | 'gone' | 'unreachable' | 'untrusted_certificate' | 'too_large' | 'closed';

/** Why the connection ended, by kind (`unauthorized`: the token was refused). */
export class HttpStreamError extends Error {
  constructor(
    readonly kind: HttpFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'HttpStreamError';
  }
}

const UNTRUSTED = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)|ERR_TLS_CERT_ALTNAME_INVALID/;
/** What the SDK answers a session request with when that session's event stream ended under it. */
const SESSION_STREAM_CLOSED = 'ACP session SSE stream closed';

type SdkStream = { readable: ReadableStream<object>; writable: WritableStream<object> };

/** A `fetch` over Node's http/https with one keep-alive agent (and the entry's CA); `received` counts the bytes of each body. */
function nodeFetch(agent: http.Agent, received: (bytes: number) => void): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const headers: Record<string, string> = {};
      for (const [name, value] of new Headers(init.headers)) headers[name] = value;
      const request = (url.protocol === 'https:' ? https : http).request(url, { method: init.method ?? 'GET', headers, agent }, (res) => {
        const h = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode ?? 0;
        const empty = status === 204 || status === 205 || status === 304;
        if (empty) res.resume();
        res.on('data', (chunk: Buffer) => received(chunk.length));
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage ?? '', headers: h }));
      });
      const signal = init.signal;
      const abort = () => request.destroy(Object.assign(new Error('aborted'), { name: 'AbortError' }));
      if (signal?.aborted) abort();
      signal?.addEventListener('abort', abort, { once: true });
      request.once('close', () => signal?.removeEventListener('abort', abort));
      request.once('error', reject);
      request.end(typeof init.body === 'string' ? init.body : undefined);
    });
}

export class HttpStreamTransport implements MessageTransport {
  readonly closed: Promise<CloseReason>;
  /** What ended the connection, when it was not our close. */
  failure: HttpStreamError | undefined;
  private readonly counts = { bytesIn: 0, bytesOut: 0, messagesIn: 0, messagesOut: 0, linesDropped: 0 };
  private readonly stalls = new Listeners<{ bytes: number; ms: number }>();
  private readonly stream: SdkStream;
  private readonly writer: WritableStreamDefaultWriter<object>;
  private receiver: StreamReceiver | undefined;
  private settle!: (reason: CloseReason) => void;
  private done = false;
  private closing = false;
  private readonly reads = new ReadTurns();
  /** A post failed: the connection is ending (the read side says why). */
  private broken = false;

  private constructor(
    stream: (received: (bytes: number) => void) => SdkStream,
    readonly url: string,
    private readonly logger: Logger,
    private readonly agent: http.Agent,
  ) {
    this.closed = new Promise((resolve) => (this.settle = resolve));
    this.stream = stream((bytes) => (this.counts.bytesIn += bytes));
    this.writer = this.stream.writable.getWriter();
    this.writer.closed.catch(() => undefined);
  }

  /** The transport to `url`; nothing is sent until the first message (which must be `initialize`). */
  static async open(url: string, logger: Logger, options: HttpStreamOptions = {}): Promise<HttpStreamTransport> {
    // ESM only: loaded at run time from CommonJS (esbuild bundles it).
    const { createHttpStream } = await import('@agentclientprotocol/sdk/experimental/http-client');
    const agent = url.startsWith('https:') ? new https.Agent({ keepAlive: true, ...(options.ca ? { ca: options.ca } : {}) }) : new http.Agent({ keepAlive: true });
    const stream = (received: (bytes: number) => void) =>
      createHttpStream(url, {
        fetch: nodeFetch(agent, received),
        headers: options.headers ?? {},
        ...(options.cookies ? { cookieStore: options.cookies } : {}),
        ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
      }) as unknown as SdkStream;
    return new HttpStreamTransport(stream, url, logger, agent);
  }

  get stats(): TransportStats {
    return { ...this.counts };
  }

  get writable(): boolean {
    return !this.done && !this.closing && !this.broken;
  }

  listen(receiver: StreamReceiver): Disposable {
    if (this.receiver) throw new Error('This transport already has a listener');
    this.receiver = receiver;
    void this.pump(receiver);
    return { dispose: () => (this.receiver = undefined) };
  }

  write(message: object): Promise<void> {
    if (!this.writable) return Promise.reject(new Error(`the connection to ${this.url} is closed`));
    const text = JSON.stringify(message);
    this.counts.bytesOut += Buffer.byteLength(text);
    this.counts.messagesOut++;
    // The SDK posts in order; a failed post ends the connection (the read side says why), so the request
    // that made it waits for the close reason instead of failing on its own.
    return this.writer.write(message).catch((error: unknown) => {
      this.broken = true;
      throw error;
    });
  }

  /** Ends the connection (`DELETE`); settles with a clean close. */
  async close(): Promise<CloseReason> {
    if (!this.done && !this.closing) {
      this.closing = true;
      await this.writer.close().catch(() => undefined);
      this.finish({ code: 0, signal: null, disconnected: 'closed by the client', stderrTail: '' });
    }
    return this.closed;
  }

  /** Writes are posted, never queued behind a reader: nothing stalls here. */
  onStall(listener: (waitingBytes: number, ms: number) => void): () => void {
    return this.stalls.add(({ bytes, ms }) => listener(bytes, ms));
  }

  private async pump(receiver: StreamReceiver): Promise<void> {
    const reader = this.stream.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const error = (value as { error?: { message?: string; data?: unknown } }).error;
        // The server ended the event stream a request waits on: the connection counts as dropped (the lifecycle
        // reconnects and reattaches), not as one failed request.
        if (error?.message === SESSION_STREAM_CLOSED && error.data === undefined) throw new HttpStreamError('closed', `${this.url} ended the session's event stream`);
        this.counts.messagesIn++;
        if (this.receiver !== receiver) continue;
        this.reads.begin(receiver, () => this.receiver);
        if (value && typeof value === 'object' && !Array.isArray(value)) receiver.message(value);
        else receiver.malformed(new FramingError('a message that is not a JSON object', JSON.stringify(value).slice(0, 200)));
      }
      if (!this.closing) this.fail(new HttpStreamError('closed', `${this.url} ended the connection`));
    } catch (error) {
      if (!this.closing) this.fail(await this.describe(error));
    }
    receiver.end?.();
  }

  private fail(error: HttpStreamError): void {
    this.failure = error;
    this.logger.warn(error.message);
    // Ours to end: the SDK deletes the connection it still knows.
    void this.writer.abort(error).catch(() => undefined);
    this.finish({ code: null, signal: null, disconnected: error.message, stderrTail: '' });
  }

  private finish(reason: CloseReason): void {
    if (this.done) return;
    this.done = true;
    this.agent.destroy();
    this.settle(reason);
  }

  /** The SDK's or the network's error, said as what the person can act on. */
  private async describe(error: unknown): Promise<HttpStreamError> {
    if (error instanceof HttpStreamError) return error;
    const e = error as Error & { status?: number; code?: string; maxMessageBytes?: number };
    const status = typeof e.status === 'number' ? e.status : undefined;
    if (status === 401 || status === 403) return new HttpStreamError('unauthorized', `${this.url} refused the token (HTTP ${status})`, status);
    if (status === 404 || status === 410) return new HttpStreamError('gone', `the connection to ${this.url} is gone (HTTP ${status}: the server no longer knows it)`, status);
    if (e.name === 'MessageTooLargeError') return new HttpStreamError('too_large', `${this.url} sent a message over the ${e.maxMessageBytes}-byte limit`);
    if (status) return new HttpStreamError('closed', `${this.url} answered HTTP ${status}: ${e.message}`, status);
    if (UNTRUSTED.test(e.code ?? '')) {
      const fp = await peerFingerprint(this.url).catch(() => undefined);
      return new HttpStreamError(
        'untrusted_certificate',
        `the certificate of ${this.url} is not trusted (${e.code}: ${e.message})${fp ? `; its SHA-256 fingerprint is ${fp}` : ''}; name its CA in the entry's "tls.ca"`,
      );
    }
    return new HttpStreamError('unreachable', `cannot reach ${this.url}: ${e.code ? `${e.code} ` : ''}${e.message}`);
  }
}
