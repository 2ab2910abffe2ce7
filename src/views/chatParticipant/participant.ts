/**
 * Any hosted agent in VS Code's own Chat view (docs/chat-view.md): the participant `@atrium` sends the request to
 * the agent picked in the Chat view's model picker ("<agent> via Atrium", a language model registered only for
 * this), through the same tabs, sessions, permission broker and modals as the sidebar chat. A conversation in the
 * Chat view is one hosted session, held by a background tab of the sidebar chat: a follow-up continues it (the
 * response's metadata names the tab and session), it is in the session history, and "Continue in Atrium's Chat"
 * shows it in the sidebar. Only where the running VS Code has the stable language-model provider API (1.104 and
 * later); elsewhere nothing here is registered and the participant stays hidden (its `when` context key).
 */
import * as vscode from 'vscode';
import type { TurnChangeSets } from '../../host/turnChangeSets';
import type { AgentManager } from '../../manager/agentManager';
import type { ContentPart } from '../../session/sessionModel';
import { registerCommand } from '../commandRegistry';
import { type LanguageModelChatInformation, languageModelProviderApi } from './lmApi';
import { type FeedPart, planMarkdown, TurnFeed } from './turnFeed';

export const PARTICIPANT_ID = 'agentHost.atrium';
export const PARTICIPANT_NAME = 'atrium';
export const MODEL_VENDOR = 'atrium';
/** Set when the participant is registered: package.json's `when` of the participant and of the model vendor. */
export const AVAILABLE_KEY = 'agentHost.chatViewAvailable';

/** What a response keeps for the next request of its conversation. */
export interface ConversationRef {
  tab: string;
  sessionId: string;
  agent: string;
}

interface ResultMetadata {
  atrium?: ConversationRef;
}

/**
 * Registers the participant and its language model, when the running VS Code can host them (`offered`); else
 * nothing.
 */
export function registerChatParticipant(
  manager: AgentManager,
  turnChanges: TurnChangeSets,
  extensionUri: vscode.Uri,
  log: vscode.LogOutputChannel,
): { offered: boolean; disposable: vscode.Disposable } {
  const registerProvider = languageModelProviderApi();
  if (!registerProvider) {
    log.info(`VS Code's Chat view: VS Code ${vscode.version} has no language-model provider API (1.104 or later); @${PARTICIPANT_NAME} is not offered`);
    return { offered: false, disposable: new vscode.Disposable(() => undefined) };
  }
  const changed = new vscode.EventEmitter<void>();
  const provider = registerProvider(MODEL_VENDOR, {
    onDidChangeLanguageModelChatInformation: changed.event,
    provideLanguageModelChatInformation: () => modelsOf(manager),
    // Another participant or mode asking this model: it only serves @atrium, and never routes to an agent.
    provideLanguageModelChatResponse: async (model, _messages, _options, progress) => {
      log.info(`VS Code's Chat view: a request to "${model.name}" from outside @${PARTICIPANT_NAME} was answered with a pointer to it`);
      progress.report(new vscode.LanguageModelTextPart(vscode.l10n.t('"{0}" only answers through @{1}: start your request with @{1} to ask {2}.', model.name, PARTICIPANT_NAME, model.id)));
    },
    provideTokenCount: async (_model, text) => Math.ceil((typeof text === 'string' ? text.length : JSON.stringify(text).length) / 4),
  });
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, (request, context, stream, token) => new ParticipantTurn(manager, turnChanges, log).handle(request, context, stream, token));
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icon.png');
  void vscode.commands.executeCommand('setContext', AVAILABLE_KEY, true);
  // The model picker selects a model of ours by itself once the vendor has been asked for its models.
  void Promise.resolve(vscode.lm.selectChatModels({ vendor: MODEL_VENDOR })).then(
    (models) => log.info(`VS Code's Chat view: @${PARTICIPANT_NAME} offered with ${models.length} agent model(s)`),
    (error: Error) => log.warn(`VS Code's Chat view: the agent models were not listed: ${error.message}`),
  );
  return {
    offered: true,
    disposable: vscode.Disposable.from(
      provider,
      participant,
      changed,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentHost.agents')) changed.fire();
      }),
    ),
  };
}

/** One model per configured agent, named for what it is. */
function modelsOf(manager: AgentManager): LanguageModelChatInformation[] {
  return manager.agents().map((a) => ({
    id: a.name,
    name: vscode.l10n.t('{0} via Atrium', a.name),
    family: MODEL_VENDOR,
    version: '1',
    tooltip: vscode.l10n.t('Asks the agent "{0}" through @{1}: its own model, tools and permissions answer, not this entry.', a.name, PARTICIPANT_NAME),
    maxInputTokens: 1_000_000,
    maxOutputTokens: 100_000,
    // Without tool calling VS Code's Agent mode hides the model, and with it the participant's requests.
    capabilities: { toolCalling: true },
  }));
}

/** The conversation's hosted session, from the last response of ours in its history. */
export function conversationOf(history: ReadonlyArray<vscode.ChatRequestTurn | vscode.ChatResponseTurn>): ConversationRef | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i];
    if (!(turn instanceof vscode.ChatResponseTurn) || turn.participant !== PARTICIPANT_ID) continue;
    const ref = (turn.result.metadata as ResultMetadata | undefined)?.atrium;
    if (ref?.tab && ref.sessionId && ref.agent) return ref;
  }
  return undefined;
}

class ParticipantTurn {
  /** When the request reached the participant, for the log's "first text after" (docs/chat-view.md). */
  private readonly started = performance.now();
  private toldText = false;

  constructor(
    private readonly manager: AgentManager,
    private readonly turnChanges: TurnChangeSets,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async handle(request: vscode.ChatRequest, context: vscode.ChatContext, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
    const names = this.manager.agents().map((a) => a.name);
    if (!names.length) {
      stream.markdown(vscode.l10n.t('No agent is configured yet.'));
      stream.button({ command: 'agentHost.addAgent', title: vscode.l10n.t('Add Agent…') });
      return {};
    }
    const prior = conversationOf(context.history);
    const picked = request.model?.vendor === MODEL_VENDOR && names.includes(request.model.id) ? request.model.id : undefined;
    const agent = picked ?? prior?.agent ?? this.manager.agentName ?? this.manager.defaultAgent()?.name ?? names[0]!;
    if (request.command === 'agent') return this.listAgents(names, agent, stream);

    let tab: string;
    try {
      tab = await this.tabFor(agent, prior, stream);
    } catch (error) {
      return { errorDetails: { message: vscode.l10n.t('{0} did not start: {1}', agent, (error as Error).message) } };
    }
    const session = this.manager.sessionIn(tab);
    if (!session) return { errorDetails: { message: vscode.l10n.t('{0} did not start.', agent) } };
    const feed = new TurnFeed(session.model, (part) => this.tell(stream, part), {
      thinking: vscode.l10n.t('Thinking…'),
      waiting: (title) => vscode.l10n.t('Waiting for your answer: {0}', workspaceRelative(title)),
      failed: (title) => vscode.l10n.t('{0} failed', title),
    });
    const cancel = token.onCancellationRequested(() => void this.manager.cancelIn(tab));
    const ref: ConversationRef = { tab, sessionId: session.model.sessionId, agent };
    this.log.info(`VS Code's Chat view: @${PARTICIPANT_NAME} → ${agent} (tab ${tab}, session ${ref.sessionId})`);
    let stop: string;
    try {
      stop = await this.manager.promptIn(tab, promptOf(request));
    } catch (error) {
      return { metadata: { atrium: ref } satisfies ResultMetadata, errorDetails: { message: (error as Error).message } };
    } finally {
      feed.dispose();
      cancel.dispose();
    }
    await this.ending(tab, agent, feed, stream);
    ref.sessionId = this.manager.sessionIn(tab)?.model.sessionId ?? ref.sessionId;
    return {
      metadata: { atrium: ref } satisfies ResultMetadata,
      ...(stop === 'refusal' ? { errorDetails: { message: vscode.l10n.t('{0} refused to answer.', agent) } } : {}),
    };
  }

  /** The tab holding the conversation's session: its own while open, else the session reopened in a new one. */
  private async tabFor(agent: string, prior: ConversationRef | undefined, stream: vscode.ChatResponseStream): Promise<string> {
    if (prior && prior.agent === agent) {
      if (this.manager.hasTab(prior.tab) && this.manager.sessionIn(prior.tab)?.model.sessionId === prior.sessionId) return prior.tab;
      stream.progress(vscode.l10n.t('Reopening the session with {0}…', agent));
      return this.manager.openBackgroundTab(agent, prior.sessionId);
    }
    if (prior) stream.progress(vscode.l10n.t('{0} was picked: a new session with it (the one with {1} stays in the history).', agent, prior.agent));
    else stream.progress(vscode.l10n.t('Starting {0}…', agent));
    return this.manager.openBackgroundTab(agent);
  }

  private tell(stream: vscode.ChatResponseStream, part: FeedPart): void {
    if (part.kind === 'markdown' && !this.toldText) {
      this.toldText = true;
      this.log.info(`VS Code's Chat view: the answer's first text ${Math.round(performance.now() - this.started)} ms after the request reached @${PARTICIPANT_NAME}`);
    }
    if (part.kind === 'markdown') stream.markdown(part.text);
    else if (part.kind === 'progress') stream.progress(part.text);
    else {
      const uri = vscode.Uri.file(part.path);
      stream.anchor(part.line !== undefined ? new vscode.Location(uri, new vscode.Position(Math.max(0, part.line - 1), 0)) : uri, part.title);
      stream.markdown(' ');
    }
  }

  /**
   * After the turn: the plan and the usage as markdown right after the answer (VS Code 1.139 folds every part of a
   * finished response but its last markdown into "Completed N steps": the answer must stay in that last one), then
   * the files it changed (references, and a button to our review) and the way back to the sidebar.
   */
  private async ending(tab: string, agent: string, feed: TurnFeed, stream: vscode.ChatResponseStream): Promise<void> {
    const tail: string[] = [];
    if (feed.plan?.length) tail.push(planMarkdown(feed.plan));
    const usage = feed.usage;
    if (usage?.size) {
      const k = (n: number) => (n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));
      const cost = usage.cost ? ` · ${usage.cost.amount.toFixed(2)} ${usage.cost.currency}` : '';
      tail.push(`*${vscode.l10n.t('{0} · context {1} / {2}', agent, k(usage.used), k(usage.size))}${cost}*`);
    }
    if (tail.length) stream.markdown(`\n\n${tail.join('\n\n')}\n`);
    const changes = await this.turnChanges.changes(tab).catch(() => undefined);
    this.log.info(`VS Code's Chat view: the turn of tab ${tab} changed ${changes?.changes.length ?? 0} file(s)`);
    if (changes?.changes.length) {
      for (const c of changes.changes) stream.reference(vscode.Uri.file(c.path));
      stream.button({ command: 'agentHost.reviewTurnChanges', arguments: [tab, changes.turn], title: vscode.l10n.t('Review {0} Changed File(s)', changes.changes.length) });
    }
    stream.button({ command: 'agentHost.openChatTab', arguments: [tab], title: vscode.l10n.t("Continue in Atrium's Chat") });
  }

  private listAgents(names: string[], current: string, stream: vscode.ChatResponseStream): vscode.ChatResult {
    stream.markdown(
      `${vscode.l10n.t('The agents @{0} can ask (pick one in the model picker: "<agent> via Atrium"):', PARTICIPANT_NAME)}\n\n${names
        .map((n) => `- ${n === current ? `**${n}** ${vscode.l10n.t('(this request’s)')}` : n}`)
        .join('\n')}\n`,
    );
    stream.button({ command: 'agentHost.addAgent', title: vscode.l10n.t('Add Agent…') });
    return {};
  }
}

/** `text` with the workspace folders' paths left out of the paths in it (an agent's titles name absolute paths). */
function workspaceRelative(text: string): string {
  let out = text;
  for (const f of vscode.workspace.workspaceFolders ?? []) out = out.split(`${f.uri.fsPath}/`).join('');
  return out;
}

/** The request as prompt blocks: its text, and each attached file (`#file`, a selection) as a resource link. */
function promptOf(request: vscode.ChatRequest): ContentPart[] {
  const parts: ContentPart[] = [{ type: 'text', text: request.prompt }];
  for (const ref of request.references) {
    const value = ref.value;
    const uri = value instanceof vscode.Uri ? value : value instanceof vscode.Location ? value.uri : undefined;
    if (uri?.scheme !== 'file') continue;
    parts.push({ type: 'resource_link', uri: uri.toString(), name: uri.path.split('/').pop() ?? uri.path });
  }
  return parts;
}

/**
 * `agentHost.openChatTab`: shows tab `tab` in the sidebar chat (a Chat view conversation's "Continue in Atrium's
 * Chat"); a tab closed since opens the session history instead, where the session is.
 */
export function registerOpenChatTab(manager: AgentManager): vscode.Disposable {
  return registerCommand('agentHost.openChatTab', async (tab?: string) => {
    if (tab && manager.hasTab(tab)) {
      manager.switchTab(tab);
      await vscode.commands.executeCommand('agentHost.chat.focus');
    } else await vscode.commands.executeCommand('agentHost.sessionHistory');
  });
}
