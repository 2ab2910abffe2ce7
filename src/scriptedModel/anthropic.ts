/** Anthropic Messages (`POST …/v1/messages`, `…/count_tokens`): what claude-agent-acp (Claude Code) speaks. */
import type { ServerResponse } from 'node:http';
import type { Conversation, Decision, OfferedTool } from './decide';
import {
  argumentsJson,
  argumentsObject,
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

/** Tool results travel in user-role messages; a message carrying any is a result, not a prompt. */
function toEntry(message: unknown): Entry {
  if (!isRecord(message)) return { kind: 'system' };
  const content = message.content;
  const blocks = Array.isArray(content) ? content.filter(isRecord) : [];
  if (message.role === 'assistant') {
    return { kind: 'assistant', calls: blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.name)) };
  }
  if (message.role !== 'user') return { kind: 'system' };
  const results = blocks.filter((b) => b.type === 'tool_result');
  const last = results[results.length - 1];
  if (!last) return { kind: 'user', text: textOf(content) };
  return { kind: 'result', text: resultText(last.content ?? ''), isError: last.is_error === true };
}

function toTool(entry: unknown): OfferedTool | undefined {
  // Server tools (web_search_…, bash_…) have a `type` and no input_schema; the script cannot call them.
  if (!isRecord(entry) || typeof entry.name !== 'string' || !isRecord(entry.input_schema)) return undefined;
  return { name: entry.name, kind: 'function', schema: entry.input_schema };
}

function toConversation(body: Record<string, unknown>): Conversation {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const choice = isRecord(body.tool_choice) ? body.tool_choice : {};
  const declared = Array.isArray(body.tools) ? body.tools : [];
  const tools = choice.type === 'none' ? [] : declared.map(toTool).filter((t): t is OfferedTool => t !== undefined);
  const conv: Conversation = { ...summarizeTurn(messages.map(toEntry)), tools };
  if (choice.type === 'any') conv.forcedTool = '*';
  if (choice.type === 'tool' && typeof choice.name === 'string') conv.forcedTool = choice.name;
  return conv;
}

/** `POST …/messages/count_tokens`. */
export function countTokens(body: Record<string, unknown>): { input_tokens: number } {
  return { input_tokens: estimateTokens({ system: body.system, messages: body.messages, tools: body.tools }) };
}

function respond(res: ServerResponse, decision: Decision, ctx: ReplyContext): void {
  const id = newId('msg_');
  const output = outputTokens(decision);
  const stopReason = decision.type === 'tool' ? 'tool_use' : 'end_turn';
  const toolUseId = newId('toolu_');
  // Thinking blocks carry a signature the client sends back verbatim; any opaque string will do here.
  const signature = Buffer.from(id).toString('base64');

  if (!ctx.stream) {
    const content: Record<string, unknown>[] = [];
    if (decision.type === 'text') {
      if (decision.reasoning) content.push({ type: 'thinking', thinking: decision.reasoning, signature });
      content.push({ type: 'text', text: decision.text });
    } else {
      content.push({ type: 'tool_use', id: toolUseId, name: decision.tool.name, input: argumentsObject(decision) });
    }
    const usage = { input_tokens: ctx.inputTokens, output_tokens: output };
    const message = { id, type: 'message', role: 'assistant', model: ctx.model, content, stop_reason: stopReason, stop_sequence: null };
    sendJson(res, 200, { ...message, usage });
    return;
  }

  const emit = (type: string, data: Record<string, unknown>) => sendEvent(res, { type, ...data }, type);
  startSse(res);
  const usage = { input_tokens: ctx.inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id, type: 'message', role: 'assistant', model: ctx.model, content: [], stop_reason: null, stop_sequence: null, usage };
  emit('message_start', { message });
  emit('ping', {});
  let index = 0;
  const block = (start: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
    emit('content_block_start', { index, content_block: start });
    for (const delta of deltas) emit('content_block_delta', { index, delta });
    emit('content_block_stop', { index });
    index++;
  };
  if (decision.type === 'text') {
    if (decision.reasoning) {
      const thinking = chunkText(decision.reasoning).map((t) => ({ type: 'thinking_delta', thinking: t }));
      block({ type: 'thinking', thinking: '', signature: '' }, [...thinking, { type: 'signature_delta', signature }]);
    }
    block(
      { type: 'text', text: '' },
      chunkText(decision.text).map((t) => ({ type: 'text_delta', text: t })),
    );
  } else {
    const fragments = splitEvenly(argumentsJson(decision)).map((json) => ({ type: 'input_json_delta', partial_json: json }));
    block({ type: 'tool_use', id: toolUseId, name: decision.tool.name, input: {} }, fragments);
  }
  emit('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: output } });
  emit('message_stop', {});
  res.end();
}

export const anthropic: WireFormat = { api: 'anthropic', toConversation, respond };
