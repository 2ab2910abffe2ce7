import * as vscode from 'vscode';
import type { PermissionBroker } from '../../host/permissionBroker';
import { RestrictedModeError, SupersededStartError, type AgentManager, unlessSuperseded } from '../../manager/agentManager';
import { AgentBusyError, type AgentSession } from '../../session/agentSession';
import type { NoticeEntity, SessionModel, TimelineEntity } from '../../session/sessionModel';
import type { ChatRequests, ContextChip, HeaderState, HostEvent, QueuedPrompt, RequestMessage, RequestMethod, Snapshot } from '../../shared/chatProtocol';
import { displayedEntity } from '../displayPaths';
import { withAnswerButtons } from '../permissionDialog';
import { MANAGE_TRUST_COMMAND } from '../restrictedMode';
import { type CheckpointHost, restoreCheckpoint, type RestoreFiles } from './checkpointActions';
import { buildPromptParts, entityKey, SNAPSHOT_ENTITIES, sessionDivider, settledHistory, startFailedNotice, windowStart } from './chatContent';
import { chatHeader, promptCaps } from './chatHeader';
import { ChatBatch } from './chatBatch';
import { chatStrings } from './chatStrings';
import { commandHandlers } from './commandHandlers';
import { EditorActions } from './editorActions';
import { MentionSources, mentionHandlers } from './mentionSources';
import { offerRetry } from '../busyRetry';
import { queuePrompt } from './promptQueue';
import type { TabHistories } from './tabHistories';
import { TerminalCards, type TerminalSource } from './terminalCards';

type Handlers = { [M in RequestMethod]: (params: ChatRequests[M][0]) => Promise<ChatRequests[M][1]> | ChatRequests[M][1] };

/** What the page may ask in Restricted Mode: it shows only why no agent runs, and the way to trust the folder. */
const RESTRICTED_REQUESTS: ReadonlySet<RequestMethod> = new Set(['ready', 'manageTrust', 'showLog']);

/**
 * The chat view's state on the extension side, independent of any webview: follows the manager's session
 * model, keeps the prompt queue and the context attached from the editor, and feeds every ready webview.
 * The transcript of a session that ended stays until a new session starts (its exit notice has Restart).
 */
export class ChatController implements vscode.Disposable {
  private model: SessionModel | undefined;
  private session: AgentSession | undefined;
  private unsubscribeModel: (() => void) | undefined;
  /** Errors the model cannot hold (e.g. the agent failed to start): shown after the model's timeline. */
  private local: NoticeEntity[] = [];
  /** The notice of the start that failed while messages wait (one, updated, until the agent runs). */
  private startFailureId: string | undefined;
  private localCount = 0;
  private queue: QueuedPrompt[] = [];
  private queueCount = 0;
  private pendingContext: ContextChip[] = [];
  /** Tabs whose prompt was sent and not yet answered (a tab keeps streaming while another is shown). */
  private readonly inFlightTabs = new Set<string>();
  /** The session being opened from history, until it is followed. */
  private opening: string | undefined;
  private readonly sinks = new Set<(event: HostEvent) => void>();
  private readonly batch = new ChatBatch((event) => this.post(event), {
    plan: () => ({ type: 'plan', entries: this.model?.plan ?? [] }),
    header: () => ({ type: 'header', header: this.header() }),
  });
  private wantFocus = false;
  /** The last `set_editor_text` seen, and one not yet delivered because no view was open. */
  private editorText: string | undefined;
  private pendingEditorText: string | undefined;
  private readonly subs: vscode.Disposable[] = [];
  readonly editor = new EditorActions();
  private readonly mentions = new MentionSources();
  private readonly terminalCards: TerminalCards;

  /** Names the followed model's entities in the kept copy: a session reattached (same id) must not overwrite its earlier copy. */
  private copyPrefix = '';
  /** The transcript of earlier windows (the agent process does not survive a reload), shown above the session. */
  private history: TimelineEntity[];
  /** The tab shown; the others' queued prompts wait here until their tab is shown again. */
  private tabId: string;
  private readonly tabQueues = new Map<string, QueuedPrompt[]>();

  constructor(
    private readonly manager: AgentManager,
    private readonly log: vscode.LogOutputChannel,
    private readonly histories: TabHistories,
    /** Answers permission cards in the chat; without it cards show no buttons. */
    private readonly broker: PermissionBroker | undefined,
    terminals?: TerminalSource,
    private readonly restoreFiles?: RestoreFiles,
  ) {
    this.tabId = manager.activeTabId;
    this.terminalCards = new TerminalCards(terminals, (id) => {
      const call = this.model?.toolCall(id);
      if (call) this.batch.entity(this.forView(call));
    });
    this.history = histories.get(this.tabId);
    this.subs.push(
      this.editor,
      this.mentions,
      new vscode.Disposable(() => this.terminalCards.dispose()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // An agent added while the chat shows with none running: warm start it as if the chat just opened.
        const idle = manager.state === 'stopped' && !manager.error && !manager.current && manager.agents().length > 0;
        if (e.affectsConfiguration('agentHost.permissions.mode')) this.post({ type: 'header', header: this.header() });
        if (e.affectsConfiguration('agentHost.agents') && this.sinks.size && this.warmStart() && idle)
          this.manager.ensureStarted().catch((error: Error) => this.log.warn(`Chat: agent did not start: ${error.message}`));
      }),
      // Trusted now: the page becomes the chat (no reload), and the agent warm starts as when the chat opens.
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        if (!this.sinks.size) return; // a view shown later asks `ready` and gets the chat
        this.post({ type: 'snapshot', snapshot: this.snapshot() });
        this.warmStartIfIdle();
      }),
      manager.onDidChangeTabs(({ switched }) => (switched ? this.showTab() : this.batch.markHeader())),
      manager.onDidChangeSession((s) => {
        if (s) this.follow(s);
        this.batch.markHeader();
      }),
      manager.onDidChangeState((state) => {
        this.batch.markHeader();
        if (state !== 'ready') return;
        this.startFailureId = undefined;
        setTimeout(() => this.drain(), 0);
      }),
    );
    if (manager.current) this.follow(manager.current);
  }

  /** Starts feeding a webview that asked `ready`; returns how to stop. */
  attach(sink: (event: HostEvent) => void): () => void {
    this.sinks.add(sink);
    if (this.wantFocus) {
      this.wantFocus = false;
      sink({ type: 'focusInput' });
    }
    if (this.pendingEditorText !== undefined) {
      sink({ type: 'editorText', text: this.pendingEditorText });
      this.pendingEditorText = undefined;
    }
    return () => this.sinks.delete(sink);
  }

  async handle(msg: RequestMessage): Promise<unknown> {
    if (!vscode.workspace.isTrusted && !RESTRICTED_REQUESTS.has(msg.method)) throw new RestrictedModeError();
    const handler = this.handlers[msg.method] as (p: unknown) => unknown;
    return handler(msg.params);
  }

  /** Attaches the active editor's selection (or file) to the next prompt. */
  async addSelection(): Promise<void> {
    const chip = this.editor.selectionChip();
    if (!chip) return;
    await vscode.commands.executeCommand('agentHost.chat.focus');
    if (this.sinks.size) this.post({ type: 'addContext', chip });
    else this.pendingContext.push(chip);
  }

  async focusInput(): Promise<void> {
    await vscode.commands.executeCommand('agentHost.chat.focus');
    if (this.sinks.size) this.post({ type: 'focusInput' });
    else this.wantFocus = true;
  }

  private readonly checkpoints: CheckpointHost = { log: () => this.log, entities: () => this.allEntities(), session: () => this.session, busy: () => this.busy(), send: (t) => this.send(t, []) };
  private readonly handlers: Handlers = {
    ready: async () => {
      this.warmStartIfIdle();
      return this.snapshot();
    },
    earlier: ({ before, count }) => {
      const all = this.allEntities();
      const end = all.findIndex((e) => entityKey(e) === before);
      const from = windowStart(all, end, Math.min(count, SNAPSHOT_ENTITIES));
      const entities = end < 0 ? [] : all.slice(from, end);
      this.batch.sent(entities.map(entityKey));
      return { entities: entities.map((e) => this.forView(e)), earlier: end < 0 ? 0 : from };
    },
    prompt: ({ text, context }) => {
      if (!text.trim() && !context.length) return { queued: false };
      // No agent runs in this tab (in error, stopped, starting): the message waits in the queue while it starts.
      const down = !this.manager.current;
      if (this.busy() || down) {
        queuePrompt(this.queue, { id: `q${++this.queueCount}`, text, context }, this.log);
        this.post({ type: 'queue', queue: this.queue });
        if (down) this.startForQueue();
        return { queued: true, ...(down ? { untilStarted: true } : {}) };
      }
      this.send(text, context);
      return { queued: false };
    },
    cancel: async () => {
      await this.manager.cancel();
    },
    steer: ({ text, context }) => this.whileStreaming('steer', text, context),
    followUp: ({ text, context }) => this.whileStreaming('followUp', text, context),
    removeQueued: ({ id }) => {
      this.queue = this.queue.filter((q) => q.id !== id);
      this.post({ type: 'queue', queue: this.queue });
    },
    editQueued: ({ id, text }) => {
      const item = this.queue.find((q) => q.id === id);
      if (item) item.text = text;
      this.post({ type: 'queue', queue: this.queue });
    },
    selectAgent: async ({ name }) => {
      if (name === this.manager.agentName && this.manager.current) return;
      this.manager.select(name);
      await this.manager.restart().catch(unlessSuperseded);
    },
    newTab: ({ agent }) => {
      this.manager.newTab(agent);
    },
    switchTab: ({ id }) => this.manager.switchTab(id),
    closeTab: async ({ id }) => {
      this.histories.forget(id, this.manager.tabs().length > 1 ? 'delete' : 'keep');
      this.tabQueues.delete(id);
      await this.manager.closeTab(id);
    },
    restart: () => this.manager.restart().then(() => undefined, unlessSuperseded),
    newSession: async () => {
      this.local = [];
      this.history = [];
      this.unsubscribeModel?.();
      this.unsubscribeModel = undefined;
      this.model = undefined;
      this.histories.forget(this.tabId, 'empty');
      this.post({ type: 'snapshot', snapshot: this.snapshot() });
      await this.manager.newSession().catch(unlessSuperseded);
    },
    // A choice in the header is the agent's default from now on; made while the agent starts, it is
    // applied when the session comes.
    setMode: async ({ modeId }) => {
      if (!(await this.manager.choose({ modeId }, (session) => session.setMode(modeId)))) this.post({ type: 'header', header: this.header() });
    },
    setModel: async ({ modelId }) => {
      if (!(await this.manager.choose({ modelId }, (session) => session.setModel(modelId)))) this.post({ type: 'header', header: this.header() });
    },
    setConfigOption: async ({ configId, value }) => {
      if (!(await this.manager.choose({ config: { [configId]: value } }, (s) => s.setConfigOption(configId, value)))) {
        this.post({ type: 'header', header: this.header() });
      }
    },
    ...mentionHandlers(this.editor, this.mentions),
    // A long message's file is ours (the model wrote it), not a link of the agent's: opened without asking.
    openLocation: ({ path, line }) => (this.model?.messages().some((m) => m.long?.file === path && !m.long.error) ? this.editor.openOwnFile(path) : this.editor.openLocation(path, line)),
    openDiff: ({ path, oldText, newText }) => this.editor.openDiff(path, oldText, newText),
    openLink: ({ href }) => this.editor.openLink(href),
    copy: async ({ text }) => void (await vscode.env.clipboard.writeText(text)),
    insertCode: ({ code }) => this.editor.insertAtCursor(code),
    applyCode: ({ code }) => this.editor.applyToActiveFile(code),
    runInTerminal: ({ code }) => this.editor.runInTerminal(code),
    showTerminal: ({ id }) => {
      if (!this.terminalCards.show(id)) throw new Error(vscode.l10n.t('This terminal is gone: the agent released it.'));
    },
    answerPermission: ({ permissionId, optionId, scope }) => {
      // The card shows the model's permission; the broker holds the request itself (same tool call).
      const entity = this.model?.get('permission', permissionId);
      const broker = this.broker;
      if (!broker || entity?.kind !== 'permission') throw new Error(vscode.l10n.t('This permission request can no longer be answered.'));
      const pending = broker.pending().find((p) => p.request.toolCall.id === entity.toolCallId && p.request.sessionId === this.model?.sessionId);
      if (!pending || !broker.answer(pending.id, optionId, scope)) throw new Error(vscode.l10n.t('This permission request can no longer be answered.'));
    },
    showLog: () => this.log.show(),
    manageTrust: async () => void (await vscode.commands.executeCommand(MANAGE_TRUST_COMMAND)),
    ...commandHandlers,
    restoreCheckpoint: ({ key, edit, retry }) => restoreCheckpoint(this.checkpoints, this.restoreFiles, key, retry ? 'retry' : edit ? 'edit' : 'pick'),
  };

  /** `agentHost.warmStart`: the agent starts when the chat shows, not with the first prompt (never in Restricted Mode). */
  private warmStart(): boolean {
    return vscode.workspace.isTrusted && vscode.workspace.getConfiguration('agentHost').get<boolean>('warmStart', true);
  }

  /** The chat shows with no agent up, and none failed: the agent starts now. */
  private warmStartIfIdle(): void {
    if (this.warmStart() && this.manager.state === 'stopped' && !this.manager.error && !this.model && this.manager.agents().length) {
      this.manager.ensureStarted().catch((e: Error) => this.log.warn(`Chat: agent did not start: ${e.message}`));
    }
  }

  /**
   * Steer / follow-up: while the turn streams, the message goes to the agent's own queue (the agent reports
   * the count); when idle it is a plain prompt; agents without such a queue queue locally.
   */
  private async whileStreaming(kind: 'steer' | 'followUp', text: string, context: ContextChip[]): Promise<{ queued: boolean }> {
    const s = this.manager.current;
    const queue = s?.model === this.model && s?.model.turn !== 'idle' ? s?.queue : undefined;
    if (!queue || !(kind === 'steer' ? queue.canSteer : queue.canFollowUp)) return this.handlers.prompt({ text, context });
    if (!text.trim() && !context.length) return { queued: false };
    const { parts, dropped } = buildPromptParts(text, context, promptCaps(this.manager));
    if (dropped.length) this.addLocalNotice('warning', chatStrings().imagesUnsupported);
    if (kind === 'steer') await queue.steer(parts);
    else await queue.followUp(parts);
    return { queued: true };
  }

  private busy(): boolean {
    return this.inFlightTabs.has(this.tabId) || (this.model !== undefined && this.manager.current?.model === this.model && this.model.turn !== 'idle');
  }

  private send(text: string, context: ContextChip[]): void {
    const { parts, dropped } = buildPromptParts(text, context, promptCaps(this.manager));
    if (dropped.length) this.addLocalNotice('warning', chatStrings().imagesUnsupported);
    if (!parts.length) return;
    const tab = this.tabId;
    this.inFlightTabs.add(tab);
    this.batch.markHeader();
    this.manager
      .prompt(parts)
      .catch((error: Error) => {
        this.log.error(`Chat prompt failed: ${error.message}`);
        if (error instanceof AgentBusyError && tab === this.tabId) offerRetry(vscode.l10n.t('Your message'), error.message, () => this.send(text, context));
        // An agent that exited mid-turn leaves its own notice in the model (perhaps a moment after this): one per exit.
        const exited = error.name === 'AgentExitedError' && this.model !== undefined;
        if (tab === this.tabId && !exited && (!this.model || this.manager.current?.model !== this.model || this.model.timeline().at(-1)?.kind !== 'notice')) {
          this.addLocalNotice('error', error.message.split('\n')[0] ?? error.message, error.message);
        }
      })
      .finally(() => {
        this.inFlightTabs.delete(tab);
        this.batch.markHeader();
        setTimeout(() => this.drain(), 0);
      });
  }

  /**
   * Starts the agent for the messages waiting in the queue; they go out once it is ready (drain). A start that
   * fails leaves them queued and is said in one notice, updated by every later failure until the agent runs.
   */
  private startForQueue(): void {
    const tab = this.tabId;
    this.manager.ensureStarted().then(
      () => setTimeout(() => this.drain(), 0),
      (error: Error) => {
        if (error instanceof SupersededStartError || tab !== this.tabId) return;
        const why = this.manager.error ?? error.message;
        this.log.warn(`Chat: the agent did not start; ${this.queue.length} message(s) wait in the queue: ${why}`);
        this.startFailureId ??= `local-${++this.localCount}`;
        const id = this.startFailureId;
        const notice = startFailedNotice(id, why, vscode.l10n.t('What you sent waits above the input and goes out once the agent runs: restart it when the cause is fixed.'));
        this.local = this.local.some((n) => n.id === id) ? this.local.map((n) => (n.id === id ? notice : n)) : [...this.local, notice];
        this.post({ type: 'entities', entities: [notice] });
      },
    );
  }

  /** Sends the next queued prompt once an agent runs and nothing is running. */
  private drain(): void {
    if (this.busy() || !this.queue.length) return;
    if (this.manager.state === 'starting' || !this.manager.current) return;
    const next = this.queue.shift()!;
    this.post({ type: 'queue', queue: this.queue });
    this.send(next.text, next.context);
  }

  private addLocalNotice(severity: NoticeEntity['severity'], title: string, detail?: string): void {
    const notice: NoticeEntity = { kind: 'notice', id: `local-${++this.localCount}`, severity, title, ...(detail && detail !== title ? { detail } : {}) };
    this.local.push(notice);
    this.post({ type: 'entities', entities: [notice] });
  }

  /**
   * Opens an earlier session in the chat: the transcript is cleared, then shows what the agent replays
   * (`session/load`) or, when it only resumes or cannot reattach, Atrium's own copy (`copy`) above the
   * notice saying which happened. The tab takes the session's title.
   */
  async openFromHistory({ agent, sessionId, title }: { agent: string; sessionId: string; title?: string }, copy: TimelineEntity[] | undefined): Promise<AgentSession> {
    this.unsubscribeModel?.();
    this.unsubscribeModel = undefined;
    this.model = undefined;
    this.session = undefined;
    this.local = [];
    this.queue = [];
    this.history = (copy ?? []).map((e) => ({ ...e, id: `copy:${sessionId}:${e.id}` }) as TimelineEntity);
    this.opening = sessionId;
    this.post({ type: 'snapshot', snapshot: this.snapshot() });
    try {
      return await this.manager.openSession(agent, sessionId, title);
    } finally {
      this.opening = undefined;
    }
  }

  /** Another tab became active: its transcript (earlier copy and live session) and its queue are shown. */
  private showTab(): void {
    if (this.manager.activeTabId === this.tabId) return;
    this.tabQueues.set(this.tabId, this.queue);
    this.histories.keep(this.tabId, this.history);
    this.unsubscribeModel?.();
    this.unsubscribeModel = undefined;
    this.model = undefined;
    this.session = undefined;
    this.local = [];
    this.batch.clearEntities();
    this.tabId = this.manager.activeTabId;
    this.history = this.histories.get(this.tabId);
    this.queue = this.tabQueues.get(this.tabId) ?? [];
    this.tabQueues.delete(this.tabId);
    const current = this.manager.current;
    if (current) this.follow(current);
    else this.post({ type: 'snapshot', snapshot: this.snapshot() });
    // Messages that waited while the tab was in the background go out now if its agent is idle.
    setTimeout(() => this.drain(), 0);
    if (this.warmStart() && this.manager.state === 'stopped' && !this.manager.error) {
      this.manager.ensureStarted().catch((e: Error) => this.log.warn(`Chat: agent did not start: ${e.message}`));
    }
  }

  private follow(session: AgentSession): void {
    if (this.session === session) return;
    this.unsubscribeModel?.();
    if (this.opening && session.attach.requested === this.opening && session.attach.how === 'loaded') {
      this.history = []; // the agent's replay is the transcript
    }
    // The previous session's transcript stays visible above the new one, under a divider naming the agent.
    if (this.model) this.history = [...this.saveHistory(), sessionDivider(session.sessionId, this.manager.agentName ?? session.agentInfo.name)];
    this.session = session;
    this.model = session.model;
    this.copyPrefix = `prev:${session.sessionId}:${Date.now().toString(36)}`;
    this.editorText = undefined;
    this.local = [];
    this.batch.clearEntities();
    this.unsubscribeModel = session.model.on((e) => {
      switch (e.type) {
        case 'entity':
          this.batch.entity(this.forView(e.entity));
          break;
        case 'append':
          this.batch.append(e.id, e.text, () => session.model.get('message', e.id));
          break;
        case 'plan':
          this.batch.markPlan();
          break;
        case 'agent_state': {
          const text = session.extras()?.editorText;
          if (text !== undefined && text !== this.editorText) {
            this.editorText = text;
            if (this.sinks.size) this.post({ type: 'editorText', text });
            else this.pendingEditorText = text;
          }
          this.batch.markHeader();
          break;
        }
        case 'turn':
          if (e.state === 'idle') this.histories.saveSoon(this.tabId, this.history, this.model?.timeline() ?? [], this.copyPrefix);
          this.batch.markHeader();
          break;
        case 'truncated':
          this.post({ type: 'snapshot', snapshot: this.snapshot() });
          break;
        default:
          this.batch.markHeader();
      }
    });
    this.post({ type: 'snapshot', snapshot: this.snapshot() });
  }

  private saveHistory(): TimelineEntity[] {
    return this.histories.save(this.tabId, this.history, this.model?.timeline() ?? [], this.copyPrefix);
  }

  private header(): HeaderState {
    return chatHeader({
      manager: this.manager,
      model: this.model,
      busy: this.inFlightTabs.has(this.tabId),
      permissionsInChat: this.broker !== undefined && vscode.workspace.getConfiguration('agentHost').get<string>('permissions.mode', 'modal') !== 'modal',
    });
  }

  private snapshot(): Snapshot {
    const all = this.allEntities();
    const from = windowStart(all, all.length, SNAPSHOT_ENTITIES);
    this.batch.reset(all.slice(0, from).map(entityKey));
    const pending = this.pendingContext;
    this.pendingContext = [];
    return {
      entities: all.slice(from).map((e) => this.forView(e)),
      earlier: from,
      plan: this.model?.plan ?? [],
      header: this.header(),
      queue: this.queue,
      pendingContext: pending,
      strings: chatStrings(),
      restricted: !vscode.workspace.isTrusted,
    };
  }

  private allEntities(): TimelineEntity[] {
    return [...settledHistory(this.history), ...(this.model?.timeline() ?? []), ...this.local];
  }

  /** As the page shows it: notices in the person's language, paths relative, tool cards with their terminals, a pending permission with the modal's buttons. */
  private forView(shown: TimelineEntity): TimelineEntity {
    const entity = displayedEntity(shown.kind === 'tool_call' ? this.terminalCards.withTerminals(shown) : shown);
    const toolCall = entity.kind === 'permission' && entity.state === 'pending' ? this.model?.toolCall(entity.toolCallId) : undefined;
    return entity.kind === 'permission' && toolCall && this.broker ? withAnswerButtons(entity, toolCall, this.broker.offer(toolCall)) : entity;
  }

  private post(event: HostEvent): void {
    for (const sink of this.sinks) sink(event);
  }

  dispose(): void {
    this.batch.dispose();
    this.unsubscribeModel?.();
    for (const s of this.subs) s.dispose();
    this.sinks.clear();
  }
}
