/**
 * Gemini (`POST …/models/<m>:streamGenerateContent?alt=sse`, `:generateContent`, `:countTokens`): gemini-cli.
 * Its model router and other checks are non-streaming `generateContent` calls that want JSON in the text.
 */
import type { ServerResponse } from 'node:http';
import type { Conversation, Decision, OfferedTool } from './decide';
import { argumentsObject, chunkText, type Entry, estimateTokens, isRecord, outputTokens, type ReplyContext, sendEvent, sendJson, startSse, summarizeTurn, textOf, type WireFormat } from './wire';

/** Function responses travel in user-role contents; a content carrying any is a result, not a prompt. */
function toEntry(content: unknown): Entry {
  if (!isRecord(content)) return { kind: 'system' };
  const parts = Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];
  const responses = parts.map((p) => p.functionResponse).filter(isRecord);
  const last = responses[responses.length - 1];
  if (last) {
    const response = last.response;
    return { kind: 'result', text: JSON.stringify(response ?? {}), isError: isRecord(response) && response.error !== undefined };
  }
  if (content.role === 'model') {
    const calls = parts.map((p) => p.functionCall).filter(isRecord);
    return { kind: 'assistant', calls: calls.map((c) => String(c.name)) };
  }
  return { kind: 'user', text: textOf(parts.filter((p) => p.thought !== true)) };
}

function toTools(entry: unknown): OfferedTool[] {
  const declarations = isRecord(entry) ? entry.functionDeclarations : undefined;
  if (!Array.isArray(declarations)) return []; // googleSearch, codeExecution: nothing the script can call
  return declarations.filter(isRecord).flatMap((d): OfferedTool[] => {
    if (typeof d.name !== 'string') return [];
    const schema = d.parametersJsonSchema ?? d.parameters;
    return [{ name: d.name, kind: 'function', ...(isRecord(schema) ? { schema } : {}) }];
  });
}

function toConversation(body: Record<string, unknown>): Conversation {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const toolConfig = isRecord(body.toolConfig) ? body.toolConfig : {};
  const calling = isRecord(toolConfig.functionCallingConfig) ? toolConfig.functionCallingConfig : {};
  const declared = Array.isArray(body.tools) ? body.tools : [];
  const tools = calling.mode === 'NONE' ? [] : declared.flatMap(toTools);
  const conv: Conversation = { ...summarizeTurn(contents.map(toEntry)), tools };
  if (calling.mode === 'ANY') {
    const allowed = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
    conv.forcedTool = allowed.length === 1 && typeof allowed[0] === 'string' ? allowed[0] : '*';
  }
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  if (config.responseMimeType === 'application/json') {
    const schema = config.responseJsonSchema ?? config.responseSchema;
    conv.jsonAnswer = isRecord(schema) ? schema : true;
  }
  return conv;
}

/** `POST …/models/<m>:countTokens`. */
export function countTokens(body: Record<string, unknown>): { totalTokens: number } {
  return { totalTokens: estimateTokens(body.contents ?? body.generateContentRequest ?? body) };
}

function respond(res: ServerResponse, decision: Decision, ctx: ReplyContext): void {
  const output = outputTokens(decision);
  const usageMetadata = {
    promptTokenCount: ctx.inputTokens,
    candidatesTokenCount: output,
    totalTokenCount: ctx.inputTokens + output,
  };
  // Whole parts for a plain answer; streamed, answer text is split over several chunks. Function calls cannot be.
  const parts: Record<string, unknown>[] = [];
  if (decision.type === 'text') {
    if (decision.reasoning) parts.push({ text: decision.reasoning, thought: true });
    parts.push({ text: decision.text });
  } else {
    parts.push({ functionCall: { name: decision.tool.name, args: argumentsObject(decision) } });
  }
  const candidate = (parts: Record<string, unknown>[], last: boolean) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    ...(last ? { usageMetadata } : {}),
    modelVersion: ctx.model,
  });

  if (!ctx.stream) {
    sendJson(res, 200, candidate(parts, true));
    return;
  }
  // Thoughts stay whole: gemini-cli renders each thought part as its own "**subject** description" entry.
  const chunks = parts.flatMap((part) => (typeof part.text === 'string' && part.thought !== true ? chunkText(part.text).map((text) => [{ ...part, text }]) : [[part]]));
  startSse(res);
  // gemini-cli rejects a stream whose finish reason arrives on an empty chunk, so the last content chunk carries it.
  for (const [i, chunk] of chunks.entries()) sendEvent(res, candidate(chunk, i === chunks.length - 1));
  res.end();
}

export const gemini: WireFormat = { api: 'gemini', toConversation, respond };
