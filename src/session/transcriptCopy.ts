/**
 * What of a transcript is kept across window reloads (workspace state): text and small metadata only — no
 * raw tool input or output, no images, no diff bodies — newest first within an entry count and a byte cap.
 * Pure (no vscode), unit-tested.
 */
import { english, phrase } from './notices';
import type { TimelineEntity, ToolCallEntity } from './sessionModel';

const NOT_FINISHED = phrase('notFinished');

export const HISTORY_LIMITS = { entries: 400, bytes: 512 * 1024, textChars: 16 * 1024 };

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters not kept)`;
}

/** A copy's tool call can never finish (its agent is gone when the copy is shown): one left unfinished is failed, saying so. */
function unfinishedEnded(e: ToolCallEntity): Pick<ToolCallEntity, 'status' | 'interrupted' | 'interruptedPhrase'> {
  if (e.status === 'pending' || e.status === 'in_progress') return { status: 'failed', interrupted: english(NOT_FINISHED), interruptedPhrase: NOT_FINISHED };
  if (!e.interrupted) return { status: e.status };
  // A clipped reason stays in English: its phrase would keep the whole text.
  const kept = e.interruptedPhrase && e.interrupted.length <= 500 ? { interruptedPhrase: e.interruptedPhrase } : {};
  return { status: e.status, interrupted: clip(e.interrupted, 500), ...kept };
}

/** One entity as kept: big and binary fields dropped, long text clipped, pending permissions cancelled, unfinished tool calls failed. */
export function slimEntity(e: TimelineEntity, max = HISTORY_LIMITS.textChars): TimelineEntity {
  switch (e.kind) {
    case 'message': {
      const text = clip(e.text, max);
      // A user message keeps its checkpoint: its files can go back from a later window too.
      return { kind: 'message', id: e.id, role: e.role, text, parts: [{ type: 'text', text }], ...(e.checkpoint ? { checkpoint: e.checkpoint } : {}) };
    }
    case 'tool_call':
      return {
        kind: 'tool_call',
        id: e.id,
        title: clip(e.title, 500),
        toolKind: e.toolKind,
        ...unfinishedEnded(e),
        content: [],
        locations: e.locations.slice(0, 20),
        ...(e.permission ? { permission: e.permission } : {}),
      };
    case 'permission':
      return e.state === 'pending' ? { ...e, state: 'cancelled' } : e;
    case 'notice': {
      if (!e.detail || e.detail.length <= 2000) return { ...e };
      // A clipped detail stays in English: its phrase would keep the whole text.
      const phrases = e.phrases?.title ? { phrases: { title: e.phrases.title } } : {};
      const { phrases: _dropped, ...rest } = e;
      return { ...rest, ...phrases, detail: clip(e.detail, 2000) };
    }
  }
}

/** The earlier windows' entities plus the live session's, slimmed, the newest kept within the limits. */
export function boundedHistory(previous: TimelineEntity[], live: TimelineEntity[], limits = HISTORY_LIMITS): TimelineEntity[] {
  const liveKeys = new Set(live.map((l) => `${l.kind}:${l.id}`));
  const all = [...previous.filter((e) => !liveKeys.has(`${e.kind}:${e.id}`)), ...live];
  const kept: TimelineEntity[] = [];
  let bytes = 0;
  for (let i = all.length - 1; i >= 0 && kept.length < limits.entries; i--) {
    const slim = slimEntity(all[i]!, limits.textChars);
    bytes += Buffer.byteLength(JSON.stringify(slim));
    if (bytes > limits.bytes) break;
    kept.push(slim);
  }
  return kept.reverse();
}
