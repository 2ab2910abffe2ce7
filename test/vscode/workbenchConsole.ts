/**
 * The workbench's browser console, forwarded to our stdout.
 *
 * While extension tests run, the workbench relays the extension host's console (mocha's reporter, the tests'
 * own lines) into its log, whose lines reach the browser console as console.log('%c INFO', 'color: …', …)
 * — the same way as the workbench's own log lines, which nothing tells apart. So in a test run every log
 * line is printed as is, as desktop VS Code prints its log among the test output, less some start-up chatter.
 * Otherwise (and for other console lines) only errors, without the expected noise; everything when verbose.
 */
import * as util from 'node:util';
import type { ConsoleMessage } from 'playwright-core';

/** Workbench errors that are expected offline or harmless. */
const NOISE = [
  /open-vsx\.org|ENOTFOUND|ERR_NAME_NOT_RESOLVED/,
  /^Failed to load resource/,
  /vsda/,
  /authentication provider '(github|microsoft)'/,
  /^Canceled/, // remote calls cut off when the extension host stops
  /^\d+ tests? failed\.$/, // @vscode/test-cli's rejection: mocha has reported the failures already
];

/** The workbench's own log lines at start-up, left out of a test run's output. */
const CHATTER = [/^(Resolving|Resolved) connection token/, /^Creating a socket/, /^\[reconnection-grace-time\]/, /^Updating additional builtin extensions cache/, /^\[Service Worker\]/];

const LOG_LINE = /^%c\s*(TRACE|DEBUG|INFO|WARN|ERR)/;

export class ConsoleForwarder {
  /** Console lines are formatted asynchronously (argument handles): a chain keeps them in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly opts: { verbose: boolean; tests: boolean }) {}

  forward(msg: ConsoleMessage): void {
    this.chain = this.chain
      .then(async () => {
        const values = await Promise.all(msg.args().map((a) => a.jsonValue().catch(() => undefined as unknown)));
        if (process.env.AGENT_HOST_CONSOLE_RAW === '1') process.stdout.write(`[raw ${msg.type()}] ${JSON.stringify(values)}\n`);
        const text = format(msg, values);
        if (text === undefined) return;
        const noise = NOISE.some((re) => re.test(text));
        const logLine = typeof values[0] === 'string' && LOG_LINE.test(values[0]);
        if (this.opts.verbose) process.stdout.write(`[workbench ${msg.type()}] ${text}\n`);
        else if (this.opts.tests && logLine) {
          if (!noise && !CHATTER.some((re) => re.test(text))) process.stdout.write(`${text}\n`);
        } else if (msg.type() === 'error' && !noise) {
          // Workbench errors matter (e.g. an extension failing to activate); their minified stacks do not.
          const lines = text.split('\n');
          const head = lines
            .filter((l) => !/^\s+at .*\/static\/out\/vs\//.test(l))
            .slice(0, 6)
            .join('\n');
          process.stdout.write(`[workbench error] ${head}\n`);
        }
      })
      .catch(() => undefined);
  }

  /** Settles once every line received so far is printed. */
  flushed(): Promise<void> {
    return this.chain;
  }
}

/**
 * A console message as text. VS Code logs as console.log('%c INFO', 'color: #33f', message, …args); the
 * extension host's console.* arrive the same way, with printf-style arguments already applied or not.
 */
function format(msg: ConsoleMessage, values: unknown[]): string | undefined {
  let parts: unknown[] = values.length ? values : [msg.text()];
  if (typeof parts[0] === 'string' && LOG_LINE.test(parts[0])) parts = parts.slice(2);
  if (parts.length === 0) return undefined;
  // An Error arrives as {} or {name}: fall back to the message text, which carries the stack.
  if (parts.some((p) => p && typeof p === 'object' && Object.keys(p).length <= 1)) {
    return msg
      .text()
      .replace(/^%c\s*\w+\s+color: #\w+\s*/, '')
      .replace(/\s+$/, '');
  }
  const text = util.format(...parts).replace(/\s+$/, '');
  return text.length ? text : undefined;
}
