import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import type { AgentUiHandlers, UiConfirmRequest, UiEditorRequest, UiInputRequest, UiSelectRequest } from '../session/sessionHost';

/** A CancellationToken that fires when the agent withdraws the dialog or it times out. */
function tokenFor(signal: AbortSignal): vscode.CancellationTokenSource {
  const source = new vscode.CancellationTokenSource();
  if (signal.aborted) source.cancel();
  else signal.addEventListener('abort', () => source.cancel(), { once: true });
  return source;
}

/** Resolves with `undefined` as soon as the signal aborts, whatever the UI still shows. */
function untilAborted<T>(signal: AbortSignal, ui: Thenable<T | undefined>): Promise<T | undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
    ui.then(resolve, () => resolve(undefined));
  });
}

const withTimeoutNote = (title: string, timeout?: number) => (timeout ? vscode.l10n.t('{0} (answers itself in {1} s)', title, Math.round(timeout / 1000)) : title);

/**
 * The pi RPC extension UI in VS Code: select → quick pick, confirm → modal, input → input box,
 * editor → a text document submitted from a notification; status entries in one status bar item.
 */
export class VsCodeRpcUi implements AgentUiHandlers, vscode.Disposable {
  private readonly status = new Map<string, string>();
  private readonly statusItem = vscode.window.createStatusBarItem('agentHost.rpcStatus', vscode.StatusBarAlignment.Left, 9);

  constructor() {
    this.statusItem.name = vscode.l10n.t('Atrium: agent status');
  }

  async select(request: UiSelectRequest, signal: AbortSignal): Promise<string | undefined> {
    const source = tokenFor(signal);
    const items = request.options.map((label, i) => ({ label, description: request.optionDetails?.[i]?.description ?? '' }));
    const picked = await untilAborted(signal, vscode.window.showQuickPick(items, { title: withTimeoutNote(request.title, request.timeout), ignoreFocusOut: true }, source.token));
    source.dispose();
    return picked?.label;
  }

  async confirm(request: UiConfirmRequest, signal: AbortSignal): Promise<boolean | undefined> {
    const yes = vscode.l10n.t('Yes');
    const no = vscode.l10n.t('No');
    const answer = await untilAborted(signal, vscode.window.showWarningMessage(withTimeoutNote(request.title, request.timeout), { modal: true, detail: request.message }, yes, no));
    return answer === undefined ? undefined : answer === yes;
  }

  async input(request: UiInputRequest, signal: AbortSignal): Promise<string | undefined> {
    const source = tokenFor(signal);
    const value = await untilAborted(
      signal,
      vscode.window.showInputBox({ title: withTimeoutNote(request.title, request.timeout), ...(request.placeholder ? { placeHolder: request.placeholder } : {}), ignoreFocusOut: true }, source.token),
    );
    source.dispose();
    return value;
  }

  /** Opens the prefill in an untitled editor; "Submit" sends the document's text, "Cancel" dismisses. */
  async editor(request: UiEditorRequest, signal: AbortSignal): Promise<string | undefined> {
    const doc = await vscode.workspace.openTextDocument({ content: request.prefill ?? '', language: 'markdown' });
    await vscode.window.showTextDocument(doc, { preview: false });
    const submit = vscode.l10n.t('Submit to Agent');
    const cancel = vscode.l10n.t('Cancel');
    const answer = await untilAborted(
      signal,
      vscode.window.showInformationMessage(inertMarkup(vscode.l10n.t('{0}: edit the text, then submit it to the agent', withTimeoutNote(request.title, request.timeout))), submit, cancel),
    );
    return answer === submit ? doc.getText() : undefined;
  }

  notify(message: string, type: 'info' | 'warning' | 'error'): void {
    const show = type === 'error' ? vscode.window.showErrorMessage : type === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(inertMarkup(message));
  }

  setStatus(key: string, text: string | undefined): void {
    if (text === undefined) this.status.delete(key);
    else this.status.set(key, text);
    const entries = [...this.status.values()];
    this.statusItem.text = inertMarkup(entries.join('  ')); // no `$(icon)` of the agent's next to ours
    this.statusItem.tooltip = [...this.status].map(([k, v]) => `${k}: ${v}`).join('\n');
    if (entries.length) this.statusItem.show();
    else this.statusItem.hide();
  }

  // Widgets, the title and the composer text live in the session model (agentState); the chat shows them.
  setWidget(): void {}
  setTitle(): void {}
  setEditorText(): void {}

  /** Forgets every status entry (the agent process that set them is gone). */
  clearStatus(): void {
    this.status.clear();
    this.statusItem.hide();
  }

  dispose(): void {
    this.statusItem.dispose();
  }
}
