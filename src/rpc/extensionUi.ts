/**
 * The extension UI sub-protocol of pi's RPC mode: `extension_ui_request` frames from the agent's extensions.
 * Dialogs (`select`, `confirm`, `input`, `editor`) are answered with `extension_ui_response`; everything else
 * (`notify`, `setStatus`, `setWidget`, `setTitle`, `set_editor_text`) is fire-and-forget. The agent can withdraw
 * a dialog (`method: "cancel"`, `targetId`): the handler's signal aborts and no answer is sent.
 */
import type { Logger } from '../core/log';
import type { AgentUiHandlers, UiConfirmRequest, UiDialogBase, UiEditorRequest, UiInputRequest, UiSelectRequest } from '../session/sessionHost';

/** What the host shows: the session layer's extension-UI contract (dialogs, status, widgets). */
export type RpcUiHandlers = AgentUiHandlers;
export type { UiConfirmRequest, UiDialogBase, UiEditorRequest, UiInputRequest, UiSelectRequest };

export type UiAnswer = { value: string } | { confirmed: boolean } | { cancelled: true; timedOut?: boolean };

export interface HeadlessUiOptions {
  /** confirm → `true` under approve-all, `false` under deny-all (select then dismisses). Default approve-all. */
  policy?: 'approve-all' | 'deny-all';
  /** Answers for `input` dialogs by title (exact) — otherwise the dialog is dismissed. */
  inputs?: Record<string, string>;
  /** Text submitted from `editor` dialogs (default: the prefill, unchanged). */
  editorText?: (request: UiEditorRequest) => string | undefined;
  /** Which option `select` picks (default: the first). */
  choose?: (request: UiSelectRequest) => string | undefined;
  log?: (line: string) => void;
}

/** A record of what a headless UI was asked and what it did (for tests and the CLI's JSON output). */
export interface HeadlessUiEvent {
  method: string;
  request: Record<string, unknown>;
  answer?: unknown;
}

/** Policy-driven UI for the CLI and tests. `events` lists every call in order. */
export function headlessRpcUi(options: HeadlessUiOptions = {}): RpcUiHandlers & { events: HeadlessUiEvent[]; status: Map<string, string>; widgets: Map<string, string[]> } {
  const events: HeadlessUiEvent[] = [];
  const status = new Map<string, string>();
  const widgets = new Map<string, string[]>();
  const approve = (options.policy ?? 'approve-all') === 'approve-all';
  const log = options.log ?? (() => undefined);
  const record = <T>(method: string, request: object, answer?: T): T | undefined => {
    events.push({ method, request: { ...request }, ...(answer !== undefined ? { answer } : {}) });
    log(`[ui ${method}] ${JSON.stringify(request)}${answer !== undefined ? ` → ${JSON.stringify(answer)}` : ''}`);
    return answer;
  };
  return {
    events,
    status,
    widgets,
    async select(request) {
      const answer = approve ? (options.choose ? options.choose(request) : request.options[0]) : undefined;
      return record('select', request, answer);
    },
    async confirm(request) {
      return record('confirm', request, approve);
    },
    async input(request) {
      return record('input', request, options.inputs?.[request.title]);
    },
    async editor(request) {
      return record('editor', request, options.editorText ? options.editorText(request) : (request.prefill ?? ''));
    },
    notify(message, type) {
      record('notify', { message, type });
    },
    setStatus(key, text) {
      if (text === undefined) status.delete(key);
      else status.set(key, text);
      record('setStatus', { key, text });
    },
    setWidget(key, lines, placement) {
      if (lines === undefined) widgets.delete(key);
      else widgets.set(key, lines);
      record('setWidget', { key, lines, placement });
    },
    setTitle(title) {
      record('setTitle', { title });
    },
    setEditorText(text) {
      record('setEditorText', { text });
    },
  };
}

type Writer = (frame: Record<string, unknown>) => Promise<void>;

/** Routes `extension_ui_request` frames to the handlers and writes the answers. */
export class ExtensionUiDispatcher {
  private readonly open = new Map<string, AbortController>();

  constructor(
    private readonly handlers: RpcUiHandlers | undefined,
    private readonly write: Writer,
    private readonly logger: Logger,
    /** Also tells the session model (notices, status, widgets, title). */
    private readonly observe: (method: string, frame: Record<string, unknown>) => void = () => undefined,
    /** A dialog was answered (or cancelled, or timed out) — not withdrawn by the agent: for the transcript. */
    private readonly answered: (frame: Record<string, unknown>, answer: UiAnswer) => void = () => undefined,
  ) {}

  /** Dialogs still waiting for the user. */
  get openDialogs(): number {
    return this.open.size;
  }

  handle(frame: Record<string, unknown>): void {
    const method = String(frame.method ?? '');
    const id = String(frame.id ?? '');
    this.observe(method, frame);
    const h = this.handlers;
    const str = (k: string) => (typeof frame[k] === 'string' ? (frame[k] as string) : undefined);
    const timeout = typeof frame.timeout === 'number' && frame.timeout > 0 ? frame.timeout : undefined;
    const base = { id, title: str('title') ?? '', ...(timeout ? { timeout } : {}) };
    switch (method) {
      case 'select': {
        const options = Array.isArray(frame.options) ? frame.options.map(String) : [];
        const req: UiSelectRequest = { ...base, options, ...(Array.isArray(frame.optionDetails) ? { optionDetails: frame.optionDetails as NonNullable<UiSelectRequest['optionDetails']> } : {}) };
        this.dialog(
          frame,
          timeout,
          (s) => (h ? h.select(req, s) : Promise.resolve(undefined)),
          (v) => (v === undefined ? undefined : { value: v }),
        );
        return;
      }
      case 'confirm': {
        const req: UiConfirmRequest = { ...base, message: str('message') ?? '' };
        this.dialog(
          frame,
          timeout,
          (s) => (h ? h.confirm(req, s) : Promise.resolve(undefined)),
          (v) => (v === undefined ? undefined : { confirmed: v }),
        );
        return;
      }
      case 'input': {
        const placeholder = str('placeholder');
        const req: UiInputRequest = { ...base, ...(placeholder !== undefined ? { placeholder } : {}) };
        this.dialog(
          frame,
          timeout,
          (s) => (h ? h.input(req, s) : Promise.resolve(undefined)),
          (v) => (v === undefined ? undefined : { value: v }),
        );
        return;
      }
      case 'editor': {
        const prefill = str('prefill');
        const req: UiEditorRequest = { ...base, ...(prefill !== undefined ? { prefill } : {}) };
        this.dialog(
          frame,
          timeout,
          (s) => (h ? h.editor(req, s) : Promise.resolve(undefined)),
          (v) => (v === undefined ? undefined : { value: v }),
        );
        return;
      }
      case 'cancel': {
        const target = str('targetId');
        const ctl = target ? this.open.get(target) : undefined;
        if (ctl) {
          this.logger.debug(`Extension dialog ${target} withdrawn by the agent`);
          this.open.delete(target!);
          ctl.abort();
        }
        return;
      }
      case 'notify': {
        const t = str('notifyType');
        h?.notify(str('message') ?? '', t === 'warning' || t === 'error' ? t : 'info');
        return;
      }
      case 'setStatus':
        h?.setStatus(str('statusKey') ?? '', str('statusText'));
        return;
      case 'setWidget': {
        const lines = Array.isArray(frame.widgetLines) ? frame.widgetLines.map(String) : undefined;
        const p = str('widgetPlacement');
        h?.setWidget(str('widgetKey') ?? '', lines, p === 'aboveEditor' || p === 'belowEditor' ? p : undefined);
        return;
      }
      case 'setTitle':
        h?.setTitle(str('title') ?? '');
        return;
      case 'set_editor_text':
        h?.setEditorText(str('text') ?? '');
        return;
      default:
        this.logger.warn(`Unknown extension UI method "${method}" (ignored): ${JSON.stringify(frame).slice(0, 300)}`);
    }
  }

  /** Dismisses every open dialog (the session is going away). */
  dismissAll(): void {
    for (const ctl of this.open.values()) ctl.abort();
    this.open.clear();
  }

  private dialog<T>(frame: Record<string, unknown>, timeout: number | undefined, ask: (signal: AbortSignal) => Promise<T | undefined>, toAnswer: (v: T | undefined) => UiAnswer | undefined): void {
    const id = String(frame.id ?? '');
    const ctl = new AbortController();
    this.open.set(id, ctl);
    let timedOut = false;
    const timer = timeout
      ? setTimeout(() => {
          timedOut = true;
          ctl.abort();
        }, timeout)
      : undefined;
    // The handler may ignore the signal: whichever comes first answers.
    const aborted = new Promise<'aborted'>((resolve) => ctl.signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
    const started = Date.now();
    void Promise.race([
      ask(ctl.signal).then(
        (v) => ({ v }),
        (error: unknown) => ({ error }),
      ),
      aborted,
    ]).then((outcome) => {
      if (timer) clearTimeout(timer);
      const withdrawn = !this.open.has(id);
      this.open.delete(id);
      if (withdrawn && !timedOut) return; // the agent withdrew it: no answer
      let answer: UiAnswer;
      if (outcome === 'aborted') answer = { cancelled: true, ...(timedOut ? { timedOut: true } : {}) };
      else if ('error' in outcome) {
        this.logger.error(`Extension dialog ${id} failed: ${(outcome.error as Error)?.message ?? String(outcome.error)}`);
        answer = { cancelled: true };
      } else answer = toAnswer(outcome.v) ?? { cancelled: true };
      this.logger.debug(`Extension dialog ${id} answered after ${Date.now() - started} ms: ${JSON.stringify(answer)}`);
      this.answered(frame, answer);
      this.write({ type: 'extension_ui_response', id, ...answer }).catch((error: Error) => this.logger.debug(`Could not answer extension dialog ${id}: ${error.message}`));
    });
  }
}
