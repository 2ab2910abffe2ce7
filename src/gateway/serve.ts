/**
 * `agent-host serve`: the token from ACP_REMOTE_TOKEN (exit 2 without it), the gateway started, its URL as the
 * first line on stdout, and SIGTERM / SIGINT / SIGHUP ending every connection and its agent before the exit
 * (a second signal exits at once; the process-group exit hook still kills every agent).
 */
import type { Logger } from '../core/log';
import { registerSecret } from '../core/log';
import { agentEnvironment, spawnSpecOf, type AgentConfig } from '../session/agentConfig';
import { sandboxAvailability, sandboxFor, type SandboxLauncher, withSandboxMode } from '../agents/sandbox';
import type { SandboxMode } from '../session/sandboxPolicy';
import { startGateway } from './gateway';
import type { ListenAddress, ServeLimits } from './serveOptions';

export const TOKEN_VARIABLE = 'ACP_REMOTE_TOKEN';

export interface ServeRun {
  agent: AgentConfig;
  cwd: string;
  /** `--sandbox MODE` (default workspace-write), or `off` from `--no-sandbox`: the only way to run agents unsandboxed. */
  sandbox: SandboxMode;
  /** Where the sandbox launcher is (dist/sandbox.mjs) and what runs it. */
  launcher: SandboxLauncher;
  listen: ListenAddress;
  limits: ServeLimits;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  /** One line, without the trailing newline. */
  err: (line: string) => void;
}

export async function runServe(run: ServeRun): Promise<number> {
  const token = run.env[TOKEN_VARIABLE];
  if (!token) {
    run.err(`serve: set ${TOKEN_VARIABLE} to the token clients must send (Authorization: Bearer <token>); it is never taken as a flag`);
    return 2;
  }
  if ((run.agent.protocol ?? 'acp') !== 'acp') {
    run.err(`serve: "${run.agent.name}" speaks ${run.agent.protocol}; serve exposes ACP agents only`);
    return 2;
  }
  // Every agent runs in the sandbox unless --no-sandbox says otherwise: an entry's own "off" does not.
  const sandbox = sandboxFor(withSandboxMode(run.agent, run.sandbox), { cwd: run.cwd, fallback: run.sandbox, launcher: run.launcher });
  if (sandbox.launch) {
    const available = await sandboxAvailability(run.launcher);
    if (!available.ok) {
      run.err(`serve: the sandbox is not available here (${available.errors.join('; ')}); serve starts no agent unsandboxed unless --no-sandbox is given`);
      return 3;
    }
    run.logger.info(`Sandbox: ${sandbox.description}`);
  } else run.err('serve: --no-sandbox: the agents run unsandboxed, as you; a client can do whatever you can on this machine');
  registerSecret(token);
  // The SDK's server says what it refused (a limit, a frame it ignores) on the console: into our log instead, filtered and redacted.
  console.warn = (...parts: unknown[]) => run.logger.warn(parts.map((p) => (p instanceof Error ? p.message : String(p))).join(' '));
  console.error = (...parts: unknown[]) => run.logger.error(parts.map((p) => (p instanceof Error ? p.message : String(p))).join(' '));
  // The agents get the gateway's environment but never its token.
  const env = agentEnvironment(run.agent);
  delete env[TOKEN_VARIABLE];
  const agentName = run.agent.name === 'cli' ? run.agent.command : run.agent.name;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({
      agentName,
      spawn: { ...spawnSpecOf(run.agent, run.cwd, {}, sandbox.launch), env, inheritEnv: false },
      token,
      listen: run.listen,
      limits: run.limits,
      logger: run.logger,
      report: (line) => run.err(`serve: ${line}`),
    });
  } catch (error) {
    run.err(`serve: cannot listen on ${run.listen.host}:${run.listen.port}: ${(error as Error).message}`);
    return 1;
  }
  run.out(`${gateway.url}\n`);
  if (!run.listen.loopback) run.err(`serve: listening on ${run.listen.host}, beyond this machine, over plain HTTP: the token crosses the network in clear unless a TLS proxy is in front`);
  return new Promise<number>((resolve) => {
    let signalled = false;
    const stop = (signal: NodeJS.Signals) => {
      if (signalled) process.exit(130);
      signalled = true;
      run.err(`serve: ${signal}: closing ${gateway.connections} connection(s) and stopping their agents`);
      void gateway.close().then(() => resolve(0));
    };
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stop);
  });
}
