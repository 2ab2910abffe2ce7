import type { Message } from 'vscode-jsonrpc/node';
import type { Coalescer } from '../core/ndjson';

const CHUNKS = new Set(['agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk']);

function only(o: object, keys: string[]): boolean {
  for (const k of Object.keys(o)) if (!keys.includes(k)) return false;
  return true;
}

/**
 * Adjacent `session/update` text chunks of one message (same session, kind and messageId, plain text,
 * nothing else on them — no `_meta`, no annotations) mean the same as one chunk with their texts joined.
 */
export const acpChunkCoalescer: Coalescer = {
  key(message: Message): string | undefined {
    const m = message as { method?: unknown; id?: unknown; params?: { sessionId?: unknown; update?: Record<string, unknown> } };
    if (m.method !== 'session/update' || m.id !== undefined || !m.params || !only(m.params, ['sessionId', 'update'])) return undefined;
    const u = m.params.update;
    if (!u || typeof u.sessionUpdate !== 'string' || !CHUNKS.has(u.sessionUpdate) || !only(u, ['sessionUpdate', 'content', 'messageId'])) return undefined;
    const c = u.content as { type?: unknown; text?: unknown } | undefined;
    if (c?.type !== 'text' || typeof c.text !== 'string' || !only(c, ['type', 'text'])) return undefined;
    if (u.messageId !== undefined && typeof u.messageId !== 'string') return undefined;
    return `${String(m.params.sessionId)}\u0000${u.sessionUpdate}\u0000${(u.messageId as string | undefined) ?? ''}`;
  },
  merge(into: Message, next: Message): void {
    const a = (into as unknown as { params: { update: { content: { text: string } } } }).params.update.content;
    a.text += (next as unknown as { params: { update: { content: { text: string } } } }).params.update.content.text;
  },
};
