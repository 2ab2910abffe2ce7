/**
 * The compatibility check's turns on one running session, driven by the scripted model (src/scriptedModel): a plain
 * turn, an edit that must ask (allowed), an edit that must ask (rejected), a command through our terminal,
 * a call of the tool we host, and a cancelled long command. Each turn has a timeout; each result carries
 * the frames that prove it. What cannot happen in a protocol (pi RPC asks no permission, has no client
 * fs or terminal) is `absent` with that reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ScriptedModel } from '../scriptedModel/scriptedModel';
import type { PermissionDecider, PermissionRequestInfo } from '../session/permissions';
import { pickOption } from '../session/permissions';
import { CheckTimeoutError, framesOf, result, within, type CheckResult, type CheckSession, type HostedToolCall, type TappedFrame } from './checkTypes';

/** What the turn checks are told about the agent and its run. */
export interface TurnContext {
  cs: CheckSession;
  model: ScriptedModel;
  workspace: string;
  /** Does the preset make this agent ask before writes and commands? */
  asks: boolean;
  /** The decider the session was started with follows this (allow for the edit, reject for the reject check). */
  decider: ControlledDecider;
  tool: { name: string; calls: HostedToolCall[] };
  timeoutMs: number;
}

export const CODE_WORD = 'PELICAN-4711';

export const scenario = (name: string, args: object) => `Please do what the scenario says.\nSCENARIO: ${name} ${JSON.stringify(args)}`;

/** A permission decider the check steers: allow or reject with the agent's own option, every ask recorded. */
export class ControlledDecider {
  mode: 'allow' | 'reject' = 'allow';
  readonly asked: { request: PermissionRequestInfo; answer: string }[] = [];
  readonly decide: PermissionDecider = async (request) => {
    const option = pickOption(request.options, this.mode);
    this.asked.push({ request, answer: option ? `${option.optionId} (${option.kind})` : 'cancelled' });
    return option ? { outcome: 'selected', optionId: option.optionId, by: 'policy' } : { outcome: 'cancelled', by: 'policy' };
  };
}

interface TurnOutcome {
  stopReason?: string;
  error?: string;
  /** Frames exchanged during the turn. */
  frames: TappedFrame[];
  asked: ControlledDecider['asked'];
}

/** One prompt with a timeout; a turn that does not end is cancelled (and reported as not ending). */
export async function runTurn(ctx: TurnContext, text: string, during?: (frames: TappedFrame[]) => Promise<void>): Promise<TurnOutcome> {
  const { cs } = ctx;
  const start = cs.frames.length;
  const askedFrom = ctx.decider.asked.length;
  const turn = cs.session.prompt([{ type: 'text', text }]);
  const watcher = during?.(cs.frames);
  try {
    const { stopReason } = await within(turn, ctx.timeoutMs, 'the turn');
    return { stopReason, frames: cs.frames.slice(start), asked: ctx.decider.asked.slice(askedFrom) };
  } catch (error) {
    if (error instanceof CheckTimeoutError) {
      await cs.session.cancel().catch(() => undefined);
      await within(turn, 5000, 'the cancel').catch(() => undefined);
    }
    return { error: (error as Error).message, frames: cs.frames.slice(start), asked: ctx.decider.asked.slice(askedFrom) };
  } finally {
    await watcher?.catch(() => undefined);
  }
}

const ended = (o: TurnOutcome) => (o.stopReason ? `the turn ended ${o.stopReason}` : `the turn failed (${o.error ?? 'no reason'})`);
const inbound = (frames: TappedFrame[], method: string) => frames.filter((f) => f.dir === 'in' && f.msg.method === method);
const rpcEvents = (frames: TappedFrame[], ...types: string[]) => frames.filter((f) => f.dir === 'in' && types.includes(String(f.msg.type)));

/** prompt.turn: a plain answer streamed back, ending end_turn; it also plants the code word for reattach. */
export async function checkPromptTurn(ctx: TurnContext): Promise<CheckResult> {
  const o = await runTurn(ctx, `The code word is ${CODE_WORD}. Keep it.\nSCENARIO: answer {"text": "Noted: the code word."}`);
  const text = ctx.cs.session.model
    .messages('agent')
    .map((m) => m.text)
    .join('');
  const proof = ctx.cs.session.agentInfo.protocol === 'acp' ? framesOf(o.frames, 'session/prompt') : rpcEvents(o.frames, 'agent_end', 'message_end');
  if (o.stopReason === 'end_turn' && text.includes('Noted')) return result('prompt.turn', 'verified', 'A prompt got the streamed answer and ended end_turn.', proof);
  return result('prompt.turn', 'failed', `${ended(o)}; the answer ${text.includes('Noted') ? 'came' : 'did not come'}.`, proof);
}

/** permission.asked and fs.write: an edit of an existing file, allowed with the agent's allow option. */
export async function checkAllowedEdit(ctx: TurnContext): Promise<[CheckResult, CheckResult]> {
  const acp = ctx.cs.session.agentInfo.protocol === 'acp';
  const file = path.join(ctx.workspace, 'check-edit.txt');
  ctx.decider.mode = 'allow';
  const o = await runTurn(ctx, scenario('edit', { path: file, old: 'colour = red', new: 'colour = blue' }));
  const written = fs.readFileSync(file, 'utf8') === 'name = demo\ncolour = blue\n';
  const writes = inbound(o.frames, 'fs/write_text_file');
  const asks = framesOf(o.frames, 'session/request_permission');
  let asked: CheckResult;
  if (!acp) asked = result('permission.asked', 'absent', `pi RPC has no permission requests (the edit was ${written ? 'applied' : 'not applied'}, unasked).`);
  else if (o.asked.length) {
    asked = result('permission.asked', 'verified', `Asked before the edit (options ${o.asked[0]!.request.options.map((op) => op.optionId).join(', ')}); answered ${o.asked[0]!.answer}.`, asks);
  } else if (!ctx.asks) asked = result('permission.asked', 'absent', `Never asks: no session/request_permission before the edit (${written ? 'applied unasked' : 'file unchanged'}).`);
  else asked = result('permission.asked', 'failed', `No session/request_permission before the edit, though the preset is meant to make it ask; ${ended(o)}.`);

  let write: CheckResult;
  if (!acp) write = result('fs.write', 'absent', `pi RPC has no client file system: the agent ${written ? 'edited the file itself' : 'did not edit the file'}.`);
  else if (writes.length && written) write = result('fs.write', 'verified', 'The edit came to us as fs/write_text_file and is on disk.', framesOf(o.frames, 'fs/write_text_file'));
  else if (written) write = result('fs.write', 'absent', 'Edits the disk itself: no fs/write_text_file came, though the client offers fs.writeTextFile.', asks);
  else {
    const reads = framesOf(o.frames, 'fs/read_text_file', 'fs/write_text_file');
    write = result('fs.write', 'failed', `The file was not edited; ${ended(o)}${writes.length ? ' (fs/write_text_file came, content differs)' : ''}.`, reads.length ? reads : asks);
  }
  return [asked, write];
}

/** permission.reject: an edit answered with the agent's reject option must leave the file and end the turn. */
export async function checkRejectedEdit(ctx: TurnContext): Promise<CheckResult> {
  const acp = ctx.cs.session.agentInfo.protocol === 'acp';
  const file = path.join(ctx.workspace, 'check-keep.txt');
  ctx.decider.mode = 'reject';
  const o = await runTurn(ctx, scenario('edit', { path: file, old: 'keep = me', new: 'lose = me' }));
  ctx.decider.mode = 'allow';
  const untouched = fs.readFileSync(file, 'utf8') === 'keep = me\n';
  const proof = framesOf(o.frames, 'session/request_permission');
  if (!acp) return result('permission.reject', 'absent', `pi RPC has no permission requests: nothing to reject (the edit was ${untouched ? 'not applied' : 'applied'}).`);
  if (!o.asked.length) {
    const status = ctx.asks ? 'failed' : 'absent';
    return result('permission.reject', status, `Never asked, so nothing could be rejected; ${untouched ? 'the file is unchanged' : 'the edit was applied unasked'}.`);
  }
  if (!untouched) return result('permission.reject', 'failed', `Answered ${o.asked[0]!.answer}, yet the file was edited; ${ended(o)}.`, proof);
  if (!o.stopReason) return result('permission.reject', 'failed', `Answered ${o.asked[0]!.answer}; the file is unchanged but ${ended(o)}.`, proof);
  return result('permission.reject', 'verified', `Answered ${o.asked[0]!.answer}: the file is unchanged and the turn ended ${o.stopReason}.`, proof);
}

/** terminal: a command the agent should run through terminal/create. */
export async function checkTerminal(ctx: TurnContext): Promise<CheckResult> {
  if (ctx.cs.session.agentInfo.protocol !== 'acp') return result('terminal', 'absent', 'pi RPC has no client terminals: the agent runs commands itself.');
  const o = await runTurn(ctx, scenario('shell', { command: 'echo agent-host-terminal-check' }));
  const creates = inbound(o.frames, 'terminal/create');
  const proof = framesOf(o.frames, 'terminal/create', 'terminal/output', 'terminal/wait_for_exit', 'terminal/release');
  if (creates.length) return result('terminal', 'verified', `Ran the command through terminal/create; ${ended(o)}.`, proof);
  const executed = ctx.cs.session.model.timeline().some((e) => e.kind === 'tool_call' && e.status === 'completed' && JSON.stringify(e).includes('agent-host-terminal-check'));
  if (executed) return result('terminal', 'absent', 'Runs commands with its own shell: no terminal/create came, though the client offers terminal.');
  return result('terminal', 'failed', `The command did not run (no terminal/create, no completed tool call naming it); ${ended(o)}.`, framesOf(o.frames, 'session/request_permission'));
}

/** mcp.tool: the tool we host (MCP for ACP agents; pi RPC host tools stand in where the dialect has them). */
export async function checkHostedTool(ctx: TurnContext, offered: boolean, whyNot?: string): Promise<CheckResult> {
  const acp = ctx.cs.session.agentInfo.protocol === 'acp';
  if (!offered) return result('mcp.tool', 'absent', whyNot ?? 'The hosted tool could not be offered.');
  const before = ctx.tool.calls.length;
  const o = await runTurn(ctx, scenario('tool', { name: ctx.tool.name, args: { path: 'check-edit.txt' } }));
  const calls = ctx.tool.calls.slice(before);
  const mentions = o.frames.filter((f) => f.dir === 'in' && JSON.stringify(f.msg).includes(ctx.tool.name)).slice(0, 3);
  const how = acp ? 'our MCP server (stdio bridge in session/new mcpServers)' : 'set_host_tools (pi RPC has no MCP; host tools stand in)';
  if (calls.length) return result('mcp.tool', 'verified', `Called ${ctx.tool.name} on ${how}; ${ended(o)}.`, mentions);
  const lastModel = ctx.model.requests.filter((r) => r.decision !== 'side-text').at(-1);
  return result('mcp.tool', 'failed', `${ctx.tool.name} was offered through ${how} but never called (model decision: ${lastModel?.decision ?? 'none'}); ${ended(o)}.`, mentions);
}

/** cancel: a long command, cancelled once it runs (or after a few seconds); the turn must end `cancelled` without hanging. */
export async function checkCancel(ctx: TurnContext): Promise<CheckResult> {
  const { session } = ctx.cs;
  let sent: 'running' | 'waited' | undefined;
  const start = ctx.cs.frames.length;
  const running = async () => {
    const fallback = Date.now() + CANCEL_FALLBACK_MS;
    while (session.model.turn !== 'idle') {
      const live = session.model.timeline().some((e) => e.kind === 'tool_call' && e.status !== 'completed' && e.status !== 'failed' && JSON.stringify(e).includes('sleep 30'));
      const frames = ctx.cs.frames.slice(start);
      const shown = live || inbound(frames, 'terminal/create').length > 0 || rpcEvents(frames, 'tool_execution_start').length > 0;
      if ((shown && session.model.turn === 'running') || Date.now() > fallback) {
        if (shown) await new Promise((r) => setTimeout(r, 500));
        sent = shown ? 'running' : 'waited';
        await session.cancel();
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  ctx.decider.mode = 'allow';
  const o = await runTurn(ctx, scenario('shell', { command: 'sleep 30' }), running);
  const proof = [...framesOf(o.frames, 'session/cancel', 'abort'), ...o.frames.filter((f) => f.dir === 'in' && 'result' in f.msg && JSON.stringify(f.msg.result).includes('cancelled'))];
  const when = sent === 'running' ? 'while the long command ran' : `${CANCEL_FALLBACK_MS / 1000} s into the turn (no running command showed)`;
  if (!sent) return result('cancel', 'failed', `The turn ended before a cancel was sent: ${ended(o)}.`);
  if (o.stopReason === 'cancelled') return result('cancel', 'verified', `Cancelled ${when}: the turn ended cancelled.`, proof);
  return result('cancel', 'failed', `Cancelled ${when}, but ${ended(o)}.`, proof);
}

/** A cancel is sent this long into the turn when no running command shows by then. */
const CANCEL_FALLBACK_MS = 5000;
