/** OpenAI chat completions (`POST …/chat/completions`): opencode, qwen-code and the pi family speak it. */
import type { ServerResponse } from 'node:http';
import type { Conversation, Decision, OfferedTool } from './decide';
import {
  argumentsJson,
  chunkText,
  type Entry,
  isRecord,
  newId,
  outputTokens,
  type ReplyContext,
  resultText,
  sendEvent,
  sendJson,
  splitEvenly,
  startSse,
  summarizeTurn,
  textOf,
  type WireFormat,
} from './wire';

function toEntry(message: unknown): Entry {
  if (!isRecord(message)) return { kind: 'system' };
  switch (message.role) {
    case 'user':
      return { kind: 'user', text: textOf(message.content) };
    case 'tool':
    case 'function':
      return { kind: 'result', text: resultText(message.content) };
    case 'assistant': {
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      return { kind: 'assistant', calls: calls.map((c) => (isRecord(c) && isRecord(c.function) ? String(c.function.name) : '')) };
    }
    default:
      return { kind: 'system' };
  }
}

function toTool(entry: unknown): OfferedTool | undefined {
  // `tools: [{type:'function', function:{…}}]`, or the legacy `functions: [{…}]`.
  const fn = isRecord(entry) && isRecord(entry.function) ? entry.function : entry;
  if (!isRecord(fn) || typeof fn.name !== 'string') return undefined;
  const params = fn.parameters;
  return { name: fn.name, kind: 'function', ...(isRecord(params) ? { schema: params } : {}) };
}

function toConversation(body: Record<string, unknown>): Conversation {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const declared = [body.tools, body.functions].flatMap((list) => (Array.isArray(list) ? list : []));
  const choice = body.tool_choice;
  const tools = choice === 'none' ? [] : declared.map(toTool).filter((t): t is OfferedTool => t !== undefined);
  const conv: Conversation = { ...summarizeTurn(messages.map(toEntry)), tools };
  if (choice === 'required') conv.forcedTool = '*';
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    conv.forcedTool = choice.function.name;
  }
  const format = body.response_format;
  if (isRecord(format) && format.type === 'json_object') conv.jsonAnswer = true;
  if (isRecord(format) && format.type === 'json_schema') {
    const spec = format.json_schema;
    conv.jsonAnswer = isRecord(spec) && isRecord(spec.schema) ? spec.schema : true;
  }
  return conv;
}

function respond(res: ServerResponse, decision: Decision, ctx: ReplyContext): void {
  const id = newId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const completion = outputTokens(decision);
  const usage = { prompt_tokens: ctx.inputTokens, completion_tokens: completion, total_tokens: ctx.inputTokens + completion };
  const finish = decision.type === 'tool' ? 'tool_calls' : 'stop';
  const callId = newId('call_');
  const name = decision.type === 'tool' ? (decision.tool.callName ?? decision.tool.name) : '';

  if (!ctx.stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: decision.type === 'text' ? decision.text : null };
    if (decision.type === 'text' && decision.reasoning) message.reasoning_content = decision.reasoning;
    if (decision.type === 'tool') {
      message.tool_calls = [{ id: callId, type: 'function', function: { name, arguments: argumentsJson(decision) } }];
    }
    const choices = [{ index: 0, message, finish_reason: finish }];
    sendJson(res, 200, { id, object: 'chat.completion', created, model: ctx.model, choices, usage });
    return;
  }

  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: ctx.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  startSse(res);
  sendEvent(res, chunk({ role: 'assistant', content: '' }));
  if (decision.type === 'text') {
    // `reasoning_content` is the field openai-compatible clients (ai-sdk, pi, qwen) read thinking from.
    for (const piece of decision.reasoning ? chunkText(decision.reasoning) : []) sendEvent(res, chunk({ reasoning_content: piece }));
    for (const piece of chunkText(decision.text)) sendEvent(res, chunk({ content: piece }));
  } else {
    sendEvent(res, chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name, arguments: '' } }] }));
    for (const fragment of splitEvenly(argumentsJson(decision))) {
      sendEvent(res, chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }));
    }
  }
  sendEvent(res, chunk({}, finish));
  sendEvent(res, { id, object: 'chat.completion.chunk', created, model: ctx.model, choices: [], usage });
  sendEvent(res, '[DONE]');
  res.end();
}

export const openAiChat: WireFormat = { api: 'openai-chat', toConversation, respond };
