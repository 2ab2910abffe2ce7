/**
 * A scripted model server on 127.0.0.1 for running real coding agents offline. It speaks the four wire formats the
 * agents use (OpenAI chat completions, OpenAI Responses, Anthropic Messages, Gemini) and answers each request from
 * its content alone — see decide.ts for the scenario grammar.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { anthropic, countTokens as anthropicCountTokens } from './anthropic';
import { decide, parseScenario } from './decide';
import { gemini, countTokens as geminiCountTokens } from './gemini';
import { openAiChat } from './openaiChat';
import { openAiResponses } from './openaiResponses';
import { type Api, estimateTokens, isRecord, modelName, sendJson, type WireFormat } from './wire';

export { decide, parseScenario } from './decide';
export type { Conversation, Decision, OfferedTool, Scenario } from './decide';

export interface ModelRequestRecord {
  api: Api | 'other';
  /** Request path with its query, e.g. `/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`. */
  path: string;
  /** What the server did: side-text, json, answer, think, default-answer, tool:<name>, final, final-denied, no-tool,
   *  count-tokens, models, probe, not-found, bad-request, … */
  decision: string;
  scenario?: string;
  /** Name of the tool called, when the decision was a tool call. */
  tool?: string;
  /** The text of the last tool result the request carries after its last user message (what the model was given). */
  toolResult?: string;
  body: unknown;
}

export interface ScriptedModel {
  url: string;
  port: number;
  /** Every request, in arrival order. */
  requests: ModelRequestRecord[];
  /** Requests that got a tool call, in arrival order. */
  toolCalls(): ModelRequestRecord[];
  close(): Promise<void>;
}

export interface ScriptedModelOptions {
  port?: number;
  host?: '127.0.0.1';
  log?: (line: string) => void;
  /** The folder the agents work in: the greeting's example writes there (see defaultAnswer). */
  workspace?: string;
}

const MODELS = ['scripted-model', 'gpt-5.2-codex', 'claude-sonnet-4-5', 'gemini-2.5-flash'];

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  switch ((req.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
      return gunzip(raw);
    case 'deflate':
      return inflate(raw);
    case 'br':
      return brotli(raw);
    case '':
    case 'identity':
      return raw;
    default:
      throw new Error(`unsupported content-encoding ${req.headers['content-encoding']}`);
  }
}

/** A wire format and what to do with the request; `undefined` when nothing here answers it. */
type Route = { kind: 'turn'; format: WireFormat; stream?: boolean } | { kind: 'count'; api: Api; count: (body: Record<string, unknown>) => unknown } | { kind: 'models' } | { kind: 'probe' };

function route(method: string, pathname: string): Route | undefined {
  if ((method === 'HEAD' || method === 'GET') && pathname === '/') return { kind: 'probe' };
  if (method === 'GET' && pathname.endsWith('/models')) return { kind: 'models' };
  if (method !== 'POST') return undefined;
  if (pathname.endsWith('/chat/completions')) return { kind: 'turn', format: openAiChat };
  if (pathname.endsWith('/responses')) return { kind: 'turn', format: openAiResponses };
  if (pathname.endsWith('/messages/count_tokens')) return { kind: 'count', api: 'anthropic', count: anthropicCountTokens };
  if (pathname.endsWith('/messages')) return { kind: 'turn', format: anthropic };
  const geminiCall = /\/models\/[^/]+:(streamGenerateContent|generateContent|countTokens)$/.exec(pathname);
  if (geminiCall?.[1] === 'countTokens') return { kind: 'count', api: 'gemini', count: geminiCountTokens };
  if (geminiCall) return { kind: 'turn', format: gemini, stream: geminiCall[1] === 'streamGenerateContent' };
  return undefined;
}

export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const host = opts.host ?? '127.0.0.1';
  const log = opts.log ?? (() => undefined);
  const requests: ModelRequestRecord[] = [];
  /** SCENARIO: flaky: how many errors each prompt (its last user text) has been answered with. */
  const flakyServed = new Map<string, number>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const pathname = new URL(path, 'http://localhost').pathname;
    const record = (entry: Omit<ModelRequestRecord, 'path'>) => {
      requests.push({ path, ...entry });
      log(`${method} ${path} -> ${entry.api} ${entry.decision}${entry.scenario ? ` (scenario ${entry.scenario})` : ''}`);
    };

    const found = route(method, pathname);
    if (!found) {
      record({ api: 'other', decision: 'not-found', body: undefined });
      sendJson(res, 404, { error: { type: 'not_found_error', message: `scripted model: no route for ${method} ${pathname}` } });
      return;
    }
    if (found.kind === 'probe') {
      record({ api: 'other', decision: 'probe', body: undefined });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(method === 'HEAD' ? undefined : 'scripted model\n');
      return;
    }
    if (found.kind === 'models') {
      record({ api: 'openai-chat', decision: 'models', body: undefined });
      const data = MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' }));
      // `data` is the OpenAI shape, `models` the Gemini one; each client ignores the other.
      sendJson(res, 200, { object: 'list', data, models: MODELS.map((id) => ({ name: `models/${id}` })) });
      return;
    }

    const api = found.kind === 'turn' ? found.format.api : found.api;
    let body: Record<string, unknown>;
    try {
      const text = (await readBody(req)).toString('utf8');
      const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
      if (!isRecord(parsed)) throw new Error('body is not a JSON object');
      body = parsed;
    } catch (err) {
      record({ api, decision: 'bad-request', body: undefined });
      sendJson(res, 400, { error: { type: 'invalid_request_error', message: `scripted model: ${String(err)}` } });
      return;
    }
    if (found.kind === 'count') {
      record({ api, decision: 'count-tokens', body });
      sendJson(res, 200, found.count(body));
      return;
    }

    const conversation = found.format.toConversation(body);
    // SCENARIO: flaky: the prompt's first `fail` requests get an HTTP error (a transient failure an agent may retry).
    const flaky = conversation.hasToolResultAfterLastUser ? undefined : parseScenario(conversation.lastUserText);
    if (flaky?.name === 'flaky') {
      const served = flakyServed.get(conversation.lastUserText) ?? 0;
      const fail = typeof flaky.args.fail === 'number' ? flaky.args.fail : 1;
      if (served < fail) {
        flakyServed.set(conversation.lastUserText, served + 1);
        const status = typeof flaky.args.status === 'number' ? flaky.args.status : 503;
        record({ api, decision: `flaky-error:${status}`, scenario: 'flaky', body });
        sendJson(res, status, { type: 'error', error: { type: 'overloaded_error', message: `scripted model: overloaded (flaky ${served + 1} of ${fail})` } });
        return;
      }
    }
    const decision = decide(conversation, { workspace: opts.workspace });
    const entry: Omit<ModelRequestRecord, 'path'> = { api, decision: decision.label, body };
    if (conversation.hasToolResultAfterLastUser) entry.toolResult = conversation.lastToolResultText;
    if (decision.scenario !== undefined) entry.scenario = decision.scenario;
    if (decision.type === 'tool') entry.tool = decision.tool.name;
    record(entry);
    const stream = found.stream ?? body.stream === true;
    found.format.respond(res, decision, { body, stream, model: modelName(body), inputTokens: estimateTokens(body) });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`${req.method ?? ''} ${req.url ?? ''} -> error ${String(err)}`);
      if (!res.headersSent) sendJson(res, 500, { error: { type: 'api_error', message: `scripted model: ${String(err)}` } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    toolCalls: () => requests.filter((r) => r.tool !== undefined),
    close: () =>
      new Promise<void>((resolve) => {
        // Agents keep connections alive; without this, close() would wait for them to time out.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
