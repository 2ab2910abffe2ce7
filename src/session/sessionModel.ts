/**
 * One session's state, fed by any protocol adapter (ACP or pi RPC) and read by every view.
 * Entities are upserted by id and every change is emitted as an event, in arrival order.
 * Deliberately free of protocol types beyond plain JSON shapes.
 */

import { ownCopy } from '../core/ownCopy';
import { english, type Phrase, phrase } from './notices';
import { outputTextOf, type SandboxBlock, withBlocks, writeBlocksIn } from './sandboxBlocks';

/** How much of a tool call's latest output is kept to read blocks from. */
const OUTPUT_TAIL = 8 * 1024;

export type * from './timelineTypes';
import type {
  Role,
  ContentPart,
  MessageEntity,
  ToolCallEntity,
  PlanEntry,
  PermissionEntity,
  NoticeEntity,
  TimelineEntity,
  TurnState,
  ModeState,
  ModelState,
  Usage,
  SessionInfo,
  SessionEvent,
} from './timelineTypes';

type Listener = (event: SessionEvent) => void;

/** Where a message longer than `limit` characters keeps its whole text (src/session/longText.ts: files in the session store). */
export interface LongTextStore {
  limit: number;
  file(sessionId: string, messageId: string): string;
  /** Writes or extends the file; the error's message when it could not. */
  write(file: string, text: string, append: boolean): string | undefined;
}

/** The notice under a message that passed the limit (or whose file could not be written). */
function longTextNotice(limit: number, file: string, error: string | undefined): Phrase {
  const chars = limit.toLocaleString('en');
  return error ? phrase('longNotWritten', chars, file, error) : phrase('longKept', chars, file);
}

/** Title and detail, each as given or, for a phrase, in English with the phrase kept beside it. */
function setNoticeText(entity: NoticeEntity, title: string | Phrase, detail: string | Phrase | undefined): void {
  const phrases: NonNullable<NoticeEntity['phrases']> = {};
  if (typeof title === 'string') entity.title = title;
  else [entity.title, phrases.title] = [english(title), title];
  if (typeof detail === 'string') {
    if (detail) entity.detail = detail;
  } else if (detail) [entity.detail, phrases.detail] = [english(detail), detail];
  if (phrases.title || phrases.detail) entity.phrases = phrases;
}

export class SessionModel {
  private readonly entities = new Map<string, TimelineEntity>();
  private readonly order: string[] = [];
  private readonly listeners = new Set<Listener>();
  /** Keys of permission entities still pending. */
  private readonly pendingPermissions = new Set<string>();

  /** Whether a permission request waits for an answer. */
  get awaitingPermission(): boolean {
    return this.pendingPermissions.size > 0;
  }
  /** The message that id-less chunks of each role append to; cleared when another entity intervenes. */
  private openMessage: { role: Role; key: string } | undefined;
  private anonymousCount = 0;
  /** The checkpoint the next user message carries (taken before its prompt went out). */
  nextCheckpoint: Record<string, string> | undefined;
  /** Tool calls still pending or running when the person asked to stop the turn. */
  private readonly runningAtCancel = new Set<string>();

  plan: PlanEntry[] = [];
  commands: { name: string; description: string; input?: unknown }[] = [];
  modes: ModeState | undefined;
  models: ModelState | undefined;
  configOptions: unknown[] = [];
  usage: Usage | undefined;
  info: SessionInfo = {};
  turn: TurnState = 'idle';
  lastStopReason: string | undefined;
  /**
   * Protocol-specific state a view may show as is (pi RPC: thinking level, queue modes, queued messages,
   * session stats, extension status/widgets). Plain JSON; merged key by key.
   */
  agentState: Record<string, unknown> = {};
  /** The agent runs in the sandbox: tool output is read for what it blocked (src/session/sandboxBlocks.ts). */
  sandboxed = false;
  private readonly sandboxNoticed = new Set<string>();
  /** The end of each tool call's output so far, read for what the sandbox blocked (bounded; only in the sandbox). */
  private readonly outputTails = new Map<string, string>();

  /** Where a message past the limit keeps its whole text; unset, messages are not bounded (the sessions set it when they start). */
  longText: LongTextStore | undefined;

  constructor(private id: string) {}

  get sessionId(): string {
    return this.id;
  }

  /** The agent goes on with this conversation under another id (a fork at a message replaced its session). */
  rekey(sessionId: string): void {
    this.id = sessionId;
  }

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The timeline in arrival order. */
  timeline(): TimelineEntity[] {
    return this.order.map((k) => this.entities.get(k)!);
  }

  get(kind: TimelineEntity['kind'], id: string): TimelineEntity | undefined {
    return this.entities.get(`${kind}:${id}`);
  }

  toolCall(id: string): ToolCallEntity | undefined {
    return this.get('tool_call', id) as ToolCallEntity | undefined;
  }

  messages(role?: Role): MessageEntity[] {
    return this.timeline().filter((e): e is MessageEntity => e.kind === 'message' && (!role || e.role === role));
  }

  /** Appends a chunk; chunks with the same messageId (or id-less contiguous chunks of a role) form one message. */
  appendChunk(role: Role, part: ContentPart, messageId?: string | null): MessageEntity {
    let key: string;
    if (messageId) {
      key = `message:${role}:${messageId}`;
    } else if (this.openMessage?.role === role) {
      key = this.openMessage.key;
    } else {
      key = `message:${role}:~${++this.anonymousCount}`;
    }
    let entity = this.entities.get(key) as MessageEntity | undefined;
    const created = !entity;
    if (!entity) {
      entity = { kind: 'message', id: key.slice('message:'.length), role, parts: [], text: '' };
      this.insert(key, entity);
    }
    const last = entity.parts[entity.parts.length - 1];
    if (part.type === 'text' && entity.long) {
      this.extendLong(entity, part.text ?? '');
    } else {
      if (part.type === 'text') entity.text += part.text ?? '';
      // A message of one text part keeps one string, not a second copy in its part.
      if (part.type === 'text' && last?.type === 'text') last.text = entity.parts.length === 1 ? entity.text : (last.text ?? '') + (part.text ?? '');
      else entity.parts.push({ ...part });
      if (this.longText && entity.text.length > this.longText.limit) this.makeLong(entity, this.longText);
    }
    this.openMessage = { role, key };
    if (!created && part.type === 'text') this.emit({ type: 'append', id: entity.id, role, text: part.text ?? '' });
    else this.emit({ type: 'entity', entity, created });
    return entity;
  }

  /** Replaces a message's whole content (an agent that resends the final message); creates it when missing. */
  replaceMessage(role: Role, messageId: string, parts: ContentPart[]): MessageEntity {
    const key = `message:${role}:${messageId}`;
    let entity = this.entities.get(key) as MessageEntity | undefined;
    const created = !entity;
    if (!entity) {
      entity = { kind: 'message', id: key.slice('message:'.length), role, parts: [], text: '' };
      this.insert(key, entity);
    }
    entity.parts = parts.map((p) => ({ ...p }));
    entity.text = parts
      .filter((p) => p.type === 'text')
      .map((p) => p.text ?? '')
      .join('');
    delete entity.long;
    if (this.longText && entity.text.length > this.longText.limit) this.makeLong(entity, this.longText);
    this.emit({ type: 'entity', entity, created });
    return entity;
  }

  /** Creates or merges a tool call; only the fields present in `patch` change. */
  upsertToolCall(patch: Partial<Omit<ToolCallEntity, 'kind' | 'id'>> & { id: string }): ToolCallEntity {
    const key = `tool_call:${patch.id}`;
    let entity = this.entities.get(key) as ToolCallEntity | undefined;
    const created = !entity;
    if (!entity) {
      entity = { kind: 'tool_call', id: patch.id, title: '', toolKind: 'other', status: 'pending', content: [], locations: [] };
      this.insert(key, entity);
    }
    for (const [k, v] of Object.entries(patch)) {
      // A call the Stop cut stays cancelled: a late update (opencode says `completed`) does not undo it.
      if (v !== undefined && k !== 'id' && !(k === 'status' && entity.status === 'cancelled')) (entity as unknown as Record<string, unknown>)[k] = v;
    }
    // In the sandbox, a write its output says the read-only filesystem refused is named on the card. Read from the
    // end of what the call printed so far: a line can come split over two updates.
    if (this.sandboxed) {
      const text = outputTextOf(patch);
      if (text) {
        const tail = `${this.outputTails.get(patch.id) ?? ''}${text}`.slice(-OUTPUT_TAIL);
        this.outputTails.set(patch.id, tail);
        const blocks = writeBlocksIn(tail);
        if (blocks.length) entity.sandboxBlocked = withBlocks(entity.sandboxBlocked, blocks);
      }
      if (entity.status !== 'pending' && entity.status !== 'in_progress') this.outputTails.delete(patch.id);
    }
    this.openMessage = undefined;
    this.emit({ type: 'entity', entity, created });
    return entity;
  }

  /**
   * The sandbox blocked something (a connection its proxy refused): named on the tool calls running now, or — when
   * none runs (the agent's own connection) — in a notice, once per target.
   */
  sandboxBlocked(block: SandboxBlock): void {
    let onCard = false;
    for (const e of this.entities.values()) {
      if (e.kind !== 'tool_call' || (e.status !== 'pending' && e.status !== 'in_progress')) continue;
      onCard = true;
      if (e.sandboxBlocked?.some((b) => b.kind === block.kind && b.target === block.target)) continue;
      e.sandboxBlocked = withBlocks(e.sandboxBlocked, [block]);
      this.emit({ type: 'entity', entity: e, created: false });
    }
    if (onCard || this.sandboxNoticed.has(`${block.kind}:${block.target}`)) return;
    this.sandboxNoticed.add(`${block.kind}:${block.target}`);
    const n = this.notice('warning', phrase(block.kind === 'network' ? 'sandboxNetworkBlocked' : 'sandboxWriteBlocked', block.target), undefined, 'sandbox');
    n.sandbox = block;
    this.emit({ type: 'entity', entity: n, created: false });
  }

  upsertPermission(p: Omit<PermissionEntity, 'kind'>): PermissionEntity {
    const key = `permission:${p.id}`;
    const existing = this.entities.get(key) as PermissionEntity | undefined;
    const entity: PermissionEntity = { ...existing, ...p, kind: 'permission' };
    if (existing) this.entities.set(key, entity);
    else this.insert(key, entity);
    if (entity.state === 'pending') this.pendingPermissions.add(key);
    else this.pendingPermissions.delete(key);
    this.openMessage = undefined;
    this.emit({ type: 'entity', entity, created: !existing });
    this.refreshTurnForPermissions();
    return entity;
  }

  /**
   * The agent went away (its process exited, or the session was let go): a tool call it left pending or running
   * can never finish, so it ends failed with `why` instead of spinning on.
   */
  failUnfinishedToolCalls(why: Phrase): void {
    for (const entity of this.entities.values()) {
      if (entity.kind !== 'tool_call' || (entity.status !== 'pending' && entity.status !== 'in_progress')) continue;
      entity.status = 'failed';
      entity.interrupted = english(why);
      entity.interruptedPhrase = why;
      this.emit({ type: 'entity', entity, created: false });
    }
  }

  /** A notice; a title or detail given as a phrase is stored in English with the phrase beside it. */
  notice(severity: NoticeEntity['severity'], title: string | Phrase, detail?: string | Phrase, code?: NoticeEntity['code']): NoticeEntity {
    const id = `${this.order.length}`;
    const entity: NoticeEntity = { kind: 'notice', id, severity, title: '', ...(code ? { code } : {}) };
    setNoticeText(entity, title, detail);
    this.insert(`notice:${id}`, entity);
    this.openMessage = undefined;
    this.emit({ type: 'entity', entity, created: true });
    return entity;
  }

  /** The turn's summary: how many files it changed, lines added and removed (views offer Review and Undo all). */
  changesSummary(changes: NonNullable<NoticeEntity['changes']>): NoticeEntity {
    const id = `${this.order.length}`;
    const entity: NoticeEntity = { kind: 'notice', id, severity: 'info', title: '', code: 'changes', changes: { ...changes } };
    setNoticeText(entity, changes.files === 1 ? phrase('oneFileChanged') : phrase('filesChanged', String(changes.files)), phrase('linesChanged', String(changes.added), String(changes.removed)));
    this.insert(`notice:${id}`, entity);
    this.openMessage = undefined;
    this.emit({ type: 'entity', entity, created: true });
    return entity;
  }

  setPlan(entries: PlanEntry[]): void {
    this.plan = entries.map((e) => ({ ...e }));
    this.emit({ type: 'plan', entries: this.plan });
  }

  setCommands(commands: SessionModel['commands']): void {
    this.commands = commands;
    this.emit({ type: 'commands', commands });
  }

  setModes(modes: ModeState): void {
    this.modes = modes;
    this.emit({ type: 'modes', modes });
  }

  setCurrentMode(modeId: string): void {
    this.setModes({ currentModeId: modeId, availableModes: this.modes?.availableModes ?? [] });
  }

  setModels(models: ModelState): void {
    this.models = models;
    this.emit({ type: 'models', models });
  }

  setConfigOptions(options: unknown[]): void {
    this.configOptions = options;
    this.emit({ type: 'config', options });
  }

  setUsage(usage: Usage): void {
    this.usage = { ...this.usage, ...usage };
    this.emit({ type: 'usage', usage: this.usage });
  }

  setInfo(info: SessionInfo): void {
    this.info = { ...this.info, ...info };
    this.emit({ type: 'info', info: this.info });
  }

  setAgentState(patch: Record<string, unknown>): void {
    this.agentState = { ...this.agentState, ...patch };
    this.emit({ type: 'agent_state', state: this.agentState });
  }

  beginTurn(): void {
    this.openMessage = undefined;
    this.setTurn('running');
  }

  requestCancel(): void {
    if (this.turn === 'idle') return;
    for (const e of this.entities.values()) if (e.kind === 'tool_call' && (e.status === 'pending' || e.status === 'in_progress')) this.runningAtCancel.add(e.id);
    this.setTurn('cancelling');
  }

  endTurn(stopReason: string | undefined, error?: string): void {
    this.lastStopReason = stopReason;
    this.openMessage = undefined;
    if (stopReason === 'cancelled') this.endStopped();
    this.runningAtCancel.clear();
    // Permission requests the turn left behind can no longer be answered.
    for (const key of [...this.pendingPermissions]) {
      const e = this.entities.get(key);
      if (e?.kind === 'permission' && e.state === 'pending') {
        e.state = 'cancelled';
        this.emit({ type: 'entity', entity: e, created: false });
      }
    }
    this.pendingPermissions.clear();
    this.turn = 'idle';
    this.emit({ type: 'turn', state: 'idle', ...(stopReason ? { stopReason } : {}), ...(error ? { error } : {}) });
  }

  /**
   * The turn ended stopped: the calls it cut end `cancelled` — also those the agent called done after the Stop
   * (opencode reports an aborted command `completed`) — and the transcript says it stopped.
   */
  private endStopped(): void {
    for (const e of this.entities.values()) {
      if (e.kind !== 'tool_call' || e.status === 'cancelled') continue;
      if (!this.runningAtCancel.has(e.id) && e.status !== 'pending' && e.status !== 'in_progress') continue;
      e.status = 'cancelled';
      this.emit({ type: 'entity', entity: e, created: false });
    }
    this.notice('info', phrase('stopped'), undefined, 'stopped');
  }

  private refreshTurnForPermissions(): void {
    if (this.turn === 'idle' || this.turn === 'cancelling') return;
    // Kept as a set as permissions change: scanning every entity per request made many requests quadratic.
    this.setTurn(this.pendingPermissions.size > 0 ? 'awaiting_permission' : 'running');
  }

  private setTurn(state: TurnState): void {
    if (this.turn === state) return;
    this.turn = state;
    this.emit({ type: 'turn', state });
  }

  /** The message passed the limit: its whole text goes to a file, its head (a string of its own) stays, a notice under it says where. */
  private makeLong(entity: MessageEntity, store: LongTextStore): void {
    const file = store.file(this.sessionId, entity.id);
    const error = store.write(file, entity.text, false);
    entity.long = { file, chars: entity.text.length, ...(error ? { error } : {}) };
    entity.text = ownCopy(entity.text.slice(0, store.limit));
    entity.parts = [...entity.parts.filter((p) => p.type !== 'text'), { type: 'text', text: entity.text }];
    const id = `${this.order.length}`;
    const notice: NoticeEntity = { kind: 'notice', id, severity: error ? 'warning' : 'info', title: '', code: 'long', ...(error ? {} : { file }) };
    setNoticeText(notice, phrase('longMessage'), longTextNotice(store.limit, file, error));
    // Inserted without closing the open message: the chunks still streaming belong to it.
    this.insert(`notice:${id}`, notice);
    this.emit({ type: 'entity', entity: notice, created: true });
  }

  /** Text streamed onto a long message: to its file only (the page gets it as an append). */
  private extendLong(entity: MessageEntity, text: string): void {
    const long = entity.long!;
    long.chars += text.length;
    if (long.error || !this.longText) return;
    const error = this.longText.write(long.file, text, true);
    if (error) long.error = error;
  }

  /** Drops `entity` and everything after it (a conversation restored to before that message). */
  truncateFrom(entity: TimelineEntity): void {
    const at = this.order.indexOf(`${entity.kind}:${entity.id}`);
    if (at < 0) return;
    for (const key of this.order.splice(at)) {
      this.entities.delete(key);
      this.pendingPermissions.delete(key);
    }
    this.openMessage = undefined;
    this.emit({ type: 'truncated' });
  }

  private insert(key: string, entity: TimelineEntity): void {
    if (entity.kind === 'message' && entity.role === 'user' && this.nextCheckpoint) [entity.checkpoint, this.nextCheckpoint] = [this.nextCheckpoint, undefined];
    this.entities.set(key, entity);
    this.order.push(key);
  }

  private emit(event: SessionEvent): void {
    for (const l of this.listeners) l(event);
  }
}
