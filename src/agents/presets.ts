/**
 * Presets: every agent Atrium is tested with, as a ready configured entry — command, args, env,
 * protocol — plus what each needs to ASK before it writes a file or runs a command (opencode's
 * `permission`, qwen's and gemini's approval mode, codex's approval policy), and how to install it
 * pinned. The permission settings are part of the preset (args/env), not of the user's own config, and
 * the compatibility check verifies them on a real turn.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentConfig } from '../session/agentConfig';
import type { SandboxNeeds } from '../session/sandboxPolicy';
import { findOnPath } from './tools';

export interface NpmSource {
  /** npm package, installed pinned with `npm install --prefix <dir> <package>@<version>`. */
  package: string;
  version: string;
  /** Name of the package's bin that starts the agent. */
  bin: string;
  /** Runtime the bin needs beyond Node 20 (qwen: Node 22; omp: Bun) — said in the Add Agent picker. */
  needs?: string;
}

/**
 * A program the agent starts itself (pi-acp starts `pi`): installed pinned beside it, and named in `env` so
 * the agent finds it there; without `env` set, the agent looks on PATH.
 */
export interface Companion {
  package: string;
  version: string;
  /** The package's bin the agent runs. */
  bin: string;
  /** The variable the agent reads the program's path from. */
  env: string;
}

export interface AgentPreset {
  /** Stable id (also the registry's id when the agent is in the ACP registry). */
  id: string;
  name: string;
  description: string;
  protocol: 'acp' | 'rpc';
  /** The command when the agent is on PATH (what a user who installed it globally runs). */
  command: string;
  args: string[];
  env: Record<string, string>;
  /** How to get it: npm (pinned), the ACP registry (`uvx` entries), or a note. */
  install: { npm?: NpmSource; registryId?: string; uvx?: string; note?: string };
  /** Programs it cannot start without (checked before every start, installed with it). */
  runs?: Companion[];
  /** What makes this agent ask before writes and shell commands, in words (shown to the user). */
  permission: string;
  /** Is our scripted model wired for it (`scriptedSetup` knows its config)? */
  scripted: boolean;
  /** Does it ask before writes and commands as configured here (the compatibility check fails it if not)? */
  asksPermission: boolean;
  /** It does not exit when its stdin closes (a stop sends SIGTERM at once instead of waiting the grace period). */
  ignoresInputClose?: boolean;
  /** What it needs inside the sandbox (src/session/sandboxPolicy.ts): its state folders and its model hosts. */
  sandbox: SandboxNeeds;
}

/** opencode never asks without a `permission` config: this one asks for edits, shell and fetches. */
export const OPENCODE_ASK = JSON.stringify({ edit: 'ask', bash: 'ask', webfetch: 'ask' });

export const PRESETS: readonly AgentPreset[] = [
  {
    id: 'opencode',
    name: 'OpenCode',
    description: 'The open source coding agent (sst/opencode), ACP over `opencode acp`.',
    protocol: 'acp',
    command: 'opencode',
    args: ['acp'],
    env: { OPENCODE_PERMISSION: OPENCODE_ASK },
    install: { npm: { package: 'opencode-ai', version: '1.18.33', bin: 'opencode' } },
    permission: 'OPENCODE_PERMISSION={"edit":"ask","bash":"ask","webfetch":"ask"} (without it opencode never asks).',
    scripted: true,
    asksPermission: true,
    sandbox: {
      state: ['xdg-data:opencode', 'xdg-config:opencode', 'xdg-state:opencode', 'xdg-cache:opencode'],
      ownLoopback: true,
      configs: ['xdg-config:opencode/opencode.json', 'xdg-config:opencode/opencode.jsonc', 'xdg-config:opencode/config.json', 'cwd:opencode.json', 'cwd:opencode.jsonc'],
      hosts: ['opencode.ai', '*.opencode.ai', 'models.dev', 'api.openai.com', 'api.anthropic.com', 'openrouter.ai', 'generativelanguage.googleapis.com'],
    },
  },
  {
    id: 'codex-acp',
    name: 'Codex',
    description: "ACP adapter for OpenAI's Codex (zed-industries/codex-acp).",
    protocol: 'acp',
    command: 'codex-acp',
    args: ['-c', 'approval_policy="untrusted"'],
    env: {},
    install: { npm: { package: '@zed-industries/codex-acp', version: '0.16.0', bin: 'codex-acp' }, registryId: 'codex-acp' },
    permission: '-c approval_policy="untrusted": asks before anything but known-safe reads.',
    scripted: true,
    asksPermission: true,
    ignoresInputClose: true,
    sandbox: { state: ['~/.codex', 'env:CODEX_HOME'], hosts: ['api.openai.com', 'chatgpt.com', 'auth.openai.com'] },
  },
  {
    id: 'claude-agent-acp',
    name: 'Claude Code',
    description: "ACP adapter for Anthropic's Claude Code (claude-agent-acp).",
    protocol: 'acp',
    command: 'claude-agent-acp',
    args: [],
    env: {},
    install: { npm: { package: '@zed-industries/claude-agent-acp', version: '0.23.1', bin: 'claude-agent-acp' }, registryId: 'claude-acp' },
    permission: 'Asks by default (permission mode "default"); a settings.json defaultMode other than "default" changes that.',
    scripted: true,
    asksPermission: true,
    sandbox: { state: ['~/.claude', '~/.claude.json', '~/.claude.json.backup', 'env:CLAUDE_CONFIG_DIR'], hosts: ['api.anthropic.com', 'statsig.anthropic.com', 'console.anthropic.com', 'claude.ai'] },
  },
  {
    id: 'gemini',
    name: 'Gemini CLI',
    description: "Google's Gemini CLI in ACP mode (`gemini --acp`).",
    protocol: 'acp',
    command: 'gemini',
    args: ['--acp', '--approval-mode', 'default'],
    env: {},
    install: { npm: { package: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' }, registryId: 'gemini' },
    permission: '--approval-mode default: asks before edits and shell commands.',
    scripted: true,
    asksPermission: true,
    sandbox: { state: ['~/.gemini'], hosts: ['generativelanguage.googleapis.com', 'cloudcode-pa.googleapis.com', 'oauth2.googleapis.com', 'accounts.google.com', 'play.googleapis.com'] },
  },
  {
    id: 'qwen',
    name: 'Qwen Code',
    description: 'Qwen Code in ACP mode (`qwen --acp`).',
    protocol: 'acp',
    command: 'qwen',
    args: ['--acp', '--approval-mode', 'default'],
    env: {},
    install: { npm: { package: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen', needs: 'Node 22' }, registryId: 'qwen-code' },
    permission: '--approval-mode default (0.24 defaults to "auto", where a model decides what is safe).',
    scripted: true,
    asksPermission: true,
    sandbox: { state: ['~/.qwen'], hosts: ['dashscope.aliyuncs.com', 'dashscope-intl.aliyuncs.com', 'chat.qwen.ai', 'portal.qwen.ai'] },
  },
  {
    id: 'pi-acp',
    name: 'pi (ACP)',
    description: 'The pi coding agent through the pi-acp adapter.',
    protocol: 'acp',
    command: 'pi-acp',
    args: [],
    env: {},
    install: { npm: { package: 'pi-acp', version: '0.0.24', bin: 'pi-acp' } },
    runs: [{ package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi', env: 'PI_ACP_PI_COMMAND' }],
    permission: 'pi has no permission system: it writes and runs commands without asking.',
    scripted: true,
    asksPermission: false,
    sandbox: { state: ['~/.pi', 'env:PI_CODING_AGENT_DIR', 'arg:--session-dir'], hosts: ['api.anthropic.com', 'api.openai.com', 'generativelanguage.googleapis.com', 'openrouter.ai'] },
  },
  {
    id: 'pi',
    name: 'pi (RPC mode)',
    description: 'The pi coding agent in its own RPC mode (`pi --mode rpc`): extension UI, follow-up and steer.',
    protocol: 'rpc',
    command: 'pi',
    args: ['--mode', 'rpc'],
    env: {},
    install: { npm: { package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' } },
    permission: 'pi has no permission system: it writes and runs commands without asking.',
    scripted: true,
    asksPermission: false,
    sandbox: { state: ['~/.pi', 'env:PI_CODING_AGENT_DIR', 'arg:--session-dir'], hosts: ['api.anthropic.com', 'api.openai.com', 'generativelanguage.googleapis.com', 'openrouter.ai'] },
  },
  {
    id: 'omp',
    name: 'oh-my-pi (RPC mode)',
    description: 'The oh-my-pi fork of pi in RPC mode (`omp --mode rpc`): host tools, todos, interrupt mode.',
    protocol: 'rpc',
    command: 'omp',
    args: ['--mode', 'rpc'],
    env: {},
    install: { npm: { package: '@oh-my-pi/pi-coding-agent', version: '18.2.3', bin: 'omp', needs: 'Bun' } },
    permission: 'No permission requests: it writes and runs commands without asking.',
    scripted: true,
    asksPermission: false,
    sandbox: { state: ['~/.omp', '~/.pi', 'env:PI_CODING_AGENT_DIR', 'arg:--session-dir'], hosts: ['api.anthropic.com', 'api.openai.com', 'generativelanguage.googleapis.com', 'openrouter.ai'] },
  },
  {
    id: 'agentao',
    name: 'Agentao',
    description: 'Provider-neutral, local-first agent harness (`agentao --acp`), from PyPI through uv.',
    protocol: 'acp',
    command: 'agentao',
    args: ['--acp'],
    env: {},
    install: { registryId: 'agentao', uvx: 'agentao@0.5.10' },
    permission: 'Its own permission modes; the default asks before writes.',
    scripted: false,
    asksPermission: true,
    sandbox: { state: ['~/.agentao', 'xdg-data:uv'], hosts: ['api.openai.com', 'api.anthropic.com', 'openrouter.ai', 'pypi.org', 'files.pythonhosted.org'] },
  },
];

export function presetById(id: string): AgentPreset | undefined {
  return PRESETS.find((p) => p.id === id);
}

/**
 * The preset behind a configured agent: by `preset` id when the entry carries one, else by the command's
 * base name (`/x/bin/opencode` → opencode) and protocol.
 */
export function presetFor(config: Pick<AgentConfig, 'command' | 'args' | 'protocol'> & { preset?: string }): AgentPreset | undefined {
  if (config.preset) return presetById(config.preset);
  const base = config.command
    .split(/[\\/]/)
    .pop()!
    .replace(/\.(exe|cmd|js)$/i, '');
  const protocol = config.protocol ?? 'acp';
  return PRESETS.find((p) => p.protocol === protocol && (p.command === base || p.install.npm?.bin === base));
}

/** A preset as an `agentHost.agents` entry (command from PATH unless `command`/`args` say otherwise; `env` adds an install's). */
export function presetConfig(preset: AgentPreset, launch?: { command: string; args?: string[]; env?: Record<string, string> }): AgentConfig & { preset: string } {
  return {
    name: preset.name,
    command: launch?.command ?? preset.command,
    args: [...(launch?.args ?? []), ...preset.args],
    env: { ...preset.env, ...(launch?.env ?? {}) },
    protocol: preset.protocol,
    preset: preset.id,
  };
}

/** Where the agent would find a companion: the path its variable names, else `bin` on PATH; undefined when neither runs. */
export function companionPath(c: Companion, env: Record<string, string | undefined>): string | undefined {
  const named = env[c.env];
  if (!named) return findOnPath(c.bin, env);
  if (!/[\\/]/.test(named)) return findOnPath(named, env);
  try {
    fs.accessSync(named, fs.constants.X_OK);
    return fs.statSync(named).isFile() ? path.resolve(named) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a configured agent cannot start because a program its preset starts is missing (pi-acp without `pi`),
 * checked in the environment it would run with; undefined when nothing is missing. The agent itself would
 * say something else (pi-acp asks to sign in before it looks for pi).
 */
export function missingCompanion(config: Pick<AgentConfig, 'name' | 'command' | 'args' | 'protocol' | 'preset'>, env: Record<string, string | undefined>): string | undefined {
  const preset = presetFor(config);
  for (const c of preset?.runs ?? []) {
    if (companionPath(c, env)) continue;
    const named = env[c.env];
    const what = named ? `${named} (from ${c.env})` : c.bin;
    const where = named ? `${c.env}=${named} is not an executable file` : `${c.bin} is not on PATH (${env.PATH ?? ''}) and ${c.env} is not set`;
    return (
      `"${config.name}" cannot start: command not found: ${what}\n` +
      `${preset!.command} runs ${c.bin} (${c.package} ${c.version}): ${where}. ` +
      `"Atrium: Add Agent…" → ${preset!.name} installs both, pinned; or install ${c.package}@${c.version} and put ${c.bin} on PATH.`
    );
  }
  return undefined;
}
