/** An agent that refused work for now (the agent service's full queue): said once, with a button that sends it again. */
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';

export function offerRetry(what: string, why: string, retry: () => void): void {
  const again = vscode.l10n.t('Retry');
  void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('Atrium: {0} was not taken: {1}', what, why)), again).then((pick) => {
    if (pick === again) retry();
  });
}
