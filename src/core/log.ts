/** The logging surface the core needs; VS Code's LogOutputChannel satisfies it as is. */
export interface Logger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string | Error): void;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'off';
const ORDER: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };

/** A logger for headless use (CLI, tests): one line per entry on a writable, filtered by level. */
export function streamLogger(
  write: (line: string) => void,
  level: LogLevel = 'info',
  prefix = '',
): Logger {
  const at = (lvl: Exclude<LogLevel, 'off'>) => (message: string | Error) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const text = message instanceof Error ? (message.stack ?? message.message) : message;
    write(`${new Date().toISOString()} [${lvl}] ${prefix}${text}\n`);
  };
  return { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = streamLogger(() => undefined, 'off');

/** Shortens a string for a log line, keeping its head and saying how much was cut. */
export function truncate(text: string, max = 500): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`;
}
