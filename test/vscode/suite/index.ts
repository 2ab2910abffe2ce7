/**
 * Test entry the extension host loads (payload `extensionTestsPath`): runs every compiled `*.test.js` next to
 * this file with mocha (BDD: describe/it). The workbench reports the settled promise through
 * `codeAutomationExit`, which test/vscode/runner.ts turns into the exit code.
 *
 * Mocha is loaded from the repository's node_modules with a dynamic import() AFTER console is wrapped (its
 * reporters keep a reference to console.log taken at load time). mocha 12 is an ES module package; its
 * CommonJS core (lib/mocha.cjs) loads the test files with require(), so `import * as vscode from 'vscode'`
 * in a test resolves through the extension host's module interceptor exactly as in the extension.
 *
 * Console output: the extension host relays console.* to the workbench's log, mixed with the workbench's
 * own lines. Every line written here (tests, reporter) is formatted and prefixed with CONSOLE_MARK so the
 * runner can forward exactly these to its stdout.
 *
 * Env: AGENT_HOST_TEST_GREP (only tests whose title matches), AGENT_HOST_TEST_TIMEOUT_MS (per test).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';

/** Printed on the last line so the outer runner can repeat the counts (e.g. for CI). */
export const SUMMARY_PREFIX = '[agent-host-vscode-tests]';
/** Invisible prefix of every console line of the tests (U+2063 INVISIBLE SEPARATOR); see runner.ts. */
export const CONSOLE_MARK = '\u2063';

/**
 * The extension host pins console.log & co. to its relay (non-configurable getters, setters that ignore
 * writes), so the global `console` itself is replaced by an object whose methods mark, then relay.
 */
function markConsole(): () => void {
  const relay = globalThis.console;
  const marked = Object.create(relay) as Console;
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = relay[level];
    Object.defineProperty(marked, level, {
      value: (...args: unknown[]) => original(`${CONSOLE_MARK}${util.format(...args)}`),
      writable: true,
      configurable: true,
    });
  }
  globalThis.console = marked;
  return () => {
    globalThis.console = relay;
  };
}

export async function run(): Promise<void> {
  const unmark = markConsole();
  try {
    await runMocha();
  } finally {
    unmark();
  }
}

async function runMocha(): Promise<void> {
  const { default: Mocha } = await import('mocha');
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    reporter: 'spec',
    timeout: Number(process.env.AGENT_HOST_TEST_TIMEOUT_MS ?? 120_000),
    ...(process.env.AGENT_HOST_TEST_GREP ? { grep: process.env.AGENT_HOST_TEST_GREP } : {}),
  });
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .sort();
  for (const f of files) mocha.addFile(path.join(__dirname, f));

  await new Promise<void>((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => {
        const stats = runner.stats;
        console.log(
          `${SUMMARY_PREFIX} ${stats?.passes ?? 0} passed, ${failures} failed, ${stats?.pending ?? 0} skipped`,
        );
        if (failures > 0) reject(new Error(`${failures} test(s) failed`));
        else resolve();
      });
    } catch (error) {
      console.error(error);
      reject(error);
    }
  });
}
