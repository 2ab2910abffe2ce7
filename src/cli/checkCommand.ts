/**
 * `agent-host check`: the compatibility check from the command line. Resolves the agent (a preset, an
 * entry of a config file, an ad-hoc command, or an agent service's URL), runs src/check/checkRun.ts with the host the root lends,
 * and prints the report as text, JSON or Markdown.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { Logger } from '../core/log';
import { presetById, presetConfig, presetFor, type AgentPreset } from '../agents/presets';
import { hasScriptedSetup } from '../agents/scripted';
import { render } from '../check/checkReport';
import { runCompatCheck } from '../check/checkRun';
import { SELECTION_FILE } from '../check/checkService';
import type { CheckHost } from '../check/checkTypes';
import type { AgentConfig } from '../session/agentConfig';
import { agentFromFile, envPairs, splitAgentWords, tlsFlags, withAgentCommand } from './agentOptions';

export const CHECK_USAGE = `Usage: agent-host check (--preset ID [--command CMD --arg A …] | --config FILE [--agent NAME] |
                         --command CMD [--arg A …] [--protocol acp|rpc] |
                         [--protocol agent-service] --url ws://… [--ca FILE | --fingerprint SHA256]) [--env K=V …]
                        [--scripted] [--cwd DIR] [--format text|json|markdown] [--timeout S] [-- CMD A …]

Runs a scripted probe against the agent and prints what it supports: verified (seen on a real turn or
frame), claimed (advertised, not exercised), absent (not advertised or not available), failed.

  --preset ID        a preset (opencode, codex-acp, claude-agent-acp, gemini, qwen, pi-acp, pi, omp,
                     agentao): its command, args and env; --command/--arg replace how it is launched
                     (the preset's own args and env are still added)
  --config FILE      an agents file; --agent NAME picks the entry (default: the first)
  --command CMD      an ad-hoc agent, with --arg (repeatable; --arg -c passes "-c") and --protocol
  -- CMD A …         the same, last: every word after "--" is the agent's command and arguments
  --env K=V          added to the agent's environment (repeatable)
  --protocol agent-service --url ws://…
                     an agent service (seed 003), or an agents-file entry with "protocol": "agent-service":
                     its key comes from AGENT_SERVICE_API_KEY (never a flag). Rows: the key taken,
                     list_model, a streamed exec_chat (frames counted and put in order), an exec_explain
                     with selected and visible text, one task per connection (a second cancels the first),
                     the IDE-service lookups it asks answered. wss:// with --ca FILE (a CA to trust) or
                     --fingerprint SHA256 (a self-signed certificate)
  --scripted         run the turns (permission, files, terminal, MCP tool, cancel, reattach) against
                     Atrium's scripted model, in a sandboxed home and a scratch workspace; needs a
                     preset with a scripted setup (--preset, the entry's "preset", or the command's name)
  --cwd DIR          the workspace (default: a scratch folder; the check adds and removes two files)
  --format F         text (default), json, markdown
  --timeout S        timeout of each step in seconds (default 30)
  --log-level LEVEL  stderr log level (default off)`;

export interface CheckCommandDeps {
  openHost(workspace: string, logger: Logger): Promise<CheckHost>;
  logger: (level: string) => Logger;
  /** Where AGENT_SERVICE_API_KEY is read. */
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
}

/** Exit codes: 0 nothing failed, 1 a check failed, 2 usage. */
export async function runCheckCommand(argv: string[], deps: CheckCommandDeps): Promise<number> {
  const words = splitAgentWords(argv);
  let values;
  try {
    values = parseArgs({
      args: words.options,
      options: {
        preset: { type: 'string' },
        config: { type: 'string' },
        agent: { type: 'string' },
        command: { type: 'string' },
        arg: { type: 'string', multiple: true },
        env: { type: 'string', multiple: true },
        protocol: { type: 'string' },
        url: { type: 'string' },
        ca: { type: 'string' },
        fingerprint: { type: 'string' },
        scripted: { type: 'boolean' },
        cwd: { type: 'string' },
        format: { type: 'string' },
        timeout: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
    values = withAgentCommand(values, words.agentCommand);
  } catch (error) {
    deps.err(`${(error as Error).message}\n\n${CHECK_USAGE}`);
    return 2;
  }
  if (values.help) {
    deps.out(`${CHECK_USAGE}\n`);
    return 0;
  }
  const usage = (message: string) => {
    deps.err(`${message}\n\n${CHECK_USAGE}`);
    return 2;
  };
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json' && format !== 'markdown') return usage('--format must be text, json or markdown');
  const timeoutS = values.timeout ? Number(values.timeout) : 30;
  if (!(timeoutS > 0)) return usage('--timeout must be a positive number of seconds');
  let config: AgentConfig;
  let preset: AgentPreset | undefined;
  try {
    const env = envPairs(values.env);
    // A URL alone is a remote ACP agent, as in the prompt mode: its check runs where the agent runs.
    if (values.url !== undefined && values.protocol !== 'agent-service') {
      return usage('the check does not reach remote ACP agents yet: run it where the agent runs (agent-host check --preset …), or give --protocol agent-service for an agent service');
    }
    if (values.url !== undefined || values.protocol === 'agent-service') {
      if (values.url === undefined || !/^wss?:\/\/[^/]/.test(values.url)) return usage('--protocol agent-service needs --url ws://HOST:PORT/… (or wss://)');
      const clash = (['preset', 'config', 'agent', 'command', 'arg', 'env'] as const).filter((k) => values[k] !== undefined);
      if (clash.length) return usage(`--url names the agent: give it without ${clash.map((k) => `--${k}`).join(', ')}`);
      const tls = tlsFlags(values);
      config = { name: values.url, command: values.url, url: values.url, protocol: 'agent-service', ...(tls ? { tls } : {}) };
    } else if (values.ca !== undefined || values.fingerprint !== undefined) {
      return usage('--ca and --fingerprint are for an agent service (--url)');
    } else if (values.preset) {
      preset = presetById(values.preset);
      if (!preset) return usage(`unknown preset "${values.preset}"`);
      const base = presetConfig(preset, values.command ? { command: values.command, args: values.arg ?? [] } : undefined);
      config = { ...base, env: { ...base.env, ...env } };
    } else if (values.config) {
      const found = agentFromFile(values.config, values.agent);
      config = { ...found, env: { ...(found.env ?? {}), ...env } };
      preset = presetFor(found);
    } else if (values.command) {
      const protocol = values.protocol ?? 'acp';
      if (protocol !== 'acp' && protocol !== 'rpc') return usage('--protocol must be acp, rpc or agent-service (with --url)');
      config = { name: path.basename(values.command), command: values.command, args: values.arg ?? [], env, protocol };
      preset = presetFor(config);
    } else return usage('give --preset ID, --config FILE or --command CMD');
  } catch (error) {
    return usage((error as Error).message);
  }
  const service = config.protocol === 'agent-service';
  // A relative command path (or CA file) means the caller's folder, not the workspace the agent runs in.
  if (!service && config.command.includes('/') && !path.isAbsolute(config.command)) config = { ...config, command: path.resolve(config.command) };
  if (config.tls?.ca) config = { ...config, tls: { ...config.tls, ca: path.resolve(config.tls.ca) } };
  const apiKey = deps.env.AGENT_SERVICE_API_KEY;
  if (service && !apiKey) return usage("an agent service's API key comes from the environment: set AGENT_SERVICE_API_KEY (it is never a flag)");
  if (service && values.scripted) return usage('--scripted is for agents Atrium starts: an agent service runs its own model');
  if (service && values.cwd && existsSync(path.join(values.cwd, SELECTION_FILE)))
    return usage(`${path.join(values.cwd, SELECTION_FILE)} exists: the check writes a file of that name for the selection task and removes it after; give another --cwd`);
  if (values.scripted && !(preset && hasScriptedSetup(preset.id))) {
    return usage(`--scripted: no scripted-model setup known for ${preset ? `preset "${preset.id}"` : `"${config.command}" (name a preset with --preset or the entry's "preset")`}`);
  }
  const logger = deps.logger(values['log-level'] ?? 'off');
  const report = await runCompatCheck({
    config,
    ...(preset ? { preset } : {}),
    scripted: values.scripted === true,
    ...(values.cwd ? { cwd: values.cwd } : {}),
    timeoutMs: timeoutS * 1000,
    openHost: (workspace) => deps.openHost(workspace, logger),
    log: (line) => logger.info(line),
    ...(service && apiKey ? { apiKey } : {}),
    // dist/cli.js and dist/sandbox.mjs are built side by side.
    sandboxLauncher: { node: process.execPath, launcher: path.join(__dirname, 'sandbox.mjs') },
  });
  deps.out(render(report, format));
  return report.checks.some((c) => c.status === 'failed') ? 1 : 0;
}
