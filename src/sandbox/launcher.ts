/**
 * The sandbox launcher (dist/sandbox.mjs): one Node process per sandboxed agent, between the host and the agent.
 * It sets up `@anthropic-ai/sandbox-runtime` with the agent's policy (bubblewrap on Linux, seatbelt on macOS, and
 * the library's filtering proxies, which live in this process), then runs the agent inside it with the host's
 * stdin, stdout and stderr passed straight through, so the protocol's frames never pass through here.
 *
 *   node dist/sandbox.mjs --check                    prints {"ok", "errors", "warnings"} for this machine, exit 0
 *   node dist/sandbox.mjs [--reports-fd N] SETTINGS_JSON -- CMD ARG…  runs CMD sandboxed; reports to fd N
 *
 * Reports (JSON lines on fd N, when the host names one): `{"type":"ready"}` once the agent is started;
 * `{"type":"network","host","port"}` for each connection the proxy refused; `{"type":"failed","reason"}` when the
 * sandbox could not be set up (the agent is then not started: exit 126). Nothing from inside the sandbox can
 * write there: fd 3 is replaced by /dev/null in the agent's process (the host's channel is fd 3).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// An ES module only: loaded with import() (esbuild inlines it in the bundle; tsc's CommonJS output would not load it).
type Runtime = typeof import('@anthropic-ai/sandbox-runtime', { with: { 'resolution-mode': 'import' }});
type SandboxRuntimeConfig = Parameters<Runtime['SandboxManager']['initialize']>[0];
const runtime = (): Promise<Runtime> => import('@anthropic-ai/sandbox-runtime');

/** Exit code when the sandbox could not be set up and the agent was not started. */
export const SANDBOX_FAILED_EXIT = 126;

/** The host's channel, when it names one (`--reports-fd 3`); a report that cannot be written is dropped. */
function openReports(fd: number | undefined): fs.WriteStream | undefined {
  if (fd === undefined) return undefined;
  try {
    fs.fstatSync(fd);
    const stream = fs.createWriteStream('', { fd });
    stream.on('error', () => {});
    return stream;
  } catch {
    return undefined;
  }
}

let reports: fs.WriteStream | undefined;
const report = (event: Record<string, unknown>) => reports?.write(`${JSON.stringify(event)}\n`);

/** Quotes one word for `bash -c` (the library runs the command through a shell inside the sandbox). */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** In each workspace folder, what runs code or configures tools and stays unwritable when it exists (the runtime's list, and Atrium's protected files). */
const PROTECTED = [
  '.git/hooks',
  '.git/config',
  '.gitmodules',
  '.gitconfig',
  '.vscode',
  '.idea',
  '.devcontainer',
  '.husky',
  '.github/workflows',
  '.mcp.json',
  '.claude/commands',
  '.claude/agents',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
];

interface Loopback {
  direct: boolean;
  ports: number[];
}

/**
 * The agent's command line, run by a shell inside the sandbox. By default NO_PROXY (which the library sets to
 * loopback and private ranges) is cleared: the sandbox's own loopback has nothing listening, so a model server on the
 * host's 127.0.0.1 is reached through the proxy, which allows loopback. An agent with servers of its own on loopback
 * keeps NO_PROXY; each host port it needs is forwarded by a socat inside the sandbox, through the proxy's CONNECT
 * (its token read from HTTP_PROXY), to the same port of the host.
 */
function agentCommand(argv: string[], loopback: Loopback): string {
  if (!loopback.direct) return ['env', 'NO_PROXY=', 'no_proxy=', ...argv].map(quote).join(' ');
  const forwards = loopback.ports.map((p) => `socat TCP-LISTEN:${p},bind=127.0.0.1,fork,reuseaddr "PROXY:localhost:127.0.0.1:${p},proxyport=$pp,proxyauth=atrium:$t" & `).join('');
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, run by the shell in the sandbox.
  const proxy = loopback.ports.length ? 't=${HTTP_PROXY#*://}; t=${t%%@*}; t=${t#*:}; pp=${HTTP_PROXY##*:}; pp=${pp%/}; ' : '';
  return `${proxy}${forwards}exec ${argv.map(quote).join(' ')}`;
}

async function check(): Promise<void> {
  const { SandboxManager } = await runtime();
  const supported = SandboxManager.isSupportedPlatform();
  const deps = supported ? await SandboxManager.checkDependenciesAsync() : { errors: [`${process.platform} is not supported`], warnings: [] };
  process.stdout.write(`${JSON.stringify({ ok: supported && deps.errors.length === 0, errors: deps.errors, warnings: deps.warnings })}\n`);
}

async function run(settingsJson: string, argv: string[]): Promise<void> {
  let child: ReturnType<typeof spawn> | undefined;
  const fail = (reason: string) => {
    report({ type: 'failed', reason });
    process.stderr.write(`Atrium sandbox: ${reason}\n`);
    process.exit(SANDBOX_FAILED_EXIT);
  };
  let config: SandboxRuntimeConfig;
  let loopback: Loopback = { direct: false, ports: [] };
  let protect: string[] = [];
  try {
    const parsed = JSON.parse(settingsJson) as SandboxRuntimeConfig & { loopback?: Loopback; protect?: string[] };
    // Ours, not the runtime's (it checks its settings strictly).
    if (parsed.loopback) loopback = { direct: parsed.loopback.direct === true, ports: (parsed.loopback.ports ?? []).filter((p) => Number.isInteger(p) && p > 0 && p < 65536) };
    protect = (parsed.protect ?? []).filter((p) => typeof p === 'string' && path.isAbsolute(p));
    delete parsed.loopback;
    delete parsed.protect;
    config = parsed;
  } catch (e) {
    return fail(`the policy is not JSON: ${(e as Error).message}`);
  }
  if (argv.length === 0) return fail('no command to run');
  // A writable folder must exist to be mounted writable: an agent's state folder it has not made yet is made now
  // (as the agent would on its first start). A name with an extension is a file (~/.claude.json): left alone.
  for (const folder of config.filesystem?.allowWrite ?? []) {
    if (typeof folder !== 'string' || path.extname(folder) || fs.existsSync(folder)) continue;
    try {
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    } catch {
      /* not ours to make (a read-only parent): the agent will say */
    }
  }
  // The runtime protects files that run code (.git/hooks, .vscode, .mcp.json, shell rc files…) in the folder it is
  // started from, and where one is missing it holds a placeholder (an empty file or folder) on the host for as long as
  // the sandbox runs — a `.vscode` file in the workspace would keep VS Code from writing its settings. So it starts
  // from an empty folder of its own, and those of the workspace's folders that exist are denied here by name.
  const agentCwd = process.cwd();
  // The runtime's bridges are Unix sockets in the temp folder, whose paths may not pass 107 bytes: under a deep
  // TMPDIR (a test's scratch folder, a nested home) they could never be made, so this process uses /tmp for its
  // own. The agent's temp folder is the runtime's (it sets the sandbox's TMPDIR) and the policy's, not this one.
  if (Buffer.byteLength(path.join(os.tmpdir(), 'claude-socks-0123456789abcdef.sock')) > 100 && fs.existsSync('/tmp')) process.env.TMPDIR = '/tmp';
  const shadow = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-sandbox-'));
  process.chdir(shadow);
  process.on('exit', () => fs.rmSync(shadow, { recursive: true, force: true }));
  const denied = protect.flatMap((root) => PROTECTED.map((p) => path.join(root, p))).filter((p) => fs.existsSync(p));
  config = { ...config, filesystem: { ...config.filesystem, denyWrite: [...(config.filesystem?.denyWrite ?? []), ...denied] } };
  const { SandboxManager } = await runtime();
  for (let attempt = 1; ; attempt++) {
    try {
      // A host no rule allows is refused, and said (the host shows it, with an action to allow it).
      await SandboxManager.initialize(config, async ({ host, port }) => {
        report({ type: 'network', host, ...(port !== undefined ? { port } : {}) });
        return false;
      });
      break;
    } catch (e) {
      const message = (e as Error).message;
      // The runtime waits about a second for socat's bridge sockets; on a loaded machine they come later (seen in
      // this project's suite on two cores): tried again, twice, after a reset.
      if (attempt >= 3 || !/bridge sockets/i.test(message)) return fail(message);
      process.stderr.write(`Atrium sandbox: ${message}; trying again (${attempt + 1} of 3)\n`);
      await Promise.race([SandboxManager.reset().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
  }
  const command = agentCommand(argv, loopback);
  let wrapped: string;
  try {
    wrapped = await SandboxManager.wrapWithSandbox(command);
  } catch (e) {
    return fail((e as Error).message);
  }
  const devNull = fs.openSync('/dev/null', 'r');
  // `exec`: the shell becomes bwrap (sandbox-exec), so this process is its parent and reaps it before it exits —
  // a stop leaves nothing of the sandbox behind.
  const single = /^(bwrap|sandbox-exec|env) /.test(wrapped);
  child = spawn('/bin/sh', ['-c', single ? `exec ${wrapped}` : wrapped], { cwd: agentCwd, stdio: ['inherit', 'inherit', 'inherit', devNull] });
  report({ type: 'ready' });
  const stop = (signal: NodeJS.Signals) => child?.kill(signal);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => stop('SIGHUP'));
  child.on('error', (e) => fail(`could not start the agent: ${e.message}`));
  child.on('exit', (code, signal) => {
    SandboxManager.cleanupAfterCommand();
    // The runtime's reset waits for its proxies' connections to close, which an agent's keep-alive ones may not do:
    // the agent has ended, so this process ends within half a second whatever the reset still waits for.
    const done = () => process.exit(signal ? 128 + (os.constants.signals[signal] ?? 0) : (code ?? 1));
    setTimeout(done, 500).unref();
    // A signal's death said as the shell says it (our own handlers would catch the signal sent again).
    void SandboxManager.reset().finally(done);
  });
}

// Set by the host so that an editor's Electron runs this as Node; not the agent's.
delete process.env.ELECTRON_RUN_AS_NODE;
const args = process.argv.slice(2);
if (args[0] === '--check') {
  void check();
} else {
  const named = args[0] === '--reports-fd' ? Number(args[1]) : undefined;
  if (named !== undefined) args.splice(0, 2);
  reports = openReports(named !== undefined && Number.isInteger(named) && named >= 3 ? named : undefined);
  const dash = args.indexOf('--');
  void run(args[0] ?? '', dash < 0 ? [] : args.slice(dash + 1));
}
