/**
 * One turn of a hosted session told as VS Code's Chat view tells a response (docs/chat-view.md): the agent's text
 * as streamed markdown, its thoughts and tool calls as progress lines, the files a finished tool call names as
 * anchors, a waiting permission as a progress line (the question itself is our modal), warnings and errors as
 * quoted markdown; the plan and the usage are kept for the response's end. Only what the turn adds is told: what
 * the timeline had when the turn began is not repeated. No vscode: the participant turns these parts into the
 * response stream's calls.
 */
import type { PlanEntry, SessionEvent, SessionModel, TimelineEntity, Usage } from '../../session/sessionModel';

export type FeedPart = { kind: 'markdown'; text: string } | { kind: 'progress'; text: string } | { kind: 'anchor'; path: string; line?: number; title: string };

/** The words the feed says itself, in the person's language (the participant passes vscode.l10n's). */
export interface FeedWords {
  thinking: string;
  waiting(title: string): string;
  failed(title: string): string;
}

/** How many locations of one tool call become anchors. */
const MAX_ANCHORS = 3;

export class TurnFeed {
  /** Characters of each agent message already told. */
  private readonly told = new Map<string, number>();
  /** The entities the timeline had before the turn. */
  private readonly before: Set<string>;
  private readonly toolsTold = new Map<string, string>();
  private readonly noticed = new Set<string>();
  private lastMessage: string | undefined;
  private wroteText = false;
  private readonly off: () => void;
  plan: PlanEntry[] | undefined;
  usage: Usage | undefined;

  constructor(
    private readonly model: SessionModel,
    private readonly out: (part: FeedPart) => void,
    private readonly words: FeedWords,
  ) {
    this.before = new Set(model.timeline().map(key));
    this.off = model.on((e) => this.event(e));
  }

  dispose(): void {
    this.off();
  }

  private event(e: SessionEvent): void {
    switch (e.type) {
      case 'append':
        if (e.role === 'agent') this.agentText(e.id);
        return;
      case 'entity':
        if (this.before.has(key(e.entity))) return;
        this.entity(e.entity, e.created);
        return;
      case 'plan':
        this.plan = e.entries;
        return;
      case 'usage':
        this.usage = e.usage;
        return;
      default:
        return;
    }
  }

  private entity(entity: TimelineEntity, created: boolean): void {
    switch (entity.kind) {
      case 'message':
        if (entity.role === 'agent') this.agentText(entity.id);
        else if (entity.role === 'thought' && created) this.out({ kind: 'progress', text: this.words.thinking });
        return;
      case 'tool_call': {
        const was = this.toolsTold.get(entity.id);
        if (was === entity.status) return;
        this.toolsTold.set(entity.id, entity.status);
        if (was === undefined) this.out({ kind: 'progress', text: entity.title || entity.toolKind });
        if (entity.status === 'completed') {
          for (const loc of entity.locations.slice(0, MAX_ANCHORS)) {
            this.out({ kind: 'anchor', path: loc.path, ...(typeof loc.line === 'number' ? { line: loc.line } : {}), title: entity.title || loc.path });
          }
        } else if (entity.status === 'failed') {
          this.separate();
          this.out({ kind: 'markdown', text: `> ${this.words.failed(oneLine(entity.title || entity.toolKind))}\n\n` });
        }
        return;
      }
      case 'permission':
        if (created && entity.state === 'pending') this.out({ kind: 'progress', text: this.words.waiting(entity.title) });
        return;
      case 'notice':
        if (this.noticed.has(entity.id) || entity.severity === 'info' || entity.code === 'stopped' || entity.code === 'changes') return;
        this.noticed.add(entity.id);
        this.separate();
        this.out({ kind: 'markdown', text: `> **${oneLine(entity.title)}**${entity.detail ? ` ${oneLine(entity.detail)}` : ''}\n\n` });
        return;
    }
  }

  /** Tells what message `id` has that was not told yet. */
  private agentText(id: string): void {
    const message = this.model.get('message', id);
    if (message?.kind !== 'message' || this.before.has(key(message))) return;
    const told = this.told.get(id) ?? 0;
    const text = message.text;
    if (text.length <= told) return;
    if (this.lastMessage !== id) {
      this.separate();
      this.lastMessage = id;
    }
    this.out({ kind: 'markdown', text: text.slice(told) });
    this.told.set(id, text.length);
    this.wroteText = true;
  }

  /** A new block after text already told starts on a paragraph of its own. */
  private separate(): void {
    if (this.wroteText) this.out({ kind: 'markdown', text: '\n\n' });
    this.wroteText = false;
    this.lastMessage = undefined;
  }
}

/** The plan as a markdown checklist. */
export function planMarkdown(plan: readonly PlanEntry[]): string {
  return plan.map((p) => `- [${p.status === 'completed' ? 'x' : ' '}] ${oneLine(p.content)}${p.status === 'in_progress' ? ' …' : ''}`).join('\n');
}

const key = (e: TimelineEntity) => `${e.kind}:${e.id}`;
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
