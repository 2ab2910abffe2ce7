/**
 * The agent's questions on the ACP wire — agentao's `_agentao.cn/ask_user` and `elicitation/create` — read
 * into the session's AskUserRequest / ElicitRequest, served by the start's `askUser` / `elicit` services,
 * and answered in the wire's shape. A start without the service answers -32601 saying so: the agent is
 * told at once instead of waiting on a question nobody can see.
 */
import { ResponseError } from 'vscode-jsonrpc/node';
import { askUserRecord, elicitRecord, type QuestionRecord } from '../session/questionRecord';
import type { AgentStartOptions, AskUserRequest, ElicitField, ElicitRequest, QuestionOption } from '../session/sessionHost';
import { ErrorCodes } from './acpErrors';

type Services = Pick<AgentStartOptions, 'askUser' | 'elicit'>;
/** Serves one question request: the answer for the agent, and the record for the transcript. */
type Serve = (services: Services, params: unknown, signal: AbortSignal) => Promise<{ result: unknown; record: QuestionRecord }>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function option(o: unknown): QuestionOption | undefined {
  if (typeof o === 'string') return { label: o };
  if (o && typeof o === 'object') {
    const r = o as Record<string, unknown>;
    const label = r.label ?? r.value ?? r.name ?? r.text;
    if (typeof label === 'string') return { label, ...(typeof r.description === 'string' ? { description: r.description } : {}) };
  }
  return undefined;
}

/** `_agentao.cn/ask_user` parameters as a question (options may be strings or `{label|value|name|text, description}`). */
export function askUserRequest(params: unknown): AskUserRequest {
  const p = (params ?? {}) as Record<string, unknown>;
  const question = str(p.question);
  const header = str(p.header);
  return {
    ...(question !== undefined ? { question } : {}),
    ...(header !== undefined ? { header } : {}),
    options: Array.isArray(p.options) ? p.options.map(option).filter((o): o is QuestionOption => !!o) : [],
    multiple: !!p.multiple,
    allowCustom: !!p.allowCustom,
  };
}

interface PropertySchema {
  type?: unknown;
  title?: unknown;
  description?: unknown;
  enum?: unknown[];
  oneOf?: { const?: unknown }[];
  default?: unknown;
  items?: { enum?: unknown[] };
}

/** `elicitation/create` parameters as a form or a link; undefined for a mode this host does not serve (declined). */
export function elicitRequest(params: unknown): ElicitRequest | undefined {
  const p = (params ?? {}) as { mode?: unknown; message?: unknown; url?: unknown; requestedSchema?: { properties?: Record<string, PropertySchema>; required?: string[] | null } };
  const message = str(p.message) ?? '';
  if (p.mode === 'url' && typeof p.url === 'string') return { mode: 'url', message, url: p.url };
  if (p.mode !== undefined && p.mode !== 'form') return undefined;
  const required = new Set(p.requestedSchema?.required ?? []);
  const fields = Object.entries(p.requestedSchema?.properties ?? {}).map(([name, s]): ElicitField => {
    const choices = s.enum ?? s.oneOf?.map((o) => o.const) ?? s.items?.enum;
    const [type, title, description] = [str(s.type), str(s.title), str(s.description)];
    return {
      name,
      ...(type !== undefined ? { type } : {}),
      ...(title !== undefined ? { title } : {}),
      ...(description ? { description } : {}),
      ...(choices ? { choices } : {}),
      ...(s.default !== undefined ? { default: s.default } : {}),
      required: required.has(name),
    };
  });
  return { mode: 'form', message, fields };
}

const unserved = (method: string, what: string) => new ResponseError(ErrorCodes.MethodNotFound, `${method} is not served here: this client has nobody to ask ${what}`);

const askUser: Serve = async (services, params, signal) => {
  if (!services.askUser) throw unserved('_agentao.cn/ask_user', 'the question');
  const request = askUserRequest(params);
  const result = await services.askUser(request, signal);
  return { result, record: askUserRecord(request, result) };
};

const elicit: Serve = async (services, params, signal) => {
  if (!services.elicit) throw unserved('elicitation/create', 'for this input');
  const request = elicitRequest(params);
  if (!request) return { result: { action: 'decline' }, record: elicitRecord({ message: str((params as { message?: unknown } | null)?.message) ?? '' }, { action: 'decline' }) };
  const result = await services.elicit(request, signal);
  return { result, record: elicitRecord(request, result) };
};

/** The question methods this client serves, by wire name. */
export const QUESTION_METHODS: Record<string, Serve> = { '_agentao.cn/ask_user': askUser, 'elicitation/create': elicit };
