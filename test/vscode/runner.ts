/**
 * A REAL VS Code for tests: code-server (VS Code served to a browser, with the same Node extension host desktop
 * VS Code uses), its workbench opened in Debian's Chromium through playwright-core. Installed by
 * scripts/setup-vscode.sh into .tools/ (which code-server: test/vscode/codeServers.ts).
 *
 *   await withWorkbench({ extensionPath, workspace, userSettings }, async (page) => { … });
 *   await withWorkbench({ vsix, workspace, userSettings }, async (page) => { … }); // installed, as a user's
 *
 * The extension-host mocha suite does not come through here: `vscode-test` (.vscode-test.mjs) runs it, with
 * scripts/vscode-test-launcher.sh (test/vscode/launcher.ts) as its "VS Code executable", built on Session.
 *
 * Every run gets scratch HOME / XDG_* / TMPDIR / user-data-dir / extensions-dir / browser profile, a free
 * port on 127.0.0.1, and a hard time limit; code-server, Chromium and everything below them (agents the
 * extension spawned in groups of their own included) are killed at the end, whatever happened.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { until } from '../support/wait';
import { REPO_ROOT, codeServerInstall, hasVscodeOption, type CodeServerInstall } from './codeServers';
import { killTrees, killTreesNow, pidsWithArg } from './procs';
import { ConsoleForwarder } from './workbenchConsole';
import { userDataIn } from './displayLanguage';
import { CHROMIUM, CHROMIUM_ARGS, QUIET_SETTINGS } from './workbenchDefaults';

export { REPO_ROOT };
// What the UI checks do in a workbench (they import it from here).
export { agentEntryIn, agentHostLog, answerModal, askAgent, reloadWindow, runCommand, statusBarItem } from './workbenchActions';
export { CHROMIUM, CHROMIUM_ARGS, QUIET_SETTINGS } from './workbenchDefaults';

export interface WorkbenchOptions {
  /** Folder(s) of the extension(s) under development (package.json). Default: the repository. */
  extensionPath?: string | readonly string[];
  /**
   * A .vsix (or several) installed (`code-server --install-extension`) into the run's fresh extensions dir before code-server
   * starts: the extension then loads from there, as a user's would, and `extensionPath` is not loaded at all.
   */
  vsix?: string | readonly string[];
  /** Folder (or .code-workspace file) the window opens; the extension's workspace. Must exist. */
  workspace: string;
  /** Which code-server (test/vscode/codeServers.ts). Default: $AGENT_HOST_CODE_SERVER, else `current`. */
  codeServer?: string;
  /** VS Code's user data and extensions folders. Default: fresh ones in the run's scratch (removed with it). */
  userDataDir?: string;
  extensionsDir?: string;
  /** Added to code-server's environment, which the extension host (and so the agents) inherit. */
  env?: Record<string, string | undefined>;
  /** Written to <user-data-dir>/{User,Machine}/settings.json (on top of QUIET_SETTINGS). */
  userSettings?: Record<string, unknown>;
  /** Hard limit for the whole run, start to cleanup. Default 5 min. */
  timeoutMs?: number;
  /** The name of the screenshot taken when `fn` fails (test-artifacts/<name>.png). Default `failed-<time>`. */
  failureShot?: string;
  /** Where screenshots go (created). Default <repo>/test-artifacts. */
  screenshotDir?: string;
  /**
   * Answer modal dialogs (e.g. the extension's permission prompt) by clicking the first button whose label
   * matches, trying the patterns in order. Unset: dialogs are left alone. Only useful in withWorkbench():
   * while an extensionTestsPath runs, VS Code never shows dialogs (they answer as if closed).
   */
  dialogButtons?: RegExp[];
  /** Print every browser console line, not only the extension host's (tests) and workbench errors. Default: AGENT_HOST_VSCODE_VERBOSE=1. */
  verbose?: boolean;
  /** Keep the scratch folder (logs, profile, user data) after the run. Default: only when it failed. */
  keepScratch?: boolean;
  /** Viewport of the page. Default 1400×900. */
  viewport?: { width: number; height: number };
  /**
   * Workspace trust on (VS Code's default; no start-up prompt): the folder opens in Restricted Mode until
   * trusted. Default off: every other test runs trusted.
   */
  workspaceTrust?: boolean;
  /** The display language (`--locale`, and a language pack of no translations: test/vscode/displayLanguage.ts). */
  locale?: string;
}

/** A Session's options: a window may also open no folder at all (an empty window). */
export type SessionOptions = Omit<WorkbenchOptions, 'workspace'> & { workspace?: string | undefined };

export interface WorkbenchInfo {
  port: number;
  url: string;
  scratch: string;
  screenshotDir: string;
  /** Saves a full-page PNG as <screenshotDir>/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
}

const log = (line: string) => process.stdout.write(`[vscode-runner] ${line}\n`);

/**
 * Opens the workbench with the extension loaded (as a development extension) and the workspace, waits
 * for it to render, and hands the page to `fn`. Everything is torn down afterwards.
 */
export async function withWorkbench<T>(opts: WorkbenchOptions, fn: (page: Page, info: WorkbenchInfo) => Promise<T>): Promise<T> {
  const session = await Session.open(opts, undefined);
  let failed = true;
  try {
    const result = await session.race(async (page) => {
      await session.navigate(page);
      await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
      try {
        return await fn(page, session.info);
      } catch (error) {
        // What the window showed when the check failed: the first thing to look at.
        const shot = await session.info.screenshot(opts.failureShot ?? `failed-${Date.now()}`).catch(() => undefined);
        if (shot) log(`screenshot of the failure: ${shot}`);
        throw error;
      }
    });
    failed = false;
    return result;
  } finally {
    await session.close(failed);
  }
}

// ------------------------------------------------------------------------------------------------ internals

function extensionPaths(opts: SessionOptions): string[] {
  return [opts.extensionPath ?? REPO_ROOT].flat();
}

export class TimeoutError extends Error {}

/**
 * One code-server + Chromium, from start to teardown. `testsPath`: the module the extension host runs as
 * extensionTestsPath (test/vscode/launcher.ts); then the run's deadline resolves 124 instead of throwing.
 */
export class Session {
  private codeServer: ChildProcess | undefined;
  private context: BrowserContext | undefined;
  private readonly timer: NodeJS.Timeout;
  readonly deadline: Promise<never>;
  private readonly onSignal = (sig: NodeJS.Signals) => {
    this.killNow();
    if (!this.opts.keepScratch) fs.rmSync(this.scratch, { recursive: true, force: true, maxRetries: 3 });
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  private readonly onExit = () => this.killNow();
  private closed = false;
  private readonly marks: [string, number][] = [['start', Date.now()]];
  private mark(name: string): void {
    this.marks.push([name, Date.now()]);
  }
  private dialogTimer: NodeJS.Timeout | undefined;
  private readonly install: CodeServerInstall;
  private readonly console: ConsoleForwarder;
  port = 0;
  info!: WorkbenchInfo;
  /** The version of the code-server this session runs. */
  get version(): string {
    return this.install.version;
  }

  private readonly verbose: boolean;

  private constructor(
    private readonly opts: SessionOptions,
    private readonly testsPath: string | undefined,
    readonly scratch: string,
  ) {
    this.install = codeServerInstall(opts.codeServer);
    this.verbose = opts.verbose ?? process.env.AGENT_HOST_VSCODE_VERBOSE === '1';
    this.console = new ConsoleForwarder({ verbose: this.verbose, tests: !!testsPath });
    const timeoutMs = opts.timeoutMs ?? 5 * 60_000;
    let fire!: (e: Error) => void;
    this.deadline = new Promise<never>((_, reject) => (fire = reject));
    this.deadline.catch(() => undefined);
    this.timer = setTimeout(() => fire(new TimeoutError(`run exceeded ${timeoutMs} ms`)), timeoutMs);
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
    process.once('exit', this.onExit);
  }

  static async open(opts: SessionOptions, testsPath: string | undefined): Promise<Session> {
    const install = codeServerInstall(opts.codeServer);
    for (const [what, p] of [
      ['code-server (run scripts/setup-vscode.sh)', install.entry],
      ['the Node code-server runs on (run scripts/setup-vscode.sh)', install.node],
      ['Chromium (run scripts/setup-vscode.sh)', CHROMIUM],
      ...(opts.workspace === undefined ? [] : [['workspace', opts.workspace] as const]),
      ...(opts.vsix ? [opts.vsix].flat().map((v) => ['extension package', v] as const) : extensionPaths(opts).map((p) => ['extension folder', p] as const)),
      ...(testsPath ? [['tests module (run npm run build)', testsPath]] : []),
    ] as const) {
      if (!fs.existsSync(p)) throw new Error(`${what} not found: ${p}`);
    }
    // Short base path: VS Code puts unix sockets under TMPDIR/XDG_RUNTIME_DIR (108-byte limit).
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-vsc-'));
    const s = new Session(opts, testsPath, scratch);
    try {
      await Promise.race([s.start(), s.deadline]);
    } catch (error) {
      await s.close(true);
      throw error;
    }
    return s;
  }

  /** Runs `fn` against the hard deadline. */
  async race<T>(fn: (page: Page) => Promise<T>): Promise<T> {
    try {
      return await Promise.race([(async () => fn(await this.page()))(), this.deadline]);
    } catch (error) {
      if (error instanceof TimeoutError) {
        log(`TIMEOUT: ${error.message}`);
        if (this.context) await this.info.screenshot('timeout').catch(() => undefined);
        if (this.testsPath) return 124 as T;
      }
      throw error;
    }
  }

  private async page(): Promise<Page> {
    if (!this.context) throw new Error('the browser is not running');
    return this.context.pages()[0] ?? this.context.newPage();
  }

  async start(): Promise<void> {
    const dirs = {
      home: path.join(this.scratch, 'home'),
      tmp: path.join(this.scratch, 'tmp'),
      userData: this.opts.userDataDir ?? path.join(this.scratch, 'user-data'),
      extensions: this.opts.extensionsDir ?? path.join(this.scratch, 'extensions'),
      browser: path.join(this.scratch, 'browser'),
    };
    for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
    // User/ holds the user settings; Machine/ the remote-machine settings, the only place a remote window
    // (code-server's is one) reads machine-scoped settings such as agentHost.agents from.
    const trust = this.opts.workspaceTrust ? { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' } : {};
    const settings = `${JSON.stringify({ ...QUIET_SETTINGS, ...trust, ...this.opts.userSettings }, null, 2)}\n`;
    for (const sub of ['User', 'Machine']) {
      fs.mkdirSync(path.join(dirs.userData, sub), { recursive: true });
      fs.writeFileSync(path.join(dirs.userData, sub, 'settings.json'), settings);
    }
    const screenshotDir = this.opts.screenshotDir ?? path.join(REPO_ROOT, 'test-artifacts');
    this.info = {
      port: 0,
      url: '',
      scratch: this.scratch,
      screenshotDir,
      screenshot: async (name) => {
        fs.mkdirSync(screenshotDir, { recursive: true });
        const file = path.join(screenshotDir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
        const page = this.context?.pages()[0];
        if (!page) throw new Error('no page to take a screenshot of');
        await page.screenshot({ path: file, timeout: 15_000 });
        return file;
      },
    };

    // Variables of an enclosing VS Code / code-server would confuse the one we start (a test runner's own,
    // VSCODE_TEST_*, are for the extension host: @vscode/test-cli passes its options so).
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VSCODE_(?!TEST_)|ELECTRON_RUN_AS_NODE$)/.test(k)));
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      HOME: dirs.home,
      XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
      XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
      XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
      XDG_STATE_HOME: path.join(dirs.home, '.local', 'state'),
      XDG_RUNTIME_DIR: dirs.tmp,
      TMPDIR: dirs.tmp,
      ...this.opts.env,
    };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];

    const logFile = path.join(this.scratch, 'code-server.log');
    if (this.opts.vsix) {
      if (this.testsPath) throw new Error('an extensionTestsPath needs the development extension, not a vsix');
      const t = Date.now();
      const packages = [this.opts.vsix].flat();
      const install = [this.install.entry, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, ...packages.flatMap((v) => ['--install-extension', path.resolve(v)])];
      const output = await new Promise<string>((resolve, reject) => {
        execFile(this.install.node, install, { env, cwd: dirs.home, timeout: 90_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
          fs.appendFileSync(logFile, `${stdout}${stderr}`);
          if (error) reject(new Error(`code-server --install-extension failed (${error.message}):\n${stdout}${stderr}`));
          else resolve(stdout);
        });
      });
      log(`installed ${packages.map((v) => path.basename(v)).join(', ')} in ${Date.now() - t} ms: ${output.trim().split('\n').at(-1) ?? ''}`);
      this.mark('install');
    }
    if (this.opts.locale) userDataIn(dirs.userData, this.opts.locale);
    const out = fs.openSync(logFile, 'a');
    const args = [
      this.install.entry,
      '--bind-addr',
      '127.0.0.1:0',
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(this.opts.workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--user-data-dir',
      dirs.userData,
      '--extensions-dir',
      dirs.extensions,
      ...(this.opts.locale ? ['--locale', this.opts.locale] : []),
      // 4.139 exposes window.codeAutomationExit (the end of an extensionTestsPath run) only with the smoke-test
      // driver on; 4.99 always does, and has no --vscode-option.
      ...(hasVscodeOption(this.install) ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    ];
    const cs = spawn(this.install.node, args, { env, cwd: dirs.home, detached: true, stdio: ['ignore', 'pipe', out] });
    this.codeServer = cs;
    fs.closeSync(out); // the child has its own copy
    const t0 = Date.now();
    this.port = await new Promise<number>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`code-server did not listen within 30 s (log: ${logFile})`)), 30_000);
      cs.once('exit', (code, sig) => {
        clearTimeout(timer);
        reject(new Error(`code-server exited early (${code ?? sig}); log:\n${tail(logFile)}`));
      });
      cs.stdout!.on('data', (chunk: Buffer) => {
        fs.appendFileSync(logFile, chunk);
        buf += chunk.toString();
        const m = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(buf);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    cs.stdout!.removeAllListeners('data');
    cs.stdout!.on('data', (chunk: Buffer) => fs.appendFileSync(logFile, chunk));
    await waitHealthy(this.port);
    this.info.port = this.port;
    log(`code-server ${this.install.version} (VS Code ${this.install.vscodeVersion}) on 127.0.0.1:${this.port} in ${Date.now() - t0} ms (pid ${cs.pid}; scratch ${this.scratch})`);
    this.mark('code-server');

    const { chromium } = await import('playwright-core').catch((error: Error) => {
      throw new Error(`playwright-core is not installed (a devDependency; run npm install): ${error.message}`);
    });
    this.context = await chromium.launchPersistentContext(dirs.browser, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: this.opts.viewport ?? { width: 1400, height: 900 },
      env: { ...process.env, HOME: dirs.home, TMPDIR: dirs.tmp, XDG_CONFIG_HOME: path.join(dirs.home, '.config') } as Record<string, string>,
      timeout: 60_000,
    });
    this.mark('browser');
    const page = this.context.pages()[0] ?? (await this.context.newPage());
    page.on('console', (msg) => this.console.forward(msg));
    page.on('pageerror', (error) => {
      if (this.verbose) log(`page error: ${error.message}`);
    });
    if (this.opts.dialogButtons?.length) this.watchDialogs(page, this.opts.dialogButtons);
  }

  /** The workbench URL for the workspace, with the extension (and tests) as development extension unless a vsix was installed. */
  workbenchUrl(): string {
    const remote = (p: string) => `vscode-remote://127.0.0.1:${this.port}${path.resolve(p)}`;
    const q = new URLSearchParams();
    const ws = this.opts.workspace;
    if (ws === undefined)
      q.set('ew', 'true'); // an empty window, not the last folder
    else q.set(ws.endsWith('.code-workspace') ? 'workspace' : 'folder', path.resolve(ws));
    if (!this.opts.vsix) {
      const payload: [string, string][] = extensionPaths(this.opts).map((p) => ['extensionDevelopmentPath', remote(p)]);
      if (this.testsPath) payload.push(['extensionTestsPath', remote(this.testsPath)]);
      q.set('payload', JSON.stringify(payload));
    }
    return `http://127.0.0.1:${this.port}/?${q.toString()}`;
  }

  async navigate(page: Page): Promise<void> {
    this.info.url = this.workbenchUrl();
    await page.goto(this.info.url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  }

  private watchDialogs(page: Page, patterns: RegExp[]): void {
    let busy = false;
    this.dialogTimer = setInterval(() => {
      if (busy || this.closed) return;
      busy = true;
      void (async () => {
        const box = page.locator('.monaco-dialog-box').first();
        if (!(await box.isVisible().catch(() => false))) return;
        const message = (
          (await box
            .locator('.dialog-message-text')
            .first()
            .textContent()
            .catch(() => '')) ?? ''
        ).trim();
        const buttons = box.locator('.dialog-buttons .monaco-button');
        const labels = (await buttons.allTextContents().catch(() => [] as string[])).map((l) => l.trim());
        for (const re of patterns) {
          const i = labels.findIndex((l) => re.test(l));
          if (i >= 0) {
            log(`dialog "${message}" [${labels.join(' | ')}] → ${labels[i]}`);
            await buttons.nth(i).click({ timeout: 5000 });
            return;
          }
        }
        log(`dialog "${message}" [${labels.join(' | ')}]: no button matches ${patterns.join(', ')}`);
      })()
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, 250);
  }

  async close(failed: boolean): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    if (this.dialogTimer) clearInterval(this.dialogTimer);
    this.mark(this.testsPath ? 'workbench+tests' : 'workbench');
    await atMost(this.console.flushed(), 3000); // print what is still being formatted
    const browserPids = pidsWithArg(path.join(this.scratch, 'browser'));
    if (this.context) {
      await atMost(
        this.context.close().catch(() => undefined),
        10_000,
      );
    }
    const roots = [...browserPids, ...pidsWithArg(path.join(this.scratch, 'browser'))];
    if (this.codeServer?.pid) roots.push(this.codeServer.pid);
    await killTrees(roots, 3000);
    this.mark('teardown');
    const phases = this.marks.slice(1).map(([name, t], i) => `${name} ${((t - this.marks[i]![1]) / 1000).toFixed(1)} s`);
    log(`timings: ${phases.join(', ')}`);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    process.off('exit', this.onExit);
    const keep = this.opts.keepScratch ?? (failed || process.env.AGENT_HOST_KEEP_SCRATCH === '1');
    if (keep) log(`scratch kept: ${this.scratch} (code-server.log inside)`);
    else fs.rmSync(this.scratch, { recursive: true, force: true, maxRetries: 3 });
  }

  private killNow(): void {
    const roots = pidsWithArg(path.join(this.scratch, 'browser'));
    if (this.codeServer?.pid) roots.push(this.codeServer.pid);
    killTreesNow(roots);
  }
}

async function waitHealthy(port: number): Promise<void> {
  const healthy = () =>
    new Promise<boolean>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
  await until(healthy, { what: `code-server on port ${port} to be healthy`, timeoutMs: 30_000, intervalMs: 200 });
}

/** Waits for `p`, at most `ms`; the timer is cleared either way, so it never keeps the test process alive. */
async function atMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
