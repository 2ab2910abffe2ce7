/**
 * A stand-in for the desktop `code` executable that runs extension tests in code-server instead:
 * `@vscode/test-electron`'s runTests({ vscodeExecutablePath }) and `@vscode/test-cli`'s
 * `useInstallation.fromPath` start it (through scripts/vscode-test-launcher.sh) with the desktop arguments,
 *
 *   --extensionDevelopmentPath=<dir> (repeatable)  --extensionTestsPath=<module>  [--user-data-dir=<dir>]
 *   [--extensions-dir=<dir>]  [--disable-workspace-trust]  [<folder or .code-workspace>]  (others: ignored)
 *
 * and it does what desktop VS Code would: opens the folder with the extension under development, runs the
 * test module's run() in the (real, Node) extension host, prints the extension host's console, and exits with
 * 0 when run() resolved, 1 when it rejected or the run could not start, 124 at the time limit. code-server and
 * Chromium get scratch HOME / XDG_* / TMPDIR folders; everything it started is ended before it exits, also when
 * it is interrupted (SIGINT, SIGTERM) or its parent goes away.
 *
 * Env: AGENT_HOST_CODE_SERVER  which code-server (`current`, `min`; test/vscode/codeServers.ts)
 *      AGENT_HOST_VSCODE_TIMEOUT_MS  hard limit of the whole run (default 900000)
 *      AGENT_HOST_VSCODE_VERBOSE=1   print every workbench console line too
 *      AGENT_HOST_KEEP_SCRATCH=1     keep the scratch folder (code-server.log) even on success
 * The user data folder's User/settings.json is kept (it is where a test configuration puts its settings) and
 * written to Machine/settings.json as well: a code-server window is a remote one, which reads machine-scoped
 * settings (agentHost.agents) only from there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { codeServerInstall } from './codeServers';
import { REPO_ROOT, Session, TimeoutError, type SessionOptions } from './runner';

export interface DesktopArgs {
  developmentPaths: string[];
  testsPath?: string;
  userDataDir?: string;
  extensionsDir?: string;
  folder?: string;
  disableWorkspaceTrust: boolean;
  version: boolean;
  ignored: string[];
}

const VALUED = ['extensionDevelopmentPath', 'extensionTestsPath', 'user-data-dir', 'extensions-dir'] as const;

/** The desktop CLI arguments this launcher understands (`--name=value` or `--name value`). */
export function parseDesktopArgs(argv: readonly string[]): DesktopArgs {
  const out: DesktopArgs = { developmentPaths: [], disableWorkspaceTrust: false, version: false, ignored: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      if (out.folder === undefined) out.folder = path.resolve(arg);
      else out.ignored.push(arg);
      continue;
    }
    const name = m[1]!;
    if ((VALUED as readonly string[]).includes(name)) {
      const value = m[2] ?? argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      const abs = path.resolve(value);
      if (name === 'extensionDevelopmentPath') out.developmentPaths.push(abs);
      else if (name === 'extensionTestsPath') out.testsPath = abs;
      else if (name === 'user-data-dir') out.userDataDir = abs;
      else out.extensionsDir = abs;
    } else if (name === 'disable-workspace-trust') out.disableWorkspaceTrust = true;
    else if (name === 'version' || name === 'v') out.version = true;
    else out.ignored.push(arg);
  }
  return out;
}

const log = (line: string) => process.stdout.write(`[vscode-launcher] ${line}\n`);

/** User/settings.json of a user data folder, or {} (none yet); a file that is not JSON is an error. */
function userSettings(userDataDir: string | undefined): Record<string, unknown> {
  const file = userDataDir && path.join(userDataDir, 'User', 'settings.json');
  if (!file || !fs.existsSync(file)) return {};
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/**
 * Runs the test module in code-server's extension host; resolves the exit code (0 when its run() resolved,
 * 1 when it rejected or the run could not start, 124 on the time limit). Never rejects.
 */
export async function runExtensionTests(opts: SessionOptions, testsPath: string): Promise<number> {
  let session: Session;
  try {
    session = await Session.open(opts, testsPath);
  } catch (error) {
    log(`could not start: ${(error as Error).message}`);
    return error instanceof TimeoutError ? 124 : 1;
  }
  let code = 1;
  try {
    code = await session.race(async (page) => {
      let resolveExit!: (code: number) => void;
      const exited = new Promise<number>((resolve) => (resolveExit = resolve));
      // The workbench calls window.codeAutomationExit(code, logs) once the test module's run() settled and
      // the extension host stopped.
      await page.exposeFunction('codeAutomationExit', (c: unknown) => resolveExit(typeof c === 'number' ? c : 1));
      await session.navigate(page);
      return exited;
    });
    if (code !== 0) await session.info.screenshot(`tests-exit-${code}-code-server-${session.version}`).catch(() => undefined);
  } catch (error) {
    log(`run failed: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await session.close(code !== 0);
  }
  return code;
}

export async function main(argv: readonly string[]): Promise<number> {
  const args = parseDesktopArgs(argv);
  const install = codeServerInstall();
  if (args.version) {
    process.stdout.write(`${install.vscodeVersion}\ncode-server ${install.version}\n${process.arch}\n`);
    return 0;
  }
  if (!args.testsPath) {
    process.stderr.write('vscode-test-launcher only runs extension tests: pass --extensionTestsPath=<module>\n');
    return 2;
  }
  if (args.ignored.length) log(`ignored: ${args.ignored.join(' ')}`);
  // Gone parent (vscode-test killed): end the run as if interrupted, so nothing it started stays behind.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && process.kill(process.pid, 'SIGTERM'), 1000).unref();
  return runExtensionTests(
    {
      extensionPath: args.developmentPaths.length ? args.developmentPaths : REPO_ROOT,
      workspace: args.folder,
      ...(args.userDataDir !== undefined ? { userDataDir: args.userDataDir } : {}),
      ...(args.extensionsDir !== undefined ? { extensionsDir: args.extensionsDir } : {}),
      userSettings: userSettings(args.userDataDir),
      workspaceTrust: !args.disableWorkspaceTrust,
      timeoutMs: Number(process.env.AGENT_HOST_VSCODE_TIMEOUT_MS ?? 900_000),
    },
    args.testsPath,
  );
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`vscode-test-launcher: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
