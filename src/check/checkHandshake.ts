/**
 * What the agent told about itself when it started — ACP `initialize` (version, agent info, capabilities,
 * auth methods), pi RPC `ready`/`get_state` — read from the frames, and the rows that only report claims:
 * fork, MCP over http/sse, image/audio/embedded-context prompts. Claimed is never verified here.
 */
import type { PromptCapabilities } from '../session/agentSession';
import { framesOf, result, type CheckResult, type HandshakeInfo, type TappedFrame } from './checkTypes';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

/** The handshake in `frames` (ACP initialize's answer; pi RPC's ready frame and first get_state). */
export function handshakeOf(frames: TappedFrame[], protocol: 'acp' | 'rpc'): HandshakeInfo {
  if (protocol === 'rpc') {
    const ready = frames.find((f) => f.dir === 'in' && f.msg.type === 'ready')?.msg;
    const state = obj(frames.find((f) => f.dir === 'in' && f.msg.type === 'response' && f.msg.command === 'get_state' && f.msg.success === true)?.msg.data);
    const version = typeof ready?.version === 'string' ? ready.version : undefined;
    return {
      protocolVersion: typeof ready?.protocolVersion === 'number' ? ready.protocolVersion : null,
      agent: { name: ready ? 'oh-my-pi' : state ? 'pi' : 'unknown', ...(version ? { version } : {}) },
      authMethods: [],
    };
  }
  const request = frames.find((f) => f.dir === 'out' && f.msg.method === 'initialize');
  const answer = obj(frames.find((f) => f.dir === 'in' && request && f.msg.id === request.msg.id && 'result' in f.msg)?.msg.result);
  const info = obj(answer?.agentInfo);
  const methods = Array.isArray(answer?.authMethods) ? (answer.authMethods as Obj[]) : [];
  return {
    protocolVersion: typeof answer?.protocolVersion === 'number' ? answer.protocolVersion : null,
    agent: {
      name: typeof info?.name === 'string' ? info.name : 'unknown',
      ...(typeof info?.title === 'string' ? { title: info.title } : {}),
      ...(typeof info?.version === 'string' ? { version: info.version } : {}),
    },
    capabilities: obj(answer?.agentCapabilities) ?? {},
    authMethods: methods.map((m) => ({
      id: String(m.id),
      ...(typeof m.name === 'string' ? { name: m.name } : {}),
      ...(typeof m.type === 'string' ? { type: m.type } : {}),
    })),
  };
}

/** The session features an ACP agent advertises, in words. */
export function advertised(caps: Obj): string[] {
  const session = obj(caps.sessionCapabilities) ?? {};
  const mcp = obj(caps.mcpCapabilities) ?? {};
  const prompt = obj(caps.promptCapabilities) ?? {};
  return [
    ...(caps.loadSession === true ? ['loadSession'] : []),
    ...['list', 'resume', 'fork', 'close', 'delete'].filter((k) => session[k]).map((k) => `session/${k}`),
    ...['http', 'sse'].filter((k) => mcp[k] === true).map((k) => `MCP ${k}`),
    ...['image', 'audio', 'embeddedContext'].filter((k) => prompt[k] === true).map((k) => `prompt ${k}`),
  ];
}

export function initializeResult(h: HandshakeInfo, frames: TappedFrame[], error?: Error): CheckResult {
  if (!h.capabilities) {
    const state = frames.some((f) => f.msg.type === 'response' && f.msg.command === 'get_state' && f.msg.success === true);
    const proof = framesOf(frames, 'ready', 'response').slice(0, 2);
    if (!state) return result('initialize', 'failed', `pi RPC has no initialize, and get_state was not answered: ${error?.message ?? 'no answer'}`, proof);
    const dialect = frames.some((f) => f.msg.type === 'ready') ? 'the oh-my-pi fork (ready frame)' : 'upstream pi';
    return result('initialize', 'verified', `pi RPC has no initialize: get_state answered; dialect ${dialect}; no auth methods.`, proof);
  }
  const proof = framesOf(frames, 'initialize');
  if (h.protocolVersion === null) return result('initialize', 'failed', `initialize was not answered: ${error?.message ?? 'no answer'}`, proof);
  const auth = h.authMethods.length ? h.authMethods.map((m) => `${m.id}${m.type ? ` (${m.type})` : ''}`).join(', ') : 'none';
  const agent = `${h.agent.name}${h.agent.version ? ` ${h.agent.version}` : ''}`;
  const caps = advertised(h.capabilities);
  return result('initialize', 'verified', `protocolVersion ${h.protocolVersion}; agent ${agent}; auth methods: ${auth}; advertises: ${caps.join(', ') || 'nothing beyond prompts'}.`, proof);
}

/** session.new: opened, or how it failed (sign-in: which methods were offered). */
export function sessionNewResult(frames: TappedFrame[], protocol: 'acp' | 'rpc', error?: Error, authMethods?: string[]): CheckResult {
  if (protocol === 'rpc') {
    if (error) return result('session.new', 'failed', `The agent did not start a session: ${error.message}`);
    return result('session.new', 'verified', 'pi RPC starts with a session of its own (get_state names it); no sign-in.');
  }
  const proof = framesOf(frames, 'session/new', 'authenticate');
  if (authMethods) return result('session.new', 'failed', `session/new needed sign-in (-32000); auth methods offered: ${authMethods.join(', ') || 'none'}.`, proof);
  if (error) return result('session.new', 'failed', `session/new failed: ${error.message}`, proof);
  return result('session.new', 'verified', 'session/new answered with a session id; no sign-in needed.', proof);
}

/** Rows that only report what the agent advertises. */
export function capabilityRows(protocol: 'acp' | 'rpc', caps: Obj | undefined, prompt: PromptCapabilities | undefined): CheckResult[] {
  if (protocol === 'rpc' || !caps) {
    const fork = 'The RPC dialect has a fork command (fork upstream, branch in oh-my-pi); not exercised.';
    return [
      result('session.fork', 'claimed', fork),
      result('mcp.http', 'absent', 'pi RPC has no MCP.'),
      result('mcp.sse', 'absent', 'pi RPC has no MCP.'),
      result('prompt.image', prompt?.image ? 'claimed' : 'absent', prompt?.image ? 'The prompt command takes images; not exercised.' : 'Not offered.'),
      result('prompt.audio', 'absent', 'pi RPC prompts take text and images only.'),
      result('prompt.embeddedContext', 'absent', 'pi RPC prompts take text and images only (context goes as text).'),
    ];
  }
  const session = obj(caps.sessionCapabilities) ?? {};
  const mcp = obj(caps.mcpCapabilities) ?? {};
  const pc = obj(caps.promptCapabilities) ?? {};
  const row = (id: CheckResult['id'], on: boolean, field: string) =>
    on ? result(id, 'claimed', `Advertised (${field}); not exercised by the check.`) : result(id, 'absent', `Not advertised (${field}).`);
  return [
    row('session.fork', !!session.fork, 'sessionCapabilities.fork'),
    row('mcp.http', mcp.http === true, 'mcpCapabilities.http'),
    row('mcp.sse', mcp.sse === true, 'mcpCapabilities.sse'),
    row('prompt.image', pc.image === true, 'promptCapabilities.image'),
    row('prompt.audio', pc.audio === true, 'promptCapabilities.audio'),
    row('prompt.embeddedContext', pc.embeddedContext === true, 'promptCapabilities.embeddedContext'),
  ];
}
