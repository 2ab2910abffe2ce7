/**
 * One connection to an agent service (seed 003): requests by `request_id`, replies assembled in order
 * (streamAssembler.ts), `{request_id, error}` as a typed error, and the service's IDE-service requests
 * answered from the host's IDE lookups over the same socket.
 *
 * Readings chosen where the document is silent (docs/agent-service.md): the plugin's request ids are numbers
 * (a random start, then counting); a reply's id is matched as text, so `123` and `"123"` are the same. The
 * service asks the IDE with a frame that carries a `cmd` of `get_document_symbols`, `find_def_locations` or
 * `find_type_def_locations` (a leading `/` accepted), its `request_id`, and its arguments at the top level or
 * under `params` / `data` / `args`; it is answered `{request_id, result}` or `{request_id, error}`.
 */
import type { Logger } from '../core/log';
import type { HostToolProvider } from '../session/hostTools';
import type { CloseReason, MessageTransport } from '../transport/transport';
import { type AssembledReply, StreamAssembler } from './streamAssembler';

export type ServiceErrorKind = 'cancelled' | 'queue_full' | 'failed' | 'dropped' | 'refused_key' | 'connection_limit';

/** What the service answered instead of a result (or why there was no answer). */
export class ServiceError extends Error {
  constructor(
    readonly kind: ServiceErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** The service's error text, by kind: "cancelled" exactly; a full queue by its words (English or Chinese). */
export function errorKind(text: string): ServiceErrorKind {
  if (text.trim().toLowerCase() === 'cancelled' || text.trim().toLowerCase() === 'canceled') return 'cancelled';
  if ((/queue|pool|task/i.test(text) && /full|too (long|many)|limit|busy|overload/i.test(text)) || /队列.*(满|过长)|繁忙/.test(text)) return 'queue_full';
  return 'failed';
}

const IDE_COMMANDS = new Set(['get_document_symbols', 'find_def_locations', 'find_type_def_locations']);

interface Pending {
  cmd: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  assembler?: StreamAssembler;
}

export interface ServiceConnectionOptions {
  logger: Logger;
  /** The host's IDE lookups (get_document_symbols, find_def_locations, find_type_def_locations); without it the service's requests get an error. */
  ide?: HostToolProvider;
  frameTap?: (direction: 'in' | 'out', frame: unknown) => void;
  onActivity?: (waitingOnHost: boolean) => void;
}

export class ServiceConnection {
  private nextId = 1 + Math.floor(Math.random() * 1_000_000);
  private readonly pending = new Map<string, Pending>();
  private readonly ideCalls = new Map<string, AbortController>();
  private lost: ServiceError | undefined;
  /** Frames received so far (a close before the first one is the service refusing the key). */
  framesIn = 0;

  constructor(
    readonly transport: MessageTransport,
    private readonly options: ServiceConnectionOptions,
  ) {
    transport.listen({
      message: (frame) => this.onFrame(frame as Record<string, unknown>),
      malformed: (error) => options.logger.warn(`agent service: a frame dropped: ${error.message}: ${error.line.slice(0, 120)}`),
    });
    void transport.closed.then((reason) => this.onClosed(reason));
  }

  /** Sends a request and resolves with its reply (a plain reply: `list_model`). */
  request(cmd: string, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.send(cmd, fields) as Promise<Record<string, unknown>>;
  }

  /** Sends a task and resolves with its whole answer; `onText` gets each piece in order. */
  task(cmd: string, fields: Record<string, unknown>, onText: (piece: string) => void): { id: string; done: Promise<AssembledReply> } {
    const id = this.nextId++;
    const done = this.send(cmd, fields, id, onText) as Promise<AssembledReply>;
    return { id: String(id), done };
  }

  /** Stops waiting for a task (its late frames are dropped): it ends `cancelled`. */
  forget(id: string, why: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.assembler?.abandon();
    p.reject(new ServiceError('cancelled', why));
  }

  get busy(): boolean {
    return [...this.pending.values()].some((p) => p.assembler);
  }

  private send(cmd: string, fields: Record<string, unknown>, id = this.nextId++, onText?: (piece: string) => void): Promise<unknown> {
    if (this.lost) return Promise.reject(this.lost);
    const frame = { cmd, request_id: id, ...fields };
    const key = String(id);
    const started = Date.now();
    const log = (how: string) => this.options.logger.info(`agent service ${cmd} ${key}: ${how} after ${Date.now() - started} ms`);
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        cmd,
        resolve: (value) => {
          log('answered');
          resolve(value);
        },
        reject: (error) => {
          log(`ended: ${error.message}`);
          reject(error);
        },
      };
      if (onText) {
        entry.assembler = new StreamAssembler(onText, (reply) => {
          this.pending.delete(key);
          if (reply.gaps.length) this.options.logger.warn(`agent service ← ${cmd} ${key}: frames ${reply.gaps.join(', ')} never arrived`);
          entry.resolve(reply);
        });
      }
      this.pending.set(key, entry);
      this.options.logger.debug(`agent service → ${cmd} ${key}`);
      this.options.frameTap?.('out', frame);
      this.transport.write(frame).catch(async (error: Error) => {
        // A connection closing as it was written to: its close says why (a refused key closes at once).
        if (!this.transport.writable) await Promise.race([this.transport.closed, new Promise((r) => setTimeout(r, 2000))]);
        if (this.pending.delete(key)) entry.reject(this.lost ?? new ServiceError('dropped', `could not send ${cmd}: ${error.message}`));
      });
    });
  }

  private onFrame(frame: Record<string, unknown>): void {
    this.framesIn++;
    this.options.frameTap?.('in', frame);
    this.options.onActivity?.(this.ideCalls.size > 0);
    const id = frame.request_id;
    const key = typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
    const cmd = typeof frame.cmd === 'string' ? frame.cmd.replace(/^\//, '') : undefined;
    if (cmd !== undefined) {
      void this.answerIde(cmd, key, frame);
      return;
    }
    const pending = key !== undefined ? this.pending.get(key) : undefined;
    if (!pending) {
      this.options.logger.debug(`agent service ← a frame for no request waiting (${key ?? 'no request_id'}): dropped`);
      return;
    }
    if (typeof frame.error === 'string' || (frame.error !== undefined && frame.error !== null && frame.error !== '')) {
      const text = typeof frame.error === 'string' ? frame.error : JSON.stringify(frame.error);
      this.pending.delete(key!);
      pending.assembler?.abandon();
      this.options.logger.warn(`agent service ← ${pending.cmd} ${key}: error ${text}`);
      pending.reject(new ServiceError(errorKind(text), text));
      return;
    }
    if (pending.assembler) pending.assembler.push(frame);
    else {
      this.pending.delete(key!);
      pending.resolve(frame);
    }
  }

  /** One of the service's IDE-service requests, answered from the host's lookups. */
  private async answerIde(cmd: string, key: string | undefined, frame: Record<string, unknown>): Promise<void> {
    const reply = (body: Record<string, unknown>) => {
      const out = { request_id: frame.request_id, ...body };
      this.options.frameTap?.('out', out);
      return this.transport.write(out).catch(() => undefined);
    };
    if (key === undefined) {
      this.options.logger.warn(`agent service asked ${cmd} without a request_id: not answered`);
      return;
    }
    if (!IDE_COMMANDS.has(cmd)) {
      await reply({ error: `unknown IDE service command "${cmd}"` });
      return;
    }
    const provider = this.options.ide;
    if (!provider) {
      await reply({ error: 'this editor offers no IDE lookups here' });
      return;
    }
    const nested = [frame.params, frame.data, frame.args].find((v) => v && typeof v === 'object' && !Array.isArray(v)) as Record<string, unknown> | undefined;
    const args: Record<string, unknown> = {};
    for (const name of ['abspath', 'line', 'character']) {
      const value = nested?.[name] ?? frame[name];
      if (value !== undefined) args[name] = value;
    }
    const abort = new AbortController();
    this.ideCalls.set(key, abort);
    this.options.onActivity?.(true);
    const started = Date.now();
    try {
      const result = await provider.call(cmd, args, abort.signal, () => undefined);
      const text = result.content.map((c) => c.text).join('');
      if (result.isError) await reply({ error: text });
      else {
        let value: unknown = text;
        try {
          value = JSON.parse(text);
        } catch {
          // not JSON: sent as text
        }
        await reply({ result: value });
      }
    } catch (error) {
      await reply({ error: (error as Error).message });
    } finally {
      this.ideCalls.delete(key);
      this.options.onActivity?.(this.ideCalls.size > 0);
      this.options.logger.info(`agent service IDE ${cmd} ${key}: ${Date.now() - started} ms`);
    }
  }

  private onClosed(reason: CloseReason): void {
    const refused = this.framesIn === 0;
    const how = reason.disconnected ?? `code ${reason.code}`;
    this.lost = refused
      ? /too many|limit|connections/i.test(how)
        ? new ServiceError('connection_limit', `the agent service refused the connection: too many connections for this API key (${how})`)
        : new ServiceError('refused_key', `the agent service refused the API key (it closed the connection: ${how})`)
      : new ServiceError('dropped', `the connection to the agent service dropped (${how})`);
    for (const abort of this.ideCalls.values()) abort.abort();
    for (const [key, p] of this.pending) {
      this.pending.delete(key);
      p.assembler?.abandon();
      p.reject(this.lost);
    }
  }

  /** Why the connection is gone, once it is. */
  get closedError(): ServiceError | undefined {
    return this.lost;
  }
}
