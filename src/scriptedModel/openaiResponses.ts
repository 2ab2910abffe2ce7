/** OpenAI Responses API (`POST …/responses`): what codex speaks (it rejects chat completions). */
import type { ServerResponse } from 'node:http';
import type { Conversation, Decision, OfferedTool } from './decide';
import {
  argumentsJson,
  chunkText,
  type Entry,
  estimateTokens,
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

const RESULT_TYPES = ['function_call_output', 'custom_tool_call_output', 'mcp_tool_call_output', 'local_shell_call_output'];

function toEntry(item: unknown): Entry {
  if (!isRecord(item)) return { kind: 'system' };
  const type = item.type;
  if (type === 'message' || (type === undefined && typeof item.role === 'string')) {
    if (item.role === 'user') return { kind: 'user', text: textOf(item.content) };
    return item.role === 'assistant' ? { kind: 'assistant' } : { kind: 'system' };
  }
  if (typeof type === 'string' && RESULT_TYPES.includes(type)) {
    const output = item.output;
    // Codex sends a failed call's output as `{content, success: false}`.
    return { kind: 'result', text: resultText(output), isError: isRecord(output) && output.success === false };
  }
  if (type === 'function_call' || type === 'custom_tool_call') {
    const name = String(item.name);
    return { kind: 'assistant', calls: [typeof item.namespace === 'string' ? joinNamespace(item.namespace, name) : name] };
  }
  return { kind: 'assistant' };
}

/** Codex names namespaced MCP tools `mcp__ide` (or `mcp__ide__`) + the tool's own name. */
function joinNamespace(namespace: string, name: string): string {
  return namespace.endsWith('_') ? `${namespace}${name}` : `${namespace}__${name}`;
}

function toTools(entry: unknown, namespace?: string): OfferedTool[] {
  if (!isRecord(entry) || typeof entry.name !== 'string') return [];
  const name = entry.name;
  const inNamespace = namespace === undefined ? {} : { namespace, callName: name };
  const fullName = namespace === undefined ? name : joinNamespace(namespace, name);
  switch (entry.type) {
    case 'function': {
      const params = entry.parameters;
      return [{ name: fullName, kind: 'function', ...inNamespace, ...(isRecord(params) ? { schema: params } : {}) }];
    }
    case 'custom':
      return [{ name: fullName, kind: 'custom', ...inNamespace }];
    case 'namespace':
      return Array.isArray(entry.tools) ? entry.tools.flatMap((t) => toTools(t, name)) : [];
    default:
      return []; // hosted tools (web_search, local_shell, tool_search) have no call the script could make
  }
}

function toConversation(body: Record<string, unknown>): Conversation {
  const input = body.input;
  const items = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
  const choice = body.tool_choice;
  const declared = Array.isArray(body.tools) ? body.tools : [];
  const tools = choice === 'none' ? [] : declared.flatMap((t) => toTools(t));
  const conv: Conversation = { ...summarizeTurn(items.map(toEntry)), tools };
  if (choice === 'required') conv.forcedTool = '*';
  else if (isRecord(choice) && typeof choice.name === 'string') {
    conv.forcedTool = typeof choice.namespace === 'string' ? joinNamespace(choice.namespace, choice.name) : choice.name;
  }
  const text = body.text;
  const format = isRecord(text) ? text.format : undefined;
  if (isRecord(format) && format.type === 'json_object') conv.jsonAnswer = true;
  if (isRecord(format) && format.type === 'json_schema') {
    conv.jsonAnswer = isRecord(format.schema) ? format.schema : true;
  }
  return conv;
}

type Item = Record<string, unknown>;

function respond(res: ServerResponse, decision: Decision, ctx: ReplyContext): void {
  const responseId = newId('resp_');
  const createdAt = Math.floor(Date.now() / 1000);
  const reasoningTokens = decision.type === 'text' && decision.reasoning ? estimateTokens(decision.reasoning) : 0;
  const output = outputTokens(decision);
  const usage = {
    input_tokens: ctx.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: ctx.inputTokens + output,
  };
  const response = (status: string, items: Item[]) => ({
    id: responseId,
    object: 'response',
    created_at: createdAt,
    status,
    model: ctx.model,
    output: items,
    ...(status === 'completed' ? { usage } : {}),
  });

  const items: Item[] = [];
  if (decision.type === 'text') {
    if (decision.reasoning) {
      items.push({ id: newId('rs_'), type: 'reasoning', summary: [{ type: 'summary_text', text: decision.reasoning }] });
    }
    const content = [{ type: 'output_text', text: decision.text, annotations: [] }];
    items.push({ id: newId('msg_'), type: 'message', status: 'completed', role: 'assistant', content });
  } else {
    const tool = decision.tool;
    const common = { status: 'completed', call_id: newId('call_'), name: tool.callName ?? tool.name };
    const namespace = tool.namespace === undefined ? {} : { namespace: tool.namespace };
    if (tool.kind === 'custom' && decision.input.kind === 'raw') {
      items.push({ id: newId('ctc_'), type: 'custom_tool_call', ...common, input: decision.input.input });
    } else {
      items.push({ id: newId('fc_'), type: 'function_call', ...common, ...namespace, arguments: argumentsJson(decision) });
    }
  }

  if (!ctx.stream) {
    sendJson(res, 200, response('completed', items));
    return;
  }

  let sequence = 0;
  const emit = (type: string, data: Record<string, unknown>) => sendEvent(res, { type, sequence_number: sequence++, ...data }, type);
  startSse(res);
  emit('response.created', { response: response('in_progress', []) });
  emit('response.in_progress', { response: response('in_progress', []) });
  items.forEach((item, outputIndex) => {
    const at = { item_id: item.id, output_index: outputIndex };
    switch (item.type) {
      case 'reasoning': {
        const text = decision.type === 'text' ? (decision.reasoning ?? '') : '';
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, summary: [] } });
        emit('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
        for (const delta of chunkText(text)) emit('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta });
        emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text });
        emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text } });
        break;
      }
      case 'message': {
        const text = decision.type === 'text' ? decision.text : '';
        const part = { type: 'output_text', text: '', annotations: [] };
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
        emit('response.content_part.added', { ...at, content_index: 0, part });
        for (const delta of chunkText(text)) emit('response.output_text.delta', { ...at, content_index: 0, delta });
        emit('response.output_text.done', { ...at, content_index: 0, text });
        emit('response.content_part.done', { ...at, content_index: 0, part: { ...part, text } });
        break;
      }
      case 'function_call': {
        const args = String(item.arguments);
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const delta of splitEvenly(args)) emit('response.function_call_arguments.delta', { ...at, delta });
        emit('response.function_call_arguments.done', { ...at, arguments: args });
        break;
      }
      case 'custom_tool_call': {
        const input = String(item.input);
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', input: '' } });
        for (const delta of splitEvenly(input)) emit('response.custom_tool_call_input.delta', { ...at, delta });
        emit('response.custom_tool_call_input.done', { ...at, input });
        break;
      }
    }
    emit('response.output_item.done', { output_index: outputIndex, item });
  });
  emit('response.completed', { response: response('completed', items) });
  res.end();
}

export const openAiResponses: WireFormat = { api: 'openai-responses', toConversation, respond };
