/**
 * The compatibility check's vocabulary: which checks exist, what a result says, and what the composition
 * root lends the check (a way to start sessions through our adapters, an idle process for the exit checks,
 * a hosted MCP tool). The check itself (checkRun.ts, checkTurns.ts) sees only these and AgentSession.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ExitInfo, SandboxLaunch } from '../core/agentProcess';
import { redact } from '../core/log';
import type { AgentConfig } from '../session/agentConfig';
import type { AgentSession } from '../session/agentSession';
import type { PermissionDecider } from '../session/permissions';

/** Every check, in report order. The capability rows after `exit.sigterm` are what `initialize` advertised. */
export const CHECK_IDS = [
  'initialize',
  'session.new',
  'prompt.turn',
  'permission.asked',
  'permission.reject',
  'fs.write',
  'terminal',
  'mcp.tool',
  'cancel',
  'session.list',
  'session.close',
  'session.resume',
  'session.load',
  'exit.stdinEof',
  'exit.sigterm',
  'sandbox',
  'session.fork',
  'mcp.http',
  'mcp.sse',
  'prompt.image',
  'prompt.audio',
  'prompt.embeddedContext',
] as const;

/** An agent service's checks (seed 003: a WebSocket service, no process of ours), in report order. */
export const SERVICE_CHECK_IDS = ['service.connect', 'service.listModel', 'service.chat', 'service.selection', 'service.oneTask', 'service.ide'] as const;
export type CheckId = (typeof CHECK_IDS)[number] | (typeof SERVICE_CHECK_IDS)[number];

/**
 * verified: seen on a real turn or frame; claimed: advertised, not exercised; absent: not advertised or not
 * available (the evidence says why); failed: advertised or expected, and it did not work (the evidence says how).
 */
export type CheckStatus = 'verified' | 'claimed' | 'absent' | 'failed';

export interface CheckEvidence {
  /** One or two sentences; no timings, ids or temp paths (the generated doc quotes it). */
  text: string;
  /** The frames that prove it, one line each (direction, method or type, id, a params excerpt). */
  frames: string[];
}

export interface CheckResult {
  id: CheckId;
  status: CheckStatus;
  evidence: CheckEvidence;
}

export interface CompatReport {
  agent: { name: string; title?: string; version?: string };
  protocol: 'acp' | 'rpc' | 'agent-service';
  protocolVersion: number | null;
  checks: CheckResult[];
}

/** A frame as the adapters' tap sees it, with the direction (in = from the agent). */
export interface TappedFrame {
  dir: 'in' | 'out';
  msg: Record<string, unknown>;
}

/** What `initialize` (ACP) or `get_state` (RPC) told about the agent, as far as the check reports it. */
export interface HandshakeInfo {
  protocolVersion: number | null;
  agent: CompatReport['agent'];
  /** ACP `agentCapabilities` as sent; undefined for RPC. */
  capabilities?: Record<string, unknown>;
  authMethods: { id: string; name?: string; type?: string }[];
}

/** A session started for the check, with every frame it exchanged (the same array as its request's). */
export interface CheckSession {
  session: AgentSession;
  frames: TappedFrame[];
}

export interface StartRequest {
  cwd: string;
  decidePermission: PermissionDecider;
  /** Reattach instead of opening a new session (each rung on its own). */
  attach?: { sessionId: string; via: 'resume' | 'load' };
  /** Offer the hosted tool: MCP for ACP agents, host tools for pi RPC. */
  withTool: boolean;
  /** Start the agent inside the sandbox (the `sandbox` check). */
  sandbox?: SandboxLaunch;
  timeoutMs: number;
  /** Every frame of the process goes here, from the first (so a failed start still shows its handshake). */
  frames: TappedFrame[];
  /** An agent service's key (X-Api-Key). */
  apiKey?: string;
}

/** A fresh agent process that answered its handshake and holds no session: for the exit checks. */
export interface IdleAgent {
  closeInput(): void;
  /** SIGTERM to the agent's process group, as Atrium's own stop sends it. */
  terminate(): void;
  readonly exited: Promise<ExitInfo>;
  /** Stops it for good (stdin, SIGTERM, SIGKILL) and waits. */
  stop(): Promise<ExitInfo>;
}

/** One call of the hosted tool, as the tool saw it. */
export interface HostedToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** What the composition root lends the check: our adapters and host services, nothing protocol-specific. */
export interface CheckHost {
  start(config: AgentConfig, request: StartRequest): Promise<CheckSession>;
  startIdle(config: AgentConfig, cwd: string, timeoutMs: number): Promise<IdleAgent>;
  /** The hosted tool's name and every call it got (shared by the sessions of one run). */
  readonly tool: { name: string; calls: HostedToolCall[] };
  close(): Promise<void>;
}

export class CheckTimeoutError extends Error {
  constructor(
    what: string,
    readonly seconds: number,
  ) {
    super(`${what}: no result within ${seconds} s`);
    this.name = 'CheckTimeoutError';
  }
}

/** `promise`, or a CheckTimeoutError after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeoutError(what, Math.round(ms / 1000))), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const EXCERPT = 160;

function excerpt(value: unknown): string {
  const s = JSON.stringify(value) ?? '';
  return s.length > EXCERPT ? `${s.slice(0, EXCERPT - 1)}…` : s;
}

/** One line for a frame: `← session/request_permission #3 {…}`, `→ result #3 {…}`, `← tool_execution_start {…}`. */
export function frameLine(f: TappedFrame): string {
  const arrow = f.dir === 'in' ? '←' : '→';
  const m = f.msg;
  // An agent service's frame: `→ exec_chat #123 {…}`, `← #123 {…}` (its ids are request_id).
  if ('request_id' in m) {
    const { cmd, request_id, ...rest } = m;
    return `${arrow}${typeof cmd === 'string' ? ` ${cmd}` : ''} #${String(request_id)} ${excerpt(rest)}`;
  }
  const id = m.id !== undefined ? ` #${String(m.id)}` : '';
  if (typeof m.method === 'string') return `${arrow} ${m.method}${id} ${excerpt(m.params ?? {})}`;
  if ('result' in m) return `${arrow} result${id} ${excerpt(m.result)}`;
  if ('error' in m) return `${arrow} error${id} ${excerpt(m.error)}`;
  if (typeof m.type === 'string') {
    const { type, ...rest } = m;
    return `${arrow} ${type} ${excerpt(rest)}`;
  }
  return `${arrow} ${excerpt(m)}`;
}

/** Frames of one method (ACP `method` or RPC `type`) and the answers to its requests. */
export function framesOf(frames: TappedFrame[], ...methods: string[]): TappedFrame[] {
  const ids = new Set<unknown>();
  const out: TappedFrame[] = [];
  for (const f of frames) {
    const name = typeof f.msg.method === 'string' ? f.msg.method : typeof f.msg.type === 'string' ? f.msg.type : undefined;
    if (name !== undefined && methods.includes(name)) {
      out.push(f);
      if (f.msg.id !== undefined && typeof f.msg.method === 'string') ids.add(`${f.dir}:${String(f.msg.id)}`);
    } else if (f.msg.method === undefined && f.msg.id !== undefined && ids.has(`${f.dir === 'in' ? 'out' : 'in'}:${String(f.msg.id)}`)) {
      out.push(f);
    }
  }
  return out;
}

export function evidence(text: string, frames: TappedFrame[] = [], max = 6): CheckEvidence {
  // Frames carry the hosted tool's bearer token (session/new mcpServers env): masked like every log line.
  return { text, frames: frames.slice(0, max).map((f) => redact(frameLine(f), true)) };
}

/** Evidence without the run's own paths (the doc quotes it; a temp folder differs every run): the first is the workspace, the rest scratch. */
export function scrub(c: CheckResult, paths: string[]): CheckResult {
  const clean = (s: string) => paths.reduce((t, p) => t.split(p).join(p === paths[0] ? '<workspace>' : '<scratch>'), s);
  return { ...c, evidence: { text: clean(c.evidence.text), frames: c.evidence.frames.map(clean) } };
}

export function result(id: CheckId, status: CheckStatus, text: string, frames: TappedFrame[] = []): CheckResult {
  return { id, status, evidence: evidence(text, frames) };
}

/** The rows of a run as they are set, each logged with the time since the one before. */
export function checkResults(log?: (line: string) => void): { results: Map<CheckId, CheckResult>; set: (...rs: CheckResult[]) => void } {
  const results = new Map<CheckId, CheckResult>();
  let last = Date.now();
  const set = (...rs: CheckResult[]) => {
    const now = Date.now();
    for (const r of rs) {
      results.set(r.id, r);
      log?.(`check ${r.id}: ${r.status} (${now - last} ms) ${r.evidence.text}`);
    }
    last = now;
  };
  return { results, set };
}

/** A run's scratch folder, and its workspace: `cwd` when given, else one in the scratch folder. */
export function checkScratch(cwd: string | undefined): { scratch: string; workspace: string } {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-host-check-'));
  const workspace = cwd ? path.resolve(cwd) : path.join(scratch, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  return { scratch, workspace };
}
