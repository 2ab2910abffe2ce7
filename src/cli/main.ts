import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { redactingLogger, streamLogger, type LogLevel } from '../core/log';
import { agentEnvironment, type AgentConfig } from '../session/agentConfig';
import { openSessionDirectory, startAgentSession } from '../adapters/factory';
import { headerReference } from '../session/remoteHeaders';
import { defaultStateDir, SessionStore } from '../session/sessionStore';
import { runSessions, SESSIONS_USAGE } from './sessionsCommand';
import { cliSandbox, reportingSandbox, UsageError } from './sandboxFlag';
import type { SandboxChoice } from '../agents/sandbox';
import { withMcpLoopback } from '../session/sandboxPolicy';
import { AGENT_OPTIONS, type AgentValues, agentFromFile, envPairs, mcpServersFromFlags, splitAgentWords, tlsFlags, withAgentCommand } from './agentOptions';
import { AGENT_VERBS, runAgentsCommand } from './agentsCommand';
import { runCheckCommand } from './checkCommand';
import { openCheckHost } from '../check/checkHost';
import { FileService } from '../host/fileService';
import { protectedBy, refusingProtectedCalls } from '../host/protectedPaths';
import { TerminalService } from '../host/terminalService';
import { headlessRpcUi } from '../rpc/extensionUi';
import { TURN_EXIT_CODES } from '../session/agentSession';
import { workspaceFileTools } from '../host/workspaceFileTools';
import { policyDecider, type PolicyName } from '../session/permissions';
import { HostRequestError, type AgentStartOptions } from '../session/sessionHost';
import type { SessionEvent } from '../session/sessionModel';
import { TextRenderer } from '../session/transcriptText';
import { stderr, stdout } from './terminal';
import { runPrompt } from './runPrompt';
import { runTask, TASK_USAGE, TASK_VERBS, type TaskVerb } from './taskCommand';
import { parseRange } from './taskInput';
import { languageIdOf } from '../tasks/textRanges';
import type { TaskRange } from '../session/selectionTask';
import type { Logger } from '../core/log';
import { runServe } from '../gateway/serve';
import { FANOUT_USAGE, fanoutVerb } from './fanoutCommand';
import { SERVE_USAGE, serveSettings } from '../gateway/serveOptions';

const USAGE = `Usage: agent-host [options] <prompt…>
       agent-host [options] <prompt…> -- CMD [ARG…]   (an ad-hoc agent: its command and arguments as written)
       agent-host sessions list|show|export|rename|delete … (see agent-host sessions --help)
       agent-host registry list|search, install ID, uninstall ID, installed (see agent-host install --help)
       agent-host check --preset ID [--scripted] [--format text|json|markdown] … (see agent-host check --help)
       agent-host task explain|docstring|optimize|fix|tests --file F --range L1:C1-L2:C2 [--language en|zh]
                       [agent options] (a selection command: prints the answer or the proposed edit as a
                       unified diff, writes no file; see agent-host task --help)
       agent-host fanout --config FILE --agent A --agent B [--check CMD] [--keep] [--apply RUN] <prompt…>
                       (one prompt on several agents in parallel, each in a git worktree of its own; one
                       row per run; see agent-host fanout --help)
       agent-host serve --listen HOST:PORT [agent options] [--allow-remote] [limits]   (a gateway: the agent
                       over ACP's remote transport at http://HOST:PORT/acp, a fresh process per connection;
                       token from ACP_REMOTE_TOKEN; see agent-host serve --help)

Runs one prompt against an agent and prints the session as it happens. Every session is recorded in a
local index (title, agent, folder, a copy of the transcript) that the editor shares; an id already recorded
for another agent or folder is not taken over (the session runs unrecorded, said in its transcript).
Control characters from the agent are printed as visible escapes (\\u001b), never sent to the terminal.
An agent that crashes mid-turn is started again once (after 1 s) with its session reattached and told to carry
on (a NEW session gets the prompt again); said on stderr and as a JSON "restart" event. A second crash gives up.

Agent (one of):
  --config FILE        agents as [{name, command, args, env, protocol}] or {"agent_servers": {…}}
  --agent NAME         which agent of --config (default: the first)
  --command CMD        an ad-hoc agent; with --arg ARG (repeatable; the word after --arg is the
                       agent's even when it starts with "-": --arg -c), --env K=V (repeatable)
  -- CMD [ARG…]        the same, last: every word after "--" is the agent's command and arguments
  --protocol acp|rpc   protocol of an ad-hoc agent (default acp)
  --url URL            a remote ACP agent: ws(s)://…/acp over a WebSocket, http(s)://…/acp over Streamable
                       HTTP; the token (sent as Authorization: Bearer) comes from ACP_REMOTE_TOKEN (never a
                       flag); --ca FILE names a CA to trust, --fingerprint SHA256 a self-signed wss:// certificate
  --url ws://… --protocol agent-service
                       an agent service (seed 003's WebSocket protocol): the key comes from
                       AGENT_SERVICE_API_KEY (never a flag); a prompt is an exec_chat task

Options:
  --cwd DIR            workspace folder (default: current directory)
  --resume ID          continue an earlier session: session/resume, else session/load, else a NEW
                       session (said on stderr and in the JSON "session" event's "attach")
  --state-dir DIR      where the local session index lives (default $XDG_STATE_HOME/agent-host)
  --approve-all        allow every tool call
  --approve-reads      allow read and search tool calls, reject the rest (fetch and think too)
  --deny-all           reject every tool call (default)
                       (under --deny-all and --approve-reads the agent may not write files or run
                       terminal commands through the host either)
  --allow-protected    let the agent write protected files and allow tool calls that change them, at any
                       depth: .git (folder or file) and what is in it, .gitmodules, .gitattributes, .vscode,
                       .idea, .devcontainer(.json), .husky, .github/workflows, .env*, .npmrc,
                       *.code-workspace; refused otherwise, even under --approve-all
  --allow-env NAME     let the agent set NAME for its terminal commands (repeatable); of what it asks for,
                       only colour, size, locale, time zone and CI variables pass otherwise (the rest is
                       dropped and said)
  --host-tools         offer the agent read-only workspace tools (read_project_file, get_document_symbols;
                       pi RPC fork dialect)
  --mcp-config FILE    MCP servers for the agent (repeatable), in VS Code's mcp.json shape: {"servers": {NAME:
                       {command, args, env} or {type: "http"|"sse", url, headers}}} ({"mcpServers": …} too); a
                       later file's server replaces an earlier one's of the same name. \${env:NAME},
                       \${workspaceFolder} (--cwd) and \${userHome} are resolved; \${input:…} is an error (the
                       CLI does not prompt). An ACP agent gets stdio servers, http/sse ones if it takes them.
                       The CLI never reads .vscode/mcp.json by itself (a repository's file would run its commands)
  --no-mcp             pass no MCP servers, even with --mcp-config
  --sandbox MODE       workspace-write (writes only in --cwd, temp and the agent's own folders), read-only,
                       or off: the agent and all it starts run in a filesystem and network sandbox
                       (bubblewrap on Linux, seatbelt on macOS); credential stores unreadable, network only
                       to the agent's model hosts and loopback. Default: the agent entry's "sandbox", else
                       workspace-write; a mode asked for where the machine cannot sandbox exits 3 (the
                       default warns and runs unsandboxed). What it
                       blocks is said on stderr ({"type":"sandbox"} events with --format json)
  --format text|json   readable text (default) or one JSON event per line
  --timeout SECONDS    timeout of each request other than the prompt (default 60)
  --log-level LEVEL    trace|debug|info|warn|error|off for stderr (default warn)

Exit codes: 0 end_turn, 1 error, 2 usage, 3 agent failed to start (a remote agent that refused the
            token or API key too), 4 agent exited mid-turn (or its connection dropped),
            5 refusal, 6 max_tokens/max_turn_requests, 7 cancelled.`;

function fail(message: string, code: number): never {
  stderr(`agent-host: ${message}\n`);
  process.exit(code);
}

function resolveAgent(values: Record<string, unknown>, required = true, usageText = USAGE): AgentConfig | undefined {
  if (!required && typeof values.command !== 'string' && typeof values.config !== 'string') return undefined;
  const usage = (error: unknown): never => fail((error as Error).message, TURN_EXIT_CODES.usage!);
  if (typeof values.url === 'string' || values.protocol === 'agent-service') {
    // A URL is a remote ACP agent unless --protocol agent-service says otherwise.
    const service = values.protocol === 'agent-service';
    if (![undefined, 'acp', 'agent-service'].includes(values.protocol as string | undefined)) fail('--url takes --protocol acp (the default) or agent-service', TURN_EXIT_CODES.usage!);
    const scheme = service ? /^wss?:\/\/[^/]/ : /^(wss?|https?):\/\/[^/]/;
    if (typeof values.url !== 'string' || !scheme.test(values.url)) {
      fail(service ? '--protocol agent-service needs --url ws://HOST:PORT/… (or wss://)' : '--url must start with ws://, wss://, http:// or https://', TURN_EXIT_CODES.usage!);
    }
    if (typeof values.command === 'string' || typeof values.config === 'string') fail('--url names the agent: give it without --command or --config', TURN_EXIT_CODES.usage!);
    if (!service && typeof values.fingerprint === 'string' && !values.url.startsWith('wss:')) fail('--fingerprint is for wss:// agents (give --ca FILE)', TURN_EXIT_CODES.usage!);
    const tls = tlsFlags(values);
    const name = service ? 'agent-service' : 'remote';
    return { name, command: values.url, url: values.url, protocol: service ? 'agent-service' : 'acp', ...(tls ? { tls } : {}) };
  }
  if (typeof values.command === 'string') {
    let env: Record<string, string> = {};
    try {
      env = envPairs(values.env as string[] | undefined);
    } catch (error) {
      usage(error);
    }
    const protocol = (values.protocol as string | undefined) ?? 'acp';
    if (protocol !== 'acp' && protocol !== 'rpc') fail('--protocol must be acp, rpc or agent-service (with --url)', TURN_EXIT_CODES.usage!);
    return { name: 'cli', command: values.command, args: (values.arg as string[] | undefined) ?? [], env, protocol };
  }
  if (typeof values.config !== 'string') fail(`give --config FILE or --command CMD\n\n${usageText}`, TURN_EXIT_CODES.usage!);
  try {
    return agentFromFile(values.config, values.agent as string | undefined);
  } catch (error) {
    return usage(error);
  }
}

/**
 * The agent service's key (AGENT_SERVICE_API_KEY) or a remote ACP agent's token (ACP_REMOTE_TOKEN), and the
 * entry's extra headers: `${env:NAME}` read from the environment; `${secret:NAME}` lives in the editor's secret
 * storage, which the CLI has not (a usage error naming the header).
 */
function remoteSecret(agent: AgentConfig): { apiKey?: string; headers?: Record<string, string> } {
  const secret = agent.protocol === 'agent-service' ? process.env.AGENT_SERVICE_API_KEY : agent.url ? process.env.ACP_REMOTE_TOKEN : undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(agent.headers ?? {})) {
    const ref = headerReference(value);
    if (ref?.kind === 'secret') fail(`header "${name}" names the editor's secret "${ref.name}": the CLI reads \${env:NAME} references only`, TURN_EXIT_CODES.usage!);
    const found = ref ? process.env[ref.name] : value;
    if (!found) fail(`header "${name}" needs the environment variable ${ref?.name}, which is not set`, TURN_EXIT_CODES.usage!);
    headers[name] = found;
  }
  return { ...(secret ? { apiKey: secret } : {}), ...(Object.keys(headers).length ? { headers } : {}) };
}

/** The agent and how every start of it runs, from the agent options (a usage error exits 2). */
async function agentRun(values: AgentValues, usageText: string): Promise<{ agent: AgentConfig; options: AgentStartOptions; cwd: string; logger: Logger; format: 'text' | 'json' }> {
  const policies = (['approve-all', 'approve-reads', 'deny-all'] as const).filter((p) => values[p]);
  if (policies.length > 1) fail('choose one of --approve-all, --approve-reads, --deny-all', TURN_EXIT_CODES.usage!);
  const policy: PolicyName = policies[0] ?? 'deny-all';
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') fail('--format must be text or json', TURN_EXIT_CODES.usage!);
  const timeoutS = values.timeout ? Number(values.timeout) : 60;
  if (!(timeoutS > 0)) fail('--timeout must be a positive number of seconds', TURN_EXIT_CODES.usage!);
  const agent = resolveAgent(values, true, usageText)!;
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const logger = redactingLogger(streamLogger(stderr, (values['log-level'] as LogLevel | undefined) ?? 'warn'));
  // The user's MCP servers: only from --mcp-config files, never from the workspace's own .vscode/mcp.json.
  let mcp: Awaited<ReturnType<typeof mcpServersFromFlags>> = { servers: [], warnings: [] };
  try {
    mcp = await mcpServersFromFlags(values, { cwd, env: process.env, userHome: os.homedir(), only: agent.mcpServers });
  } catch (error) {
    fail((error as Error).message, TURN_EXIT_CODES.usage!);
  }
  for (const w of mcp.warnings) stderr(`agent-host: warning: ${w}\n`);
  let sandbox: SandboxChoice;
  try {
    sandbox = await cliSandbox(values.sandbox, agent, { cwd, fallback: 'workspace-write', warn: (line) => stderr(`agent-host: ${line}\n`) });
  } catch (error) {
    fail((error as Error).message, error instanceof UsageError ? TURN_EXIT_CODES.usage! : TURN_EXIT_CODES.start_failed!);
  }
  if (sandbox.launch) logger.info(`Sandbox: ${sandbox.description}`);

  const options: AgentStartOptions = {
    logger,
    cwd,
    decidePermission: values['allow-protected']
      ? policyDecider(policy)
      : refusingProtectedCalls(
          policyDecider(policy),
          () => [cwd],
          (file, pattern) => logger.warn(`Rejected a tool call on a protected file: ${file} (${pattern}); --allow-protected allows it`),
        ),
    files: new FileService(
      () => [cwd],
      undefined,
      undefined,
      async (abs) => {
        if (policy !== 'approve-all') throw new HostRequestError('refused', `Refused by --${policy}: the agent may not write ${abs}`);
        const pattern = protectedBy(abs, [cwd]);
        if (pattern && !values['allow-protected']) {
          throw new HostRequestError('refused', `Refused: ${abs} is a protected file (${pattern}); run with --allow-protected to allow it`);
        }
      },
    ),
    terminals: new TerminalService(() => [cwd], undefined, {
      baseEnv: () => agentEnvironment(agent),
      allowedEnv: () => values['allow-env'] ?? [],
      allowedEnvSource: '--allow-env NAME',
      sandbox: () => sandbox.launch,
      guard: async (spec) => {
        if (policy !== 'approve-all') throw new HostRequestError('refused', `Refused by --${policy}: the agent may not run "${spec.command}"`);
      },
    }),
    // pi RPC extension dialogs: confirm/select follow the approval policy, input is dismissed, editor keeps its text.
    ui: headlessRpcUi({ policy: policy === 'approve-all' ? 'approve-all' : 'deny-all', log: (l) => logger.info(l) }),
    // The CLI runs no MCP bridge: its file tools reach pi RPC agents only.
    ...(values['host-tools'] ? { ideTools: { tools: workspaceFileTools(cwd), mcpServer: async () => undefined } } : {}),
    ...(mcp.servers.length ? { mcpServers: mcp.servers } : {}),
    ...(sandbox.launch ? { sandbox: withMcpLoopback(sandbox.launch, mcp.servers) } : {}),
    requestTimeoutMs: timeoutS * 1000,
    initializeTimeoutMs: timeoutS * 1000,
    // A remote agent's secret: from the environment only, never a flag (a flag shows in `ps`).
    ...remoteSecret(agent),
  };
  return { agent, options, cwd, logger, format };
}

/** `agent-host task TASK --file F --range R [agent options]`: its own options checked (each a usage error, exit 2), then the task. */
async function runTaskVerb(argv: string[]): Promise<number> {
  const words = splitAgentWords(argv);
  const usage = (message: string, withUsage = false): never => fail(`task: ${message}${withUsage ? `\n\n${TASK_USAGE}` : ''}`, TURN_EXIT_CODES.usage!);
  let parsed;
  try {
    parsed = parseArgs({ args: words.options, allowPositionals: true, options: { ...AGENT_OPTIONS, file: { type: 'string' }, range: { type: 'string' }, language: { type: 'string' } } });
  } catch (error) {
    return usage((error as Error).message, true);
  }
  let values = parsed.values;
  try {
    values = withAgentCommand(values, words.agentCommand);
  } catch (error) {
    return usage((error as Error).message, true);
  }
  if (values.help) {
    stdout(`${TASK_USAGE}\n`);
    return 0;
  }
  const [task, ...extra] = parsed.positionals;
  if (!(TASK_VERBS as readonly string[]).includes(task ?? '')) return usage(`give one of ${TASK_VERBS.join(', ')}${task ? `, not "${task}"` : ''}`, true);
  if (extra.length > 0) return usage(`unexpected words after the task: ${extra.join(' ')}`, true);
  if (!values.file) return usage('give --file FILE', true);
  if (!values.range) return usage('give --range L1:C1-L2:C2 or --range L1-L2', true);
  const language = values.language ?? 'en';
  if (language !== 'en' && language !== 'zh') return usage('--language must be en or zh');
  const { agent, options, cwd, logger, format } = await agentRun(values, TASK_USAGE);
  const file = path.resolve(values.file!);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return usage(`cannot read --file ${values.file}: ${(error as Error).message}`);
  }
  const rel = path.relative(cwd, file);
  // The diff names the file relative to the workspace, and the test plan looks at the workspace's files.
  if (rel.startsWith('..') || path.isAbsolute(rel)) return usage(`--file ${values.file} is not inside the workspace folder ${cwd} (give --cwd)`);
  let selected: TaskRange;
  try {
    selected = parseRange(values.range!, text, file);
  } catch (error) {
    return usage((error as Error).message);
  }
  // Text: only the answer or the diff on stdout, so it can be piped (git apply); json: the session's events too.
  const emit = reportingSandbox(format, format === 'json' ? (event: object) => stdout(`${JSON.stringify(event)}\n`) : () => undefined, (l) => stderr(`agent-host: ${l}\n`));
  return runTask({ task: task as TaskVerb, file, text, languageId: languageIdOf(file), selected, language, cwd, agent, options, format, emit, logger, startAgent: startAgentSession });
}

/** `agent-host serve --listen HOST:PORT [agent options] [limits]`: its options checked (each a usage error, exit 2), then the gateway. */
function runServeVerb(argv: string[]): Promise<number> {
  const words = splitAgentWords(argv);
  const usage = (message: string): never => fail(`serve: ${message}\n\n${SERVE_USAGE}`, TURN_EXIT_CODES.usage!);
  const a = AGENT_OPTIONS;
  const options = {
    ...{ config: a.config, agent: a.agent, command: a.command, arg: a.arg, env: a.env, protocol: a.protocol, cwd: a.cwd, help: a.help, 'log-level': a['log-level'] },
    listen: { type: 'string' },
    'allow-remote': { type: 'boolean' },
    'max-connections': { type: 'string' },
    'max-message-bytes': { type: 'string' },
    'idle-timeout': { type: 'string' },
    sandbox: { type: 'string' },
    'no-sandbox': { type: 'boolean' },
  } as const;
  let values;
  try {
    values = withAgentCommand(parseArgs({ args: words.options, options }).values, words.agentCommand);
  } catch (error) {
    return usage((error as Error).message);
  }
  if (values.help) {
    stdout(`${SERVE_USAGE}\n`);
    return Promise.resolve(0);
  }
  let settings;
  try {
    settings = serveSettings(values);
  } catch (error) {
    return fail(`serve: ${(error as Error).message}`, TURN_EXIT_CODES.usage!);
  }
  const agent = resolveAgent(values, true, SERVE_USAGE)!;
  const logger = redactingLogger(streamLogger(stderr, (values['log-level'] as LogLevel | undefined) ?? 'warn'));
  if (values.sandbox !== undefined && values.sandbox !== 'workspace-write' && values.sandbox !== 'read-only') return usage('--sandbox must be workspace-write or read-only (--no-sandbox for none)');
  if (values.sandbox !== undefined && values['no-sandbox']) return usage('give --sandbox MODE or --no-sandbox, not both');
  const sandbox = values['no-sandbox'] ? 'off' : ((values.sandbox as 'workspace-write' | 'read-only' | undefined) ?? 'workspace-write');
  const launcher = { node: process.execPath, launcher: path.join(__dirname, 'sandbox.mjs') };
  return runServe({ agent, cwd: path.resolve(values.cwd ?? process.cwd()), sandbox, launcher, ...settings, logger, env: process.env, out: stdout, err: (line) => stderr(`agent-host ${line}\n`) });
}

/** `agent-host fanout …` (src/cli/fanoutCommand.ts): each run's agent through the prompt mode's options, with its worktree as --cwd. */
function runFanoutVerb(argv: string[]): Promise<number> {
  return fanoutVerb(argv, {
    fail,
    prepare: async (values, spec, runCwd) => {
      const { agent, options, logger } = await agentRun({ ...values, agent: spec.agent, cwd: runCwd, format: 'json' }, FANOUT_USAGE);
      return { agent, options, logger };
    },
    startAgent: startAgentSession,
  });
}

async function main(): Promise<number> {
  // Registry verbs take their own options; only as the first word (a prompt may start with "install").
  if (AGENT_VERBS.has(process.argv[2] ?? '')) {
    return runAgentsCommand(process.argv.slice(2), { out: stdout, err: (t) => stderr(`agent-host: ${t}\n`), env: process.env });
  }
  if (process.argv[2] === 'task') return runTaskVerb(process.argv.slice(3));
  if (process.argv[2] === 'serve') return runServeVerb(process.argv.slice(3));
  if (process.argv[2] === 'fanout') return runFanoutVerb(process.argv.slice(3));
  if (process.argv[2] === 'check') {
    return runCheckCommand(process.argv.slice(3), {
      openHost: openCheckHost,
      env: process.env,
      logger: (level) => redactingLogger(streamLogger(stderr, level as LogLevel)),
      out: stdout,
      err: (t) => stderr(`agent-host check: ${t}\n`),
    });
  }
  const words = splitAgentWords(process.argv.slice(2));
  let parsed;
  try {
    parsed = parseArgs({
      args: words.options,
      allowPositionals: true,
      options: { ...AGENT_OPTIONS, resume: { type: 'string' }, 'state-dir': { type: 'string' } },
    });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`, TURN_EXIT_CODES.usage!);
  }
  const { positionals } = parsed;
  let values = parsed.values;
  try {
    values = withAgentCommand(values, words.agentCommand);
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`, TURN_EXIT_CODES.usage!);
  }
  const store = new SessionStore(values['state-dir'] ? path.resolve(values['state-dir']) : defaultStateDir());
  if (positionals[0] === 'sessions') {
    if (values.help || positionals.length === 1) {
      stdout(`${SESSIONS_USAGE}\n`);
      return values.help ? 0 : TURN_EXIT_CODES.usage!;
    }
    const sessionsFormat = values.format ?? 'text';
    if (sessionsFormat !== 'text' && sessionsFormat !== 'json') fail('--format must be text or json', TURN_EXIT_CODES.usage!);
    const named = resolveAgent(values, false);
    const logger = redactingLogger(streamLogger(stderr, (values['log-level'] as LogLevel | undefined) ?? 'warn'));
    const cwd = values.cwd ? path.resolve(values.cwd) : undefined;
    return runSessions(positionals.slice(1), {
      store,
      ...(named ? { agent: named.name, openDirectory: () => openSessionDirectory(named, { logger, cwd: cwd ?? process.cwd() }) } : {}),
      ...(cwd ? { cwd } : {}),
      format: sessionsFormat,
      out: stdout,
      err: (t) => stderr(`agent-host: ${t}\n`),
    });
  }
  if (values.help) {
    stdout(`${USAGE}\n`);
    return 0;
  }
  const prompt = positionals.join(' ').trim();
  if (!prompt) fail(`no prompt given\n\n${USAGE}`, TURN_EXIT_CODES.usage!);
  const { agent, options, cwd, logger, format } = await agentRun(values, USAGE);
  const emit = reportingSandbox(
    format,
    format === 'json'
      ? (event: object) => stdout(`${JSON.stringify(event)}\n`)
      : (() => {
          const r = new TextRenderer(stdout);
          return (event: object) => r.render(event as SessionEvent | { type: string });
        })(),
    (l) => stderr(`agent-host: ${l}\n`),
  );
  return runPrompt({ agent, options, prompt, ...(values.resume ? { resume: values.resume } : {}), cwd, store, logger, format, emit, startAgent: startAgentSession });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => fail((error as Error).stack ?? String(error), TURN_EXIT_CODES.error!),
);
