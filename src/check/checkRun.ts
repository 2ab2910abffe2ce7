/**
 * "Check Agent Compatibility": runs one agent through a scripted probe and reports, per check, whether we
 * saw it happen (verified), only saw it advertised (claimed), found it missing (absent) or saw it break
 * (failed). One process serves the handshake, the turns, list and close; fresh processes serve reattach
 * (session/resume, session/load — each on its own) and the exit checks. With a scripted model (src/scriptedModel)
 * the run makes its own sandboxed home and workspace; without one, no turn is run. An agent service (no process
 * of ours) gets its own checks: checkService.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentConfig } from '../session/agentConfig';
import { startScriptedModel, type ScriptedModel } from '../scriptedModel/scriptedModel';
import { AuthRequiredError } from '../session/sessionHost';
import type { AgentPreset } from '../agents/presets';
import { sandboxAvailability, sandboxFor, type SandboxLauncher, withSandboxMode } from '../agents/sandbox';
import { sandboxEnv, scriptedSetup } from '../agents/scripted';
import { runServiceCheck } from './checkService';
import { capabilityRows, handshakeOf, initializeResult, sessionNewResult } from './checkHandshake';
import { checkAllowedEdit, checkCancel, checkHostedTool, checkPromptTurn, checkRejectedEdit, checkTerminal, CODE_WORD, ControlledDecider, runTurn, scenario, type TurnContext } from './checkTurns';
import {
  CHECK_IDS,
  checkResults,
  checkScratch,
  framesOf,
  result,
  scrub,
  within,
  type CheckHost,
  type CheckId,
  type CheckResult,
  type CheckSession,
  type CompatReport,
  type IdleAgent,
  type TappedFrame,
} from './checkTypes';

export interface CheckRunOptions {
  /** The agent as launched (for `--preset`, with the preset's args and env). */
  config: AgentConfig;
  preset?: AgentPreset;
  /** Run the turn checks against our scripted model (needs a preset with a scripted setup). */
  scripted: boolean;
  /** Workspace to run in; default: a scratch folder made for the run. */
  cwd?: string;
  /** Timeout of each step (start, turn, reattach), in ms. */
  timeoutMs: number;
  /** The composition root's adapters and services for a workspace. */
  openHost(workspace: string): Promise<CheckHost>;
  /** Progress, one line per check (with its duration). */
  log?: (line: string) => void;
  /** An agent service's key (X-Api-Key). */
  apiKey?: string;
  /** Where the sandbox launcher is (the `sandbox` check runs one turn in it); without it that check is absent. */
  sandboxLauncher?: SandboxLauncher;
}

/** How long an idle agent gets to exit after stdin EOF, and after SIGTERM. */
export const EXIT_GRACE_MS = 3000;
export const NO_MODEL = 'no scripted model configured for this agent (run with --scripted and a preset that has one)';
const TURN_IDS: CheckId[] = ['prompt.turn', 'permission.asked', 'permission.reject', 'fs.write', 'terminal', 'mcp.tool', 'cancel'];
/** Files the turn checks edit, made in the workspace for the run and removed after (names free of words the
 *  scripted model reads as a refusal, such as "reject"). */
const CHECK_FILES: Record<string, string> = { 'check-edit.txt': 'name = demo\ncolour = red\n', 'check-keep.txt': 'keep = me\n' };

export async function runCompatCheck(o: CheckRunOptions): Promise<CompatReport> {
  // An agent service has no process of ours: its own checks (checkService.ts).
  if ((o.config.protocol ?? 'acp') === 'agent-service') return runServiceCheck(o);
  const { results, set } = checkResults(o.log);
  const { scratch, workspace } = checkScratch(o.cwd);
  let model: ScriptedModel | undefined;
  let host: CheckHost | undefined;
  const protocol = o.config.protocol === 'rpc' ? 'rpc' : 'acp';
  let handshake = handshakeOf([], protocol);
  try {
    let config = o.config;
    if (o.scripted) {
      if (!o.preset) throw new Error('--scripted needs a preset (--preset, a config entry with "preset", or a preset\'s command)');
      model = await startScriptedModel();
      const env = sandboxEnv(path.join(scratch, 'sandbox'));
      const s = scriptedSetup(o.preset.id, { scratch: path.join(scratch, 'sandbox'), modelUrl: model.url, workspace }, env);
      config = { ...config, args: [...(config.args ?? []), ...s.args], env: { ...env, ...(config.env ?? {}), ...s.env }, inheritEnv: false };
      for (const [name, text] of Object.entries(CHECK_FILES)) fs.writeFileSync(path.join(workspace, name), text);
    }
    host = await o.openHost(workspace);
    const mainFrames: TappedFrame[] = [];
    const decider = new ControlledDecider();
    let cs: CheckSession | undefined;
    try {
      const started = host.start(config, { cwd: workspace, decidePermission: decider.decide, withTool: !!model, timeoutMs: o.timeoutMs, frames: mainFrames });
      cs = await within(started, o.timeoutMs, 'starting the agent').catch(async (error: unknown) => {
        void started.then((late) => late.session.shutdown()).catch(() => undefined);
        throw error;
      });
    } catch (error) {
      handshake = handshakeOf(mainFrames, protocol);
      set(initializeResult(handshake, mainFrames, error as Error));
      const auth = error instanceof AuthRequiredError;
      set(sessionNewResult(mainFrames, protocol, error as Error, auth ? error.methods.map((m) => m.id) : undefined));
    }
    // Fresh idle processes for the exit checks, started now so that their start overlaps the turns.
    const exits = checkExits(host, config, workspace, o.timeoutMs);
    if (cs) {
      handshake = handshakeOf(mainFrames, protocol);
      set(initializeResult(handshake, mainFrames), sessionNewResult(mainFrames, protocol));
      try {
        if (model) {
          const ctx: TurnContext = { cs, model, workspace, asks: o.preset?.asksPermission ?? true, decider, tool: host.tool, timeoutMs: o.timeoutMs };
          set(await checkPromptTurn(ctx));
          set(...(await checkAllowedEdit(ctx)));
          set(await checkRejectedEdit(ctx));
          set(await checkTerminal(ctx));
          const offered = protocol === 'acp' || mainFrames.some((f) => f.msg.command === 'set_host_tools' && f.msg.success === true);
          set(await checkHostedTool(ctx, offered, 'Upstream pi RPC has neither MCP nor host tools (set_host_tools is an oh-my-pi command).'));
          set(await checkCancel(ctx));
        }
        set(await checkList(cs, workspace, handshake.capabilities, o.timeoutMs));
        set(await checkClose(cs, handshake.capabilities, o.timeoutMs));
      } finally {
        await cs.session.shutdown();
      }
      if (model) {
        set(await checkReattach('resume', { o, config, host, model, workspace, sessionId: cs.session.sessionId, caps: handshake.capabilities }));
        set(await checkReattach('load', { o, config, host, model, workspace, sessionId: cs.session.sessionId, caps: handshake.capabilities }));
        set(await checkSandbox({ o, config, host, model, workspace }));
      }
    }
    if (!model) {
      for (const id of [...TURN_IDS, 'sandbox' as const]) if (!results.has(id)) set(result(id, 'absent', NO_MODEL));
      set(...reattachClaims(protocol, handshake.capabilities, cs ? undefined : 'no session could be opened'));
    }
    set(...(await exits));
    if (protocol === 'rpc' || handshake.protocolVersion !== null) set(...capabilityRows(protocol, handshake.capabilities, cs?.session.promptCapabilities));
  } finally {
    await host?.close().catch(() => undefined);
    await model?.close();
    if (o.cwd) for (const name of Object.keys(CHECK_FILES)) fs.rmSync(path.join(workspace, name), { force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const checks = CHECK_IDS.map((id) => results.get(id) ?? result(id, 'absent', 'Not run: an earlier step failed (see initialize and session.new).'));
  return { agent: handshake.agent, protocol, protocolVersion: handshake.protocolVersion, checks: checks.map((c) => scrub(c, [workspace, scratch])) };
}

async function checkList(cs: CheckSession, workspace: string, caps: Record<string, unknown> | undefined, timeoutMs: number): Promise<CheckResult> {
  if (!caps) return result('session.list', 'absent', 'pi RPC has no session list command (its sessions are files).');
  const advertised = !!(caps.sessionCapabilities as Record<string, unknown> | undefined)?.list;
  if (!advertised || !cs.session.directory) return result('session.list', 'absent', 'Not advertised (sessionCapabilities.list).');
  const from = cs.frames.length;
  try {
    const list = await within(cs.session.directory.list(workspace), timeoutMs, 'session/list');
    const proof = framesOf(cs.frames.slice(from), 'session/list');
    if (list?.some((s) => s.sessionId === cs.session.sessionId)) return result('session.list', 'verified', 'session/list for the workspace includes the session just used.', proof);
    return result('session.list', 'failed', `session/list answered ${list?.length ?? 0} session(s), none of them the session just used.`, proof);
  } catch (error) {
    return result('session.list', 'failed', `session/list failed: ${(error as Error).message}`, framesOf(cs.frames.slice(from), 'session/list'));
  }
}

async function checkClose(cs: CheckSession, caps: Record<string, unknown> | undefined, timeoutMs: number): Promise<CheckResult> {
  if (!caps) return result('session.close', 'absent', 'pi RPC has no session close: a session ends with its process.');
  const advertised = !!(caps.sessionCapabilities as Record<string, unknown> | undefined)?.close;
  if (!advertised || !cs.session.close) return result('session.close', 'absent', 'Not advertised (sessionCapabilities.close).');
  const from = cs.frames.length;
  try {
    await within(cs.session.close(), timeoutMs, 'session/close');
    return result('session.close', 'verified', 'session/close answered without error.', framesOf(cs.frames.slice(from), 'session/close'));
  } catch (error) {
    return result('session.close', 'failed', `session/close failed: ${(error as Error).message}`, framesOf(cs.frames.slice(from), 'session/close'));
  }
}

interface ReattachContext {
  o: CheckRunOptions;
  config: AgentConfig;
  host: CheckHost;
  model: ScriptedModel;
  workspace: string;
  sessionId: string;
  caps: Record<string, unknown> | undefined;
}

function reattachAdvertised(via: 'resume' | 'load', caps: Record<string, unknown> | undefined): boolean | undefined {
  if (!caps) return via === 'resume' ? true : undefined;
  return via === 'resume' ? !!(caps.sessionCapabilities as Record<string, unknown> | undefined)?.resume : caps.loadSession === true;
}

/** Reattach rows when no session with history could be made: what is advertised stays claimed. */
function reattachClaims(protocol: 'acp' | 'rpc', caps: Record<string, unknown> | undefined, why?: string): CheckResult[] {
  return (['resume', 'load'] as const).map((via) => {
    const id: CheckId = via === 'resume' ? 'session.resume' : 'session.load';
    const advertised = reattachAdvertised(via, caps);
    if (advertised === undefined) return result(id, 'absent', 'pi RPC has no replaying load: it reattaches by switch_session (session.resume).');
    if (!advertised) return result(id, 'absent', `Not advertised (${via === 'resume' ? 'sessionCapabilities.resume' : 'loadSession'}).`);
    const what = protocol === 'rpc' ? 'switch_session to the session file' : `session/${via}`;
    return result(id, 'claimed', `Advertised (${what}); not exercised: ${why ?? NO_MODEL}.`);
  });
}

/** session.resume / session.load in a NEW process: reattached, and the first turn's history is there. */
async function checkReattach(via: 'resume' | 'load', r: ReattachContext): Promise<CheckResult> {
  const id: CheckId = via === 'resume' ? 'session.resume' : 'session.load';
  const advertised = reattachAdvertised(via, r.caps);
  if (advertised === undefined) return result(id, 'absent', 'pi RPC has no replaying load: it reattaches by switch_session (session.resume).');
  if (!advertised) return result(id, 'absent', `Not advertised (${via === 'resume' ? 'sessionCapabilities.resume' : 'loadSession'}).`);
  const frames: TappedFrame[] = [];
  const decider = new ControlledDecider();
  const method = r.caps ? `session/${via}` : 'switch_session';
  let cs: CheckSession;
  try {
    const start = r.host.start(r.config, { cwd: r.workspace, decidePermission: decider.decide, withTool: false, timeoutMs: r.o.timeoutMs, frames, attach: { sessionId: r.sessionId, via } });
    cs = await within(start, r.o.timeoutMs, `${method} in a new process`).catch((error: unknown) => {
      void start.then((late) => late.session.shutdown()).catch(() => undefined);
      throw error;
    });
  } catch (error) {
    return result(id, 'failed', `Advertised, but a new process could not reattach: ${(error as Error).message}`, framesOf(frames, method));
  }
  try {
    const proof = framesOf(frames, method);
    const attach = cs.session.attach;
    const wanted = via === 'resume' ? 'resumed' : 'loaded';
    if (attach.how !== wanted) return result(id, 'failed', `Advertised, but ${method} did not reattach in a new process: ${attach.detail ?? attach.how}.`, proof);
    if (via === 'load') {
      const replayed = frames.some((f) => f.dir === 'in' && f.msg.method === 'session/update' && JSON.stringify(f.msg).includes(CODE_WORD));
      return replayed
        ? result(id, 'verified', 'session/load in a new process replayed the first turn (its code word came back in session/update).', proof)
        : result(id, 'failed', 'session/load answered in a new process, but no replayed update carried the first turn.', proof);
    }
    const before = r.model.requests.length;
    const ctx: TurnContext = { cs, model: r.model, workspace: r.workspace, asks: true, decider, tool: r.host.tool, timeoutMs: r.o.timeoutMs };
    const o = await runTurn(ctx, 'What was the code word?\nSCENARIO: answer {"text": "Recalled."}');
    const remembered = r.model.requests.slice(before).some((q) => JSON.stringify(q.body ?? null).includes(CODE_WORD));
    if (remembered) return result(id, 'verified', `${method} in a new process kept the context: the model's next request carried the first turn.`, proof);
    return result(id, 'failed', `${method} answered in a new process, but the model's next request lacked the first turn (${o.stopReason ?? o.error}).`, proof);
  } finally {
    await cs.session.shutdown();
  }
}

/**
 * sandbox: a new process in the sandbox (workspace-write, docs/sandbox.md) runs one shell command that writes a file
 * in the workspace and one in the home folder (outside every folder the sandbox lets it write): verified when the
 * turn ends, the first is there and the second is not. The second is removed whatever happened.
 */
async function checkSandbox(r: Omit<ReattachContext, 'sessionId' | 'caps'>): Promise<CheckResult> {
  const launcher = r.o.sandboxLauncher;
  if (!launcher) return result('sandbox', 'absent', 'Not checked: this run was given no sandbox launcher.');
  const available = await sandboxAvailability(launcher);
  if (!available.ok) return result('sandbox', 'absent', `Not checked: no sandbox on this machine (${available.errors.join('; ')}).`);
  // The scripted model's port is allowed by name, as a user allows a local model server's (docs/sandbox.md).
  const choice = sandboxFor(withSandboxMode(r.config, 'workspace-write'), { cwd: r.workspace, fallback: 'workspace-write', launcher, extra: { allowHosts: [new URL(r.model.url).host] } });
  const inside = path.join(r.workspace, 'check-sandbox.txt');
  const outside = path.join(os.homedir(), `.atrium-sandbox-check-${process.pid}-${Date.now()}.txt`);
  const frames: TappedFrame[] = [];
  const decider = new ControlledDecider();
  let cs: CheckSession;
  try {
    const start = r.host.start(r.config, { cwd: r.workspace, decidePermission: decider.decide, withTool: false, timeoutMs: r.o.timeoutMs, frames, sandbox: choice.launch! });
    cs = await within(start, r.o.timeoutMs, 'starting in the sandbox').catch((error: unknown) => {
      void start.then((late) => late.session.shutdown()).catch(() => undefined);
      throw error;
    });
  } catch (error) {
    return result('sandbox', 'failed', `Did not start in the sandbox (workspace-write): ${(error as Error).message.split('\n')[0]}`);
  }
  try {
    const ctx: TurnContext = { cs, model: r.model, workspace: r.workspace, asks: true, decider, tool: r.host.tool, timeoutMs: r.o.timeoutMs };
    const o = await runTurn(ctx, scenario('shell', { command: `echo sandboxed > check-sandbox.txt; echo escaped > ${outside}` }));
    const wroteInside = fs.existsSync(inside);
    const wroteOutside = fs.existsSync(outside);
    const proof = framesOf(o.frames, 'session/prompt');
    if (wroteOutside) return result('sandbox', 'failed', 'In the sandbox, yet a write outside the workspace went through.', proof);
    if (!o.stopReason) return result('sandbox', 'failed', `In the sandbox (workspace-write) the turn did not end: ${o.error ?? 'no reason'}.`, proof);
    if (!wroteInside) return result('sandbox', 'failed', `In the sandbox (workspace-write) the turn ended ${o.stopReason}, but its command did not write in the workspace.`, proof);
    return result('sandbox', 'verified', `Runs in the sandbox (workspace-write): a turn ended ${o.stopReason}, its command wrote in the workspace and was refused outside it.`, proof);
  } finally {
    fs.rmSync(outside, { force: true });
    fs.rmSync(inside, { force: true });
    await cs.session.shutdown();
  }
}

/** exit.stdinEof and exit.sigterm, each on a fresh idle process (after its handshake), side by side. */
async function checkExits(host: CheckHost, config: AgentConfig, workspace: string, timeoutMs: number): Promise<CheckResult[]> {
  const one = async (id: 'exit.stdinEof' | 'exit.sigterm'): Promise<CheckResult> => {
    let agent: IdleAgent;
    try {
      agent = await host.startIdle(config, workspace, timeoutMs);
    } catch (error) {
      return result(id, 'failed', `A fresh process did not come up: ${(error as Error).message}`);
    }
    try {
      const what = id === 'exit.stdinEof' ? 'stdin closed' : 'SIGTERM to its process group';
      if (id === 'exit.stdinEof') agent.closeInput();
      else agent.terminate();
      const exit = await Promise.race([agent.exited, new Promise<undefined>((r) => setTimeout(r, EXIT_GRACE_MS))]);
      const secs = EXIT_GRACE_MS / 1000;
      if (!exit) return result(id, 'failed', `Still running ${secs} s after ${what} (then stopped by Atrium's SIGTERM/SIGKILL).`);
      const how = exit.signal ? `signal ${exit.signal}` : `code ${String(exit.code)}`;
      return result(id, 'verified', `An idle process exited within ${secs} s after ${what} (${how}).`);
    } finally {
      await agent.stop();
    }
  };
  return Promise.all([one('exit.stdinEof'), one('exit.sigterm')]);
}
