/**
 * The CLI's sandbox (docs/sandbox.md): `--sandbox workspace-write|read-only|off` (default: the agent entry's, else
 * the fallback given), checked against this machine, and what the sandbox blocked said on stderr (text) or as
 * `{"type":"sandbox","block":{kind,target},"toolCallId"?}` events (json).
 */
import * as path from 'node:path';
import { type SandboxChoice, sandboxAvailability, sandboxFor, withSandboxMode } from '../agents/sandbox';
import { oneLine } from '../core/visibleText';
import type { AgentConfig } from '../session/agentConfig';
import type { SandboxBlock } from '../session/sandboxBlocks';
import { SANDBOX_MODES, type SandboxMode } from '../session/sandboxPolicy';

/** The sandbox the CLI starts `agent` in; throws (a usage error) on a bad mode, or when a mode asked for cannot be had. */
export async function cliSandbox(flag: string | undefined, agent: AgentConfig, o: { cwd: string; fallback: SandboxMode; warn: (line: string) => void }): Promise<SandboxChoice> {
  if (flag !== undefined && !SANDBOX_MODES.includes(flag as SandboxMode)) throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(', ')}`);
  const asked = flag !== undefined ? withSandboxMode(agent, flag as SandboxMode) : agent;
  // dist/cli.js and dist/sandbox.mjs are built side by side.
  const choice = sandboxFor(asked, { cwd: o.cwd, fallback: o.fallback, launcher: { node: process.execPath, launcher: path.join(__dirname, 'sandbox.mjs') } });
  if (choice.mode === 'off' || !choice.launch) return choice;
  const available = await sandboxAvailability(choice.launch);
  if (available.ok) return choice;
  const why = available.errors.join('; ') || 'unknown';
  // Asked for by name: refused. The default: a warning, and the agent runs as the user.
  if (flag !== undefined || typeof agent.sandbox === 'string' || agent.sandbox?.mode) throw new SandboxUnavailableError(`the sandbox (${choice.mode}) is not available here: ${why}`);
  o.warn(`warning: no sandbox on this machine (${why}): ${agent.name} runs unsandboxed, as you (--sandbox off says so and hides this)`);
  return { mode: 'off', description: choice.description };
}

export class UsageError extends Error {}
export class SandboxUnavailableError extends Error {}

/**
 * Wraps the session's event output: each new block on a tool card, and each sandbox notice, is also said on stderr
 * (text) or as a `sandbox` event (json).
 */
export function reportingSandbox(format: 'text' | 'json', emit: (event: object) => void, err: (line: string) => void): (event: object) => void {
  const said = new Set<string>();
  const say = (block: SandboxBlock, toolCallId?: string) => {
    const key = `${toolCallId ?? ''}\0${block.kind}\0${block.target}`;
    if (said.has(key)) return;
    said.add(key);
    if (format === 'json') emit({ type: 'sandbox', block, ...(toolCallId ? { toolCallId } : {}) });
    else err(`blocked by the sandbox: ${block.kind === 'write' ? 'write to' : 'network to'} ${oneLine(block.target)}`);
  };
  return (event) => {
    emit(event);
    const e = event as { type?: string; entity?: { kind?: string; id?: string; sandboxBlocked?: SandboxBlock[]; code?: string; sandbox?: SandboxBlock } };
    if (e.type !== 'entity' || !e.entity) return;
    if (e.entity.kind === 'tool_call') for (const b of e.entity.sandboxBlocked ?? []) say(b, e.entity.id);
    else if (e.entity.kind === 'notice' && e.entity.code === 'sandbox' && e.entity.sandbox) say(e.entity.sandbox);
  };
}
