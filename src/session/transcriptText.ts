import { oneLine } from '../core/visibleText';
import type { SessionEvent } from '../session/sessionModel';

/**
 * Renders session events as readable text, streaming message deltas as they grow. Messages and details keep
 * their lines; titles, ids and plan entries are one line each (oneLine), so no agent string forges a line of ours.
 */
export class TextRenderer {
  private printed = new Map<string, number>();
  /** What was last printed for each tool call / permission, so repeated updates print once. */
  private shown = new Map<string, string>();
  private current: string | undefined;

  constructor(private readonly write: (s: string) => void) {}

  render(event: SessionEvent | { type: string; [k: string]: unknown }): void {
    const e = event as SessionEvent;
    switch (e.type) {
      case 'entity': {
        const entity = e.entity;
        if (entity.kind === 'message') {
          if (entity.role === 'user') return;
          const done = this.printed.get(entity.id) ?? 0;
          if (this.current !== entity.id) {
            this.write(entity.role === 'thought' ? '\n[thinking] ' : '\n');
            this.current = entity.id;
          }
          this.write(entity.text.slice(done));
          this.printed.set(entity.id, entity.text.length);
          return;
        }
        this.current = undefined;
        if (entity.kind === 'tool_call') {
          this.once(`tool:${entity.id}`, `\n[tool ${oneLine(entity.status)}] ${oneLine(entity.title || entity.id)} (${oneLine(entity.toolKind)})`);
        } else if (entity.kind === 'permission') {
          this.once(`perm:${entity.id}`, `\n[permission ${entity.state}] ${oneLine(entity.title)}${entity.answer ? ` → ${oneLine(entity.answer)}` : ''}`);
        } else if (entity.kind === 'notice') {
          this.write(`\n[${entity.severity}] ${oneLine(entity.title)}${entity.detail ? `: ${entity.detail}` : ''}`);
        }
        return;
      }
      case 'append': {
        // A streamed chunk: printed as it comes, whatever the message's length so far.
        if (e.role === 'user') return;
        if (this.current !== e.id) {
          this.write(e.role === 'thought' ? '\n[thinking] ' : '\n');
          this.current = e.id;
        }
        this.write(e.text);
        this.printed.set(e.id, (this.printed.get(e.id) ?? 0) + e.text.length);
        return;
      }
      case 'plan':
        this.current = undefined;
        this.write(`\n[plan]\n${e.entries.map((p) => `  [${p.status === 'completed' ? 'x' : ' '}] ${oneLine(p.content)}`).join('\n')}`);
        return;
      case 'turn':
        if (e.state === 'idle') this.write(`\n[turn ended: ${oneLine(e.stopReason ?? e.error ?? 'unknown')}]\n`);
        return;
      default:
        return;
    }
  }

  private once(key: string, line: string): void {
    if (this.shown.get(key) === line) return;
    this.shown.set(key, line);
    this.write(line);
  }
}
