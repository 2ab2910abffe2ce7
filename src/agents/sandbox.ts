/**
 * The sandbox an agent starts in (docs/sandbox.md): its entry's mode (else the default given), its preset's state
 * folders and model hosts, the user's additions — as the launch the process layer runs (core's SandboxLaunch) —,
 * and whether this machine can sandbox at all (the launcher's `--check`, asked once per launcher).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { SandboxLaunch } from '../core/agentProcess';
import { agentEnvironment, type AgentConfig } from '../session/agentConfig';
import { describeSandbox, loopbackPorts, needPath, sandboxModeOf, sandboxRuntimeSettings, type SandboxEntry, type SandboxMode, type SandboxRuntimeSettings } from '../session/sandboxPolicy';
import { type AgentPreset, PRESETS, presetFor } from './presets';

/** Where the launcher is and what runs it (dist/sandbox.mjs beside the bundle; this process's Node or Electron). */
export interface SandboxLauncher {
  node: string;
  launcher: string;
}

export interface SandboxChoice {
  mode: SandboxMode;
  /** Set for a sandboxed mode: what the agent process is started with. */
  launch?: SandboxLaunch;
  settings?: SandboxRuntimeSettings;
  /** One line: what the policy allows (the header's tooltip, the CLI's stderr). */
  description: string;
}

/** `config` with its sandbox's mode set to `mode`, its additions (folders, hosts) kept. */
export function withSandboxMode(config: AgentConfig, mode: SandboxMode): AgentConfig {
  return { ...config, sandbox: typeof config.sandbox === 'object' ? { ...config.sandbox, mode } : mode };
}

/** The sandbox for `config` started in `cwd`: its mode and, unless `off`, its launch. Remote agents run elsewhere: off. */
export function sandboxFor(
  config: AgentConfig,
  o: { cwd: string; roots?: readonly string[]; env?: Record<string, string>; fallback: SandboxMode; launcher: SandboxLauncher; extra?: SandboxEntry },
): SandboxChoice {
  if (config.url) return { mode: 'off', description: describeSandbox('off', undefined) };
  const mode = sandboxModeOf(config.sandbox, o.fallback);
  if (mode === 'off') return { mode, description: describeSandbox(mode, undefined) };
  const entry = typeof config.sandbox === 'object' ? config.sandbox : undefined;
  const merged: SandboxEntry = {
    allowWrite: [...(entry?.allowWrite ?? []), ...(o.extra?.allowWrite ?? [])],
    denyRead: [...(entry?.denyRead ?? []), ...(o.extra?.denyRead ?? [])],
    allowHosts: [...(entry?.allowHosts ?? []), ...(o.extra?.allowHosts ?? [])],
  };
  const needs = sandboxPresetOf(config)?.sandbox;
  const ctx = { cwd: config.cwd ?? o.cwd, roots: o.roots ?? [], env: agentEnvironment(config, o.env), args: config.args ?? [], userHome: os.homedir(), tmpdir: os.tmpdir() };
  // A loopback URL in one of the agent's configuration files (its model on a local server) gets its port forwarded.
  for (const file of (needs?.configs ?? []).flatMap((c) => needPath(c, ctx))) {
    for (const port of loopbackPorts([], { file: readSmall(file) })) merged.allowHosts!.push(`127.0.0.1:${port}`);
  }
  const settings = sandboxRuntimeSettings(mode, merged, needs, ctx);
  const description = describeSandbox(mode, settings);
  return { mode, settings, launch: { ...o.launcher, mode, settings, description }, description };
}

/**
 * The preset whose needs apply: the entry's (by id or command name, as everywhere), else the one whose npm package the
 * command or its first argument runs from (`node …/node_modules/@zed-industries/claude-agent-acp/dist/index.js`).
 */
export function sandboxPresetOf(config: AgentConfig): AgentPreset | undefined {
  const named = presetFor(config);
  if (named) return named;
  const words = [config.command, ...(config.args ?? []).slice(0, 1)].map((w) => w.replace(/\\/g, '/'));
  return PRESETS.find((p) => p.protocol === (config.protocol ?? 'acp') && p.install.npm && words.some((w) => w.includes(`/node_modules/${p.install.npm!.package}/`)));
}

/** A small text file's content, or nothing (missing, unreadable, over 1 MiB). */
function readSmall(file: string): string | undefined {
  try {
    return fs.statSync(file).size <= 1024 * 1024 ? fs.readFileSync(file, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

export interface SandboxAvailability {
  ok: boolean;
  /** What is missing (bubblewrap, socat, user namespaces…), in the library's words. */
  errors: string[];
  warnings: string[];
}

const checks = new Map<string, Promise<SandboxAvailability>>();

/** Whether this machine can run the sandbox (asked of the launcher once per launcher path). */
export function sandboxAvailability(launcher: SandboxLauncher): Promise<SandboxAvailability> {
  const key = `${launcher.node}\0${launcher.launcher}`;
  let check = checks.get(key);
  if (!check) {
    check = new Promise<SandboxAvailability>((resolve) => {
      execFile(launcher.node, [launcher.launcher, '--check'], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, timeout: 30_000 }, (error, stdout, stderr) => {
        try {
          const r = JSON.parse(stdout) as SandboxAvailability;
          resolve({ ok: r.ok === true, errors: r.errors ?? [], warnings: r.warnings ?? [] });
        } catch {
          const why = (stderr || error?.message || 'no output').trim().split('\n')[0];
          resolve({ ok: false, errors: [`the sandbox launcher did not answer: ${why}`], warnings: [] });
        }
      });
    });
    checks.set(key, check);
  }
  return check;
}
