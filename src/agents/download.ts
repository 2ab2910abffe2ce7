/**
 * Downloads one URL to a file over http/https: redirects followed (up to 10), streamed to disk with the
 * sha256 computed on the way, progress by bytes, cancellable with an AbortSignal. A failed or cancelled
 * download removes its partial file.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

export interface DownloadProgress {
  received: number;
  /** From Content-Length, when the server sent one. */
  total?: number;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
  maxRedirects?: number;
}

/** Resolves with the file's sha256 (hex) and size; rejects with an Error naming the URL. */
export async function downloadFile(url: string, file: string, opts: DownloadOptions = {}): Promise<{ sha256: string; bytes: number }> {
  try {
    return await fetchTo(url, file, opts, opts.maxRedirects ?? 10);
  } catch (e) {
    fs.rmSync(file, { force: true });
    throw e;
  }
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason as unknown;
  return reason instanceof Error ? reason : new Error('cancelled');
}

function fetchTo(url: string, file: string, opts: DownloadOptions, redirectsLeft: number): Promise<{ sha256: string; bytes: number }> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.reject(new Error(`not a URL: ${url}`));
  }
  const get = parsed.protocol === 'https:' ? https.get : parsed.protocol === 'http:' ? http.get : undefined;
  if (!get) return Promise.reject(new Error(`${url}: only http and https downloads are supported`));
  return new Promise((resolve, reject) => {
    // The file stream opens asynchronously: a failure settles only once it is closed, so the caller's
    // cleanup cannot run before the file exists (a cancelled download must leave nothing).
    // `done`: the pipeline settled AND the file stream closed (the pipeline may reject first, on the abort itself).
    let done: Promise<unknown> | undefined;
    const fail = (e: Error) => void (done ?? Promise.resolve()).then(() => reject(e));
    const req = get(parsed, { headers: { 'user-agent': 'agent-host' }, ...(signal ? { signal } : {}) }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (redirectsLeft <= 0) return reject(new Error(`${url}: too many redirects`));
        const next = new URL(res.headers.location, parsed).toString();
        return fetchTo(next, file, opts, redirectsLeft - 1).then(resolve, reject);
      }
      if (status !== 200) {
        res.resume();
        return reject(new Error(`${url} answered HTTP ${status}`));
      }
      const length = Number(res.headers['content-length']);
      const total = Number.isFinite(length) && length > 0 ? length : undefined;
      const hash = createHash('sha256');
      let received = 0;
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          received += chunk.length;
          opts.onProgress?.({ received, ...(total !== undefined ? { total } : {}) });
          done(null, chunk);
        },
      });
      const out = fs.createWriteStream(file);
      // A stream destroyed before its file opened still opens it, then closes it: settle after that close.
      const closed = new Promise<void>((r) => out.once('close', () => r()));
      const writing = pipeline(res, count, out, ...(signal ? [{ signal }] : []));
      done = writing.catch(() => undefined).then(() => closed);
      writing
        .then(() => {
          if (total !== undefined && received !== total) throw new Error(`${url}: the download ended after ${received} of ${total} bytes`);
          resolve({ sha256: hash.digest('hex'), bytes: received });
        })
        .catch(async (e: Error) => {
          await closed;
          reject(signal?.aborted ? abortError(signal) : new Error(`${url}: ${e.message}`));
        });
    });
    req.on('error', (e) => fail(signal?.aborted ? abortError(signal) : new Error(`${url}: ${e.message}`)));
  });
}
