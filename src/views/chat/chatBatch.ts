import type { HostEvent } from '../../shared/chatProtocol';
import type { TimelineEntity } from '../../session/sessionModel';

/** How often streamed changes reach the page. */
export const FLUSH_MS = 40;

/**
 * What changed since the page last heard, posted in one batch every FLUSH_MS: whole entities (created or
 * replaced), the text streamed onto messages the page already has (deltas only, so a batch costs what was
 * streamed, not the message's length), the plan, the header.
 */
export class ChatBatch {
  private readonly entities = new Map<string, TimelineEntity>();
  private readonly appended = new Map<string, string>();
  /** Entities the page has not been sent (before its snapshot's window): their changes reach it when it asks for them. */
  private unsent = new Set<string>();
  private plan = false;
  private header = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly post: (event: HostEvent) => void,
    /** The current plan and header when they are posted. */
    private readonly current: { plan(): HostEvent; header(): HostEvent },
  ) {}

  entity(entity: TimelineEntity): void {
    if (this.unsent.has(`${entity.kind}:${entity.id}`)) return;
    this.entities.set(`${entity.kind}:${entity.id}`, entity);
    if (entity.kind === 'message') this.appended.delete(entity.id); // the whole entity supersedes
    this.schedule();
  }

  /** `text` streamed onto message `id`; `whole()` is the message now, used while the entity itself is pending. */
  append(id: string, text: string, whole: () => TimelineEntity | undefined): void {
    if (this.unsent.has(`message:${id}`)) return;
    const pending = this.entities.has(`message:${id}`) ? whole() : undefined;
    if (pending) this.entities.set(`message:${id}`, pending);
    else this.appended.set(id, (this.appended.get(id) ?? '') + text);
    this.schedule();
  }

  markPlan(): void {
    this.plan = true;
    this.schedule();
  }

  markHeader(): void {
    this.header = true;
    this.schedule();
  }

  /** A snapshot is going to the page: everything pending is in it but the `unsent` entities (keyed kind:id). */
  reset(unsent: string[] = []): void {
    this.unsent = new Set(unsent);
    this.entities.clear();
    this.appended.clear();
    this.plan = false;
    this.header = false;
  }

  /** The page asked for these entities: their changes go to it from now on. */
  sent(keys: string[]): void {
    for (const k of keys) this.unsent.delete(k);
  }

  /** The page got a snapshot of entities only (a new session): pending entity changes are in it. */
  clearEntities(): void {
    this.entities.clear();
    this.appended.clear();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.entities.size) {
        this.post({ type: 'entities', entities: [...this.entities.values()] });
        this.entities.clear();
      }
      if (this.appended.size) {
        this.post({ type: 'appends', appends: [...this.appended].map(([id, text]) => ({ id, text })) });
        this.appended.clear();
      }
      if (this.plan) {
        this.plan = false;
        this.post(this.current.plan());
      }
      if (this.header) {
        this.header = false;
        this.post(this.current.header());
      }
    }, FLUSH_MS);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
