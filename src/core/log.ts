/** The logging surface the core needs; VS Code's LogOutputChannel satisfies it as is. */
export interface Logger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string | Error): void;
  /** What is shown: a LogLevel name (streamLogger), or vscode.LogLevel (a LogOutputChannel). See traces(). */
  readonly logLevel?: string | number;
}

/** A LogOutputChannel's level-change event, when the logger has one (bound to it). */
export function levelEvent(logger: Logger): ((listener: () => void) => { dispose(): void }) | undefined {
  const event = (logger as { onDidChangeLogLevel?: (listener: () => void) => { dispose(): void } }).onDidChangeLogLevel;
  return event?.bind(logger);
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'off';
const ORDER: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };

/** A logger for headless use (CLI, tests): one line per entry on a writable, filtered by level. */
export function streamLogger(write: (line: string) => void, level: LogLevel = 'info', prefix = ''): Logger {
  const at = (lvl: Exclude<LogLevel, 'off'>) => (message: string | Error) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const text = message instanceof Error ? (message.stack ?? message.message) : message;
    write(`${new Date().toISOString()} [${lvl}] ${prefix}${text}\n`);
  };
  return { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), logLevel: level };
}

/**
 * Whether `logger` shows trace lines, so a caller can skip building them: a streamLogger's level, or a VS Code
 * LogOutputChannel's `logLevel` (vscode.LogLevel.Trace is 1); loggers that do not say are taken to trace.
 */
export function traces(logger: Logger): boolean {
  const level = (logger as { logLevel?: unknown }).logLevel;
  if (typeof level === 'number') return level === 1;
  if (typeof level === 'string') return level === 'trace';
  return true;
}

export const silentLogger: Logger = streamLogger(() => undefined, 'off');

/** Shortens a string for a log line, keeping its head and saying how much was cut. */
export function truncate(text: string, max = 500): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`;
}

// ------------------------------------------------------------------------------------------------ redaction

const MASK = '***';
/** Secret values known to this process (e.g. the IDE tools' bearer token): masked wherever they appear. */
const secrets = new Set<string>();

/** Masks `value` in every redacted log line from now on; returns how to forget it. Values under 8 chars are ignored. */
export function registerSecret(value: string): () => void {
  if (value.length < 8) return () => undefined;
  secrets.add(value);
  return () => secrets.delete(value);
}

/**
 * Whether an environment variable holds a secret: a secret-looking name (see KEY), or a value shaped like a
 * credential (20+ characters of letters, digits and `-_.=+`, with both letters and digits).
 */
export function looksSecret(name: string, value: string): boolean {
  return new RegExp(`^(?:${KEY})$`, 'i').test(name) || (/^[A-Za-z0-9_\-.=+]{20,}$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value));
}

/** Registers the secrets among an agent's environments (its configured `env`, the sign-in's; see looksSecret). Returns how to forget them. */
export function registerEnvSecrets(...envs: (Record<string, string> | undefined)[]): () => void {
  const forget: (() => void)[] = [];
  for (const [name, value] of envs.flatMap((env) => Object.entries(env ?? {}))) {
    if (looksSecret(name, value)) forget.push(registerSecret(value));
  }
  return () => {
    for (const f of forget) f();
  };
}

/** Names that hold secrets: anything with TOKEN, KEY, SECRET, PASSWORD or CREDENTIAL in it, and authorization. */
const KEY = String.raw`[\w.-]*(?:token|key|secret|passw(?:or)?d|credential)[\w.-]*|authorization`;
/** A JSON string value, possibly cut short at the end of the text (a truncated line). */
const JSON_VALUE = String.raw`"(?:[^"\\]|\\.)*(?:"|\\?$)`;
const PATTERNS: [RegExp, string][] = [
  // {"ANTHROPIC_API_KEY": "…"}, {"authorization": "Bearer …"}
  [new RegExp(String.raw`("(?:${KEY})"\s*:\s*)${JSON_VALUE}`, 'gi'), `$1"${MASK}"`],
  // ACP env entries: {"name": "AGENT_HOST_IDE_TOKEN", "value": "…"} (either order)
  [new RegExp(String.raw`("name"\s*:\s*"(?:${KEY})"\s*,\s*"value"\s*:\s*)${JSON_VALUE}`, 'gi'), `$1"${MASK}"`],
  [new RegExp(String.raw`("value"\s*:\s*)${JSON_VALUE}(\s*,\s*"name"\s*:\s*"(?:${KEY})")`, 'gi'), `$1"${MASK}"$2`],
  // Escaped once more (a JSON document inside a JSON string): {\"name\":\"X_TOKEN\",\"value\":\"…\"}
  [new RegExp(String.raw`(\\"(?:${KEY})\\"\s*:\s*)\\"(?:[^"\\]|\\[^"])*(?:\\"|$)`, 'gi'), `$1\\"${MASK}\\"`],
  [new RegExp(String.raw`(\\"name\\"\s*:\s*\\"(?:${KEY})\\"\s*,\s*\\"value\\"\s*:\s*)\\"(?:[^"\\]|\\[^"])*(?:\\"|$)`, 'gi'), `$1\\"${MASK}\\"`],
  // KEY=value (environment listings, command lines)
  [new RegExp(String.raw`\b((?:${KEY})=)[^\s"'&,;]+`, 'gi'), `$1${MASK}`],
  // authorization: Bearer …
  [/\b(authorization\s*[:=]\s*)(?:(?:bearer|basic|token)\s+)?[^\s"',}]+/gi, `$1${MASK}`],
];

/**
 * Masks secrets in log text: every value given to registerSecret(), and the values of secret-looking keys
 * (`*TOKEN*`, `*KEY*`, `*SECRET*`, `*PASSWORD*`, `authorization`) as JSON fields, ACP `{name, value}` env
 * entries, `NAME=value` pairs and authorization headers. `cut`: the text was cut short, so a registered
 * secret's beginning at its very end is masked too.
 */
export function redact(text: string, cut = false): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(MASK);
  if (cut) {
    for (const s of secrets) {
      for (let k = Math.min(s.length - 1, out.length); k >= 4; k--) {
        if (out.endsWith(s.slice(0, k))) {
          out = out.slice(0, out.length - k) + MASK;
          break;
        }
      }
    }
  }
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}

/**
 * A log line's worth of untrusted or protocol text: redacted, then shortened like truncate(). Only a window a
 * few times `max` long is redacted (masking only shortens text), so huge frames cost little.
 */
export function logText(text: string, max = 500): string {
  const windowed = text.length > max * 4;
  const red = redact(windowed ? text.slice(0, max * 4) : text, windowed);
  if (!windowed && red.length <= max) return red;
  return `${red.slice(0, max)}… (${Math.max(0, text.length - max)} more chars)`;
}

/**
 * The same logger with every line redacted (registered secrets, secret-looking keys), at every level: what
 * adapters log includes the agent's own stderr and protocol errors, which may echo keys.
 */
export function redactingLogger(logger: Logger): Logger {
  // Redacting costs a few regular expressions per line: only lines the logger will show pay it.
  const at = (level: Exclude<LogLevel, 'off'>, write: (m: string | Error) => void) => (m: string | Error) => {
    if (!shows(logger, level)) return;
    write(typeof m === 'string' ? redact(m) : Object.assign(new Error(redact(m.message)), { stack: m.stack ? redact(m.stack) : undefined }));
  };
  return {
    trace: at('trace', (m) => logger.trace(m as string)),
    debug: at('debug', (m) => logger.debug(m as string)),
    info: at('info', (m) => logger.info(m as string)),
    warn: at('warn', (m) => logger.warn(m as string)),
    error: at('error', (m) => logger.error(m)),
    get logLevel() {
      return (logger as { logLevel?: unknown }).logLevel;
    },
    get onDidChangeLogLevel() {
      return levelEvent(logger);
    },
  } as Logger;
}

/** VS Code's LogLevel numbers (Off 0, Trace 1 … Error 5) as our names. */
const VSCODE_LEVELS: LogLevel[] = ['off', 'trace', 'debug', 'info', 'warn', 'error'];

/** Whether `logger` shows lines of `level` (loggers that do not say show everything). */
export function shows(logger: Logger, level: Exclude<LogLevel, 'off'>): boolean {
  const raw = (logger as { logLevel?: unknown }).logLevel;
  const current = typeof raw === 'number' ? VSCODE_LEVELS[raw] : typeof raw === 'string' ? (raw as LogLevel) : 'trace';
  if (!current || current === 'off') return false;
  return ORDER[level] >= ORDER[current];
}
