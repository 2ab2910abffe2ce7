/** Helpers every wire format shares: SSE framing, JSON replies, ids, chunking, token estimates, text extraction. */
import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Conversation, Decision } from './decide';
import { isRecord } from './schemaValues';

export { isRecord };

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** One SSE event; `event` adds the `event:` line that Anthropic and the Responses API send. */
export function sendEvent(res: ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
}

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

/** Splits text into up to `parts` pieces at word boundaries (at least two when possible), so clients see a stream. */
export function chunkText(text: string, parts = 3): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  if (words.length < 2) return splitEvenly(text, 2);
  const size = Math.ceil(words.length / parts);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}

/** Splits a string (tool arguments, patch text) into `parts` nearly equal fragments, never empty ones. */
export function splitEvenly(text: string, parts = 3): string[] {
  if (text.length < 2) return [text];
  const n = Math.min(parts, text.length);
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A rough token count (4 characters a token) — clients only need plausible, non-zero figures. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Text inside a message's content however it is shaped: a string, or parts carrying `text` (nested too). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map(textOf)
      .filter((t) => t !== '')
      .join('\n');
  if (isRecord(content)) {
    if (typeof content.text === 'string') return content.text;
    if (content.content !== undefined) return textOf(content.content);
  }
  return '';
}

/** A tool result as text: its text parts when it has them, else its JSON. */
export function resultText(output: unknown): string {
  const text = textOf(output);
  if (text !== '' || typeof output === 'string') return text;
  return JSON.stringify(output) ?? '';
}

export function modelName(body: Record<string, unknown>, fallback = 'scripted-model'): string {
  return typeof body.model === 'string' ? body.model : fallback;
}

/** A message reduced to what the decision needs. `system` entries (system/developer prompts) are transparent. */
export type Entry = { kind: 'user'; text: string } | { kind: 'result'; text: string; isError?: boolean } | { kind: 'assistant'; calls?: string[] } | { kind: 'system' };

export interface TurnSummary {
  lastUserText: string;
  hasToolResultAfterLastUser: boolean;
  lastToolResultText: string;
  lastToolResultIsError?: boolean;
  toolCallsAfterLastUser: string[];
}

/**
 * The last user turn and the tool results after it. The turn is the trailing run of user messages, because
 * agents split one prompt into several (codex sends its environment context and the prompt separately).
 */
export function summarizeTurn(entries: Entry[]): TurnSummary {
  let last = entries.length - 1;
  while (last >= 0 && entries[last]?.kind !== 'user') last--;
  const texts: string[] = [];
  for (let i = last; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.kind === 'user') texts.unshift(entry.text);
    else if (entry?.kind !== 'system') break;
  }
  const after = entries.slice(last + 1);
  const results = after.filter((e): e is Extract<Entry, { kind: 'result' }> => e.kind === 'result');
  const lastResult = results[results.length - 1];
  return {
    lastUserText: texts.join('\n'),
    hasToolResultAfterLastUser: results.length > 0,
    lastToolResultText: lastResult?.text ?? '',
    toolCallsAfterLastUser: after.flatMap((e) => (e.kind === 'assistant' ? (e.calls ?? []) : [])),
    ...(lastResult?.isError !== undefined ? { lastToolResultIsError: lastResult.isError } : {}),
  };
}

export type Api = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

/** What a reply needs besides the decision. */
export interface ReplyContext {
  body: Record<string, unknown>;
  stream: boolean;
  model: string;
  inputTokens: number;
}

/** One wire format: how to read a request into the normalized conversation, and how to write the decision. */
export interface WireFormat {
  api: Api;
  toConversation(body: Record<string, unknown>): Conversation;
  respond(res: ServerResponse, decision: Decision, ctx: ReplyContext): void;
}

/** Tool-call arguments as a JSON string; a raw (freeform) input only reaches JSON-only formats by mistake. */
export function argumentsJson(decision: Extract<Decision, { type: 'tool' }>): string {
  const input = decision.input;
  return JSON.stringify(input.kind === 'json' ? input.args : { input: input.input });
}

export function argumentsObject(decision: Extract<Decision, { type: 'tool' }>): Record<string, unknown> {
  const input = decision.input;
  return input.kind === 'json' ? input.args : { input: input.input };
}

export function outputTokens(decision: Decision): number {
  if (decision.type === 'text') return estimateTokens(decision.text + (decision.reasoning ?? ''));
  return estimateTokens(argumentsJson(decision));
}
