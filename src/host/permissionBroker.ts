import type { Logger } from '../core/log';
import { pickOption, type PermissionDecider, type PermissionDecision, type PermissionRequestInfo } from '../session/permissions';
import { describeRule, type PermissionRuleStore, type RuleOffer, type RuleScope, type RuleWhere, ruleOffer } from './permissionRules';

/** One permission request waiting for an answer. */
export interface PendingPermission {
  /** Broker-wide id; what `answer()` takes. */
  readonly id: string;
  readonly request: PermissionRequestInfo;
  readonly receivedAt: number;
  /** When it became the active request (shown to the person); undefined while queued behind another. */
  activeSince?: number;
}

/** A person's answer: the agent's option, and for an "always" option how far the rule reaches (default: exact) and where it is kept (default: this workspace). */
export interface PermissionAnswer {
  optionId: string;
  scope?: RuleScope;
  where?: RuleWhere;
}

/**
 * Shows the active request to a person (the modal dialog) and resolves with the chosen option id (or an
 * answer with a rule scope), or undefined when they closed it. The signal aborts when the request was answered elsewhere (inline card,
 * timeout, turn cancelled); a late result is ignored.
 */
export type PermissionPresenter = (pending: PendingPermission, signal: AbortSignal) => Promise<string | PermissionAnswer | undefined>;

export interface PermissionBrokerOptions {
  rules?: PermissionRuleStore;
  /** Seconds before an active request answers `cancelled`; 0 or undefined = wait forever. Read per request. */
  timeoutSeconds?: () => number | undefined;
  /** Who shows the active request; unset (inline mode) = only `answer()` decides. Read per request. */
  presenter?: () => PermissionPresenter | undefined;
  logger?: Pick<Logger, 'info' | 'warn'>;
}

/** Requests that may wait at once; more are answered `cancelled` at once (an agent flooding dialogs). */
export const MAX_WAITING = 64;

interface Entry extends PendingPermission {
  settle: (decision: PermissionDecision) => void;
  abort: AbortController;
  timer?: NodeJS.Timeout;
}

/**
 * The one place permission requests wait: rules answer first; the rest queue (one active at a time, never
 * stacked dialogs) until a person answers (modal presenter or an inline card through `answer()`), the
 * timeout answers `cancelled`, or the turn is cancelled. An answer with an "always" option adds a rule.
 * No vscode: the extension plugs in the presenter, storage and settings.
 */
export class PermissionBroker {
  private readonly queue: Entry[] = [];
  private readonly listeners = new Set<() => void>();
  private counter = 0;
  /** Permission requests answered `cancelled` because nobody answered in time (the traffic view shows it). */
  timedOut = 0;

  constructor(private readonly options: PermissionBrokerOptions = {}) {}

  /** Pass as `decidePermission` of a session. */
  readonly decide: PermissionDecider = (request, signal) => this.enqueue(request, signal);

  /** Waiting requests, the active one first. */
  pending(): PendingPermission[] {
    return this.queue.map(({ id, request, receivedAt, activeSince }) => ({ id, request, receivedAt, ...(activeSince ? { activeSince } : {}) }));
  }

  /**
   * Answers a waiting request with one of its options (an "always" one with the rule's scope), or
   * `cancelled` with undefined. False when it is gone.
   */
  answer(id: string, optionId: string | undefined, scope?: RuleScope, where?: RuleWhere): boolean {
    const entry = this.queue.find((e) => e.id === id);
    if (!entry) return false;
    if (optionId !== undefined && !entry.request.options.some((o) => o.optionId === optionId)) {
      throw new Error(`"${optionId}" is not one of the agent's options for this request`);
    }
    this.resolve(entry, optionId === undefined ? { outcome: 'cancelled', by: 'user' } : { outcome: 'selected', optionId, by: 'user' }, { scope, where });
    return true;
  }

  /** What an "always" answer to this tool call would remember (the rule store's offer; none for a protected file). */
  offer(toolCall: PermissionRequestInfo['toolCall']): RuleOffer {
    return this.options.rules?.offer(toolCall) ?? ruleOffer(toolCall);
  }

  /** Fires whenever the queue changes (a request arrives, becomes active, or is answered). */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Answers every waiting request `cancelled` (the host is going). */
  cancelAll(): void {
    for (const e of [...this.queue]) this.resolve(e, { outcome: 'cancelled', by: 'cancel' });
  }

  /** Answers `cancelled` what one session's agent asked (its process went away; other tabs keep theirs). */
  cancelSession(sessionId: string): void {
    for (const e of [...this.queue]) if (e.request.sessionId === sessionId) this.resolve(e, { outcome: 'cancelled', by: 'cancel' });
  }

  private enqueue(request: PermissionRequestInfo, signal: AbortSignal): Promise<PermissionDecision> {
    // Every rule that answers (one per command of a line joining several): a reject among them wins.
    const matched = this.options.rules?.matchAll(request.toolCall, request.agentName);
    const rule = matched?.find((r) => r.action === 'reject') ?? matched?.[0];
    if (matched && rule) {
      const option = pickOption(request.options, rule.action);
      const described = [...new Set((rule.action === 'reject' ? [rule] : matched).map(describeRule))].join(' + ');
      if (option) {
        this.options.logger?.info(`Permission for "${request.toolCall.title}" answered ${option.optionId} by rule: ${described}`);
        return Promise.resolve({ outcome: 'selected', optionId: option.optionId, by: 'rule', rule: described, ruleId: rule.id });
      }
      this.options.logger?.warn(`Rule "${described}" applies but the agent offers no ${rule.action} option: asking`);
    }
    if (signal.aborted) return Promise.resolve({ outcome: 'cancelled', by: 'cancel' });
    if (this.queue.length >= MAX_WAITING) {
      this.options.logger?.warn(`Permission for "${request.toolCall.title}" refused: ${this.queue.length} requests already wait (at most ${MAX_WAITING})`);
      return Promise.resolve({ outcome: 'cancelled', by: 'policy' });
    }
    return new Promise<PermissionDecision>((resolve) => {
      const entry: Entry = {
        id: `perm-${++this.counter}`,
        request,
        receivedAt: Date.now(),
        abort: new AbortController(),
        settle: resolve,
      };
      signal.addEventListener('abort', () => this.resolve(entry, { outcome: 'cancelled', by: 'cancel' }), { once: true });
      this.queue.push(entry);
      this.fire();
      this.activateHead();
    });
  }

  private activateHead(): void {
    const head = this.queue[0];
    if (!head || head.activeSince) return;
    head.activeSince = Date.now();
    const seconds = this.options.timeoutSeconds?.() ?? 0;
    if (seconds > 0) {
      head.timer = setTimeout(() => {
        this.options.logger?.warn(`Permission for "${head.request.toolCall.title}" timed out after ${seconds} s: answered cancelled`);
        this.timedOut++;
        this.resolve(head, { outcome: 'cancelled', by: 'timeout' });
      }, seconds * 1000);
    }
    this.fire();
    const present = this.options.presenter?.();
    if (!present) return;
    present(head, head.abort.signal).then(
      (picked) => {
        if (!this.queue.includes(head)) return; // answered elsewhere meanwhile
        const answer = typeof picked === 'string' ? { optionId: picked } : picked;
        this.resolve(head, answer === undefined ? { outcome: 'cancelled', by: 'user' } : { outcome: 'selected', optionId: answer.optionId, by: 'user' }, answer);
      },
      (error: unknown) => {
        this.options.logger?.warn(`Permission dialog failed: ${(error as Error).message}`);
        if (this.queue.includes(head)) this.resolve(head, { outcome: 'cancelled', by: 'user' });
      },
    );
  }

  private resolve(entry: Entry, decision: PermissionDecision, rule?: { scope?: RuleScope | undefined; where?: RuleWhere | undefined }): void {
    const i = this.queue.indexOf(entry);
    if (i < 0) return;
    this.queue.splice(i, 1);
    if (entry.timer) clearTimeout(entry.timer);
    entry.abort.abort();
    if (decision.outcome === 'selected' && decision.by === 'user') {
      void this.rememberAlways(entry.request, decision.optionId, rule?.scope, rule?.where);
      decision = { ...decision, optionId: agentOptionFor(entry.request, decision.optionId) };
    }
    entry.settle(decision);
    this.fire();
    this.activateHead();
  }

  /** An "always" option picked by a person also becomes a rule of ours, so it survives restarts and agents. */
  private async rememberAlways(request: PermissionRequestInfo, optionId: string, scope?: RuleScope, where?: RuleWhere): Promise<void> {
    const rules = this.options.rules;
    const kind = request.options.find((o) => o.optionId === optionId)?.kind;
    if (!rules || (kind !== 'allow_always' && kind !== 'reject_always')) return;
    const rule = await rules.addFor(kind === 'allow_always' ? 'allow' : 'reject', request.toolCall, request.agentName, scope, where);
    if (rule) this.options.logger?.info(`Rule added: ${describeRule(rule)}`);
    else this.options.logger?.info(`"Always" for "${request.toolCall.title}" not remembered: it names no simple command or file (asked again next time)`);
  }

  private fire(): void {
    for (const l of [...this.listeners]) l();
  }
}

/**
 * The option the agent is told for a person's answer. An "always" answer about a command reaches the agent as
 * its "once" option of the same sort, when it offers one: our rule (exactly what the dialog showed) answers
 * the next asks, and the agent never makes a rule of its own, which may cover more (a prefix, a session).
 */
export function agentOptionFor(request: PermissionRequestInfo, optionId: string): string {
  const kind = request.options.find((o) => o.optionId === optionId)?.kind;
  if (kind !== 'allow_always' && kind !== 'reject_always') return optionId;
  const offer = ruleOffer(request.toolCall);
  if (!offer.notPlain && !offer.exact?.command) return optionId;
  return request.options.find((o) => o.kind === kind.replace('always', 'once'))?.optionId ?? optionId;
}
