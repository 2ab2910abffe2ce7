/**
 * The protocol stream of one agent, kept for the traffic view: every frame in both directions (id, method,
 * kind, size, and for a response the request's duration) and the agent's stderr lines, interleaved, in a
 * ring bounded by count and by bytes. Frames are kept as their JSON text (clipped), never as objects, so
 * the ring's memory is what it says; secrets are masked when the text is shown or copied (`redact`), and
 * the values of secret-looking keys and env entries already when it is recorded.
 */
import { levelEvent, redact, type Logger } from '../core/log';
import { ownCopy } from '../core/ownCopy';

export type TrafficDirection = 'in' | 'out' | 'stderr' | 'note';

export interface TrafficEntry {
  seq: number;
  at: number;
  dir: TrafficDirection;
  kind: 'request' | 'response' | 'error' | 'notification' | 'line';
  id?: string | number;
  method?: string;
  /** For a response: milliseconds since its request. */
  durationMs?: number;
  /** Bytes of the frame's JSON (or the line). */
  size: number;
  /** The frame's JSON or the line, clipped to `TEXT_LIMIT` characters. */
  text: string;
}

export interface TrafficCounters {
  requestsTimedOut: number;
  restarts: number;
  linesDropped: number;
}

const TEXT_LIMIT = 4000;
/** At most TEXT_LIMIT characters, as a string of its own: a slice would keep the whole frame alive in the ring. */
const clipped = (text: string) => (text.length > TEXT_LIMIT ? `${ownCopy(text.slice(0, TEXT_LIMIT))}…` : text);
const SECRET_KEY = /token|key|secret|passw(or)?d|credential|authorization/i;
/** A line in which none of these occurs has nothing maskFrame would mask (neither a secret-looking key nor `env`). */
const MAYBE_MASKED = new RegExp(`${SECRET_KEY.source}|"env"`, 'i');

/**
 * Masks the values of secret-looking keys and of every `env` entry in a frame. The frame is not touched: what
 * changes is copied, and a frame with nothing to mask comes back as it is (most frames: no copy at all).
 */
export function maskFrame(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return SECRET_KEY.test(key) ? '***' : value;
  if (Array.isArray(value)) {
    if (key === 'env') return value.length === 0 ? value : value.map((e) => (e && typeof e === 'object' ? { ...(e as object), value: '***' } : '***'));
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const masked = maskFrame(value[i]);
      if (masked === value[i]) continue;
      out ??= value.slice();
      out[i] = masked;
    }
    return out ?? value;
  }
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const k in obj) {
      if (!Object.hasOwn(obj, k)) continue;
      const masked = key === 'env' ? '***' : maskFrame(obj[k], k);
      if (masked === obj[k]) continue;
      out ??= { ...obj };
      out[k] = masked;
    }
    return out ?? value;
  }
  return value;
}

export class TrafficLog {
  /** entries[head…] are kept; a dropped entry's slot is emptied at once (its text freed), the empty front cut off in bulk (amortized O(1) per entry). */
  private entries: (TrafficEntry | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private seq = 0;
  private readonly pending = new Map<string | number, { at: number; method: string }>();
  private readonly listeners = new Set<(entry: TrafficEntry) => void>();
  readonly counters: TrafficCounters = { requestsTimedOut: 0, restarts: 0, linesDropped: 0 };

  constructor(
    private readonly maxEntries = 2000,
    private readonly maxBytes = 4 * 1024 * 1024,
  ) {}

  /** A frame read from (`in`) or written to (`out`) the agent; `text`: the line it was read from, if at hand. */
  frame(dir: 'in' | 'out', frame: unknown, at = Date.now(), text?: string): void {
    const f = (frame ?? {}) as {
      id?: string | number | null;
      method?: unknown;
      error?: unknown;
      result?: unknown;
      type?: unknown;
      command?: unknown;
      cmd?: unknown;
      request_id?: string | number | null;
      stream_finish?: unknown;
    };
    let json: string;
    try {
      // The line as read when nothing in it could be masked (most frames), else the frame masked and serialized
      // (serializing every frame took 0.15-0.25 s of the extension host's 1.0-1.5 s at 100,000 chunks).
      json = text !== undefined && !MAYBE_MASKED.test(text) ? text : (JSON.stringify(maskFrame(frame)) ?? 'null');
    } catch {
      json = String(frame);
    }
    const entry: Omit<TrafficEntry, 'seq'> = { at, dir, kind: 'notification', size: json.length, text: clipped(json) };
    // JSON-RPC (ACP) frames; pi RPC frames say `type` (a command or "response"/an event) instead; the agent service `cmd` and `request_id`.
    const method =
      typeof f.method === 'string'
        ? f.method
        : typeof f.command === 'string'
          ? f.command
          : typeof f.cmd === 'string'
            ? f.cmd
            : typeof f.type === 'string' && f.type !== 'response'
              ? f.type
              : undefined;
    const id = f.id ?? f.request_id ?? undefined;
    if (method !== undefined) entry.method = method;
    if (id !== undefined) entry.id = id;
    if (id !== undefined && method !== undefined && (typeof f.method === 'string' || f.type !== 'response')) {
      entry.kind = 'request';
      this.pending.set(`${dir}:${String(id)}`, { at, method });
    } else if (id !== undefined) {
      // The answer travels the other way from its request.
      const key = `${dir === 'in' ? 'out' : 'in'}:${String(id)}`;
      const req = this.pending.get(key);
      // A streamed reply (the agent service) answers in many frames: the request waits for the last.
      if (f.stream_finish !== false || f.error !== undefined) this.pending.delete(key);
      entry.kind = f.error !== undefined ? 'error' : 'response';
      if (req) {
        entry.method = req.method;
        entry.durationMs = at - req.at;
      }
    }
    this.push(entry);
  }

  /** A line the agent wrote to stderr, or a note of ours (a dropped line, a timeout, a restart). */
  line(dir: 'stderr' | 'note', text: string, at = Date.now()): void {
    this.push({ at, dir, kind: 'line', size: text.length, text: clipped(text) });
  }

  count(counter: keyof TrafficCounters, note?: string): void {
    this.counters[counter]++;
    if (note) this.line('note', note);
  }

  /** The kept entries, oldest first, their text redacted. */
  list(): TrafficEntry[] {
    return (this.entries.slice(this.head) as TrafficEntry[]).map((e) => ({ ...e, text: redact(e.text) }));
  }

  /** Entries as JSON lines (what "Copy as JSON Lines" copies), redacted. */
  jsonLines(entries: TrafficEntry[] = this.list()): string {
    return entries.map((e) => JSON.stringify({ ...e, text: undefined, frame: e.kind === 'line' ? undefined : tryParse(e.text), line: e.kind === 'line' ? e.text : undefined })).join('\n');
  }

  onEntry(listener: (entry: TrafficEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.length - this.head, bytes: this.bytes };
  }

  private push(e: Omit<TrafficEntry, 'seq'>): void {
    const entry = { ...e, seq: ++this.seq } as TrafficEntry;
    this.entries.push(entry);
    this.bytes += entry.text.length;
    while (this.entries.length - this.head > this.maxEntries || (this.bytes > this.maxBytes && this.entries.length - this.head > 1)) {
      this.bytes -= this.entries[this.head]!.text.length;
      this.entries[this.head++] = undefined;
    }
    if (this.head > this.maxEntries) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    if (this.pending.size > 10_000) this.pending.clear(); // requests never answered do not pile up
    if (this.listeners.size) {
      const shown = { ...entry, text: redact(entry.text) };
      for (const l of this.listeners) l(shown);
    }
  }
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A logger that also feeds `traffic`: the agent's stderr lines (logged as `[agent stderr] …`) become stderr
 * entries, and a dropped line (malformed or over-long) counts and shows as a note. Everything is logged as before.
 */
export function trafficLogger(logger: Logger, traffic: TrafficLog): Logger {
  return {
    trace: (m) => logger.trace(m),
    debug: (m) => logger.debug(m),
    info: (m) => {
      if (m.startsWith('[agent stderr] ')) traffic.line('stderr', m.slice(15));
      logger.info(m);
    },
    warn: (m) => logger.warn(m),
    error: (m) => {
      const text = typeof m === 'string' ? m : m.message;
      if (text.includes('(dropped; connection continues)')) traffic.count('linesDropped', text);
      logger.error(m);
    },
    get logLevel() {
      return logger.logLevel;
    },
    get onDidChangeLogLevel() {
      return levelEvent(logger);
    },
  } as Logger;
}
