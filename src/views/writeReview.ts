import * as vscode from 'vscode';
import { closeDiffsShowing, showDiff, type VirtualDocuments } from './virtualDocuments';

/** Shows the agent's proposed write in the diff editor and asks Accept / Reject; closing the dialog rejects. */
export function diffWriteReview(docs: VirtualDocuments) {
  return async (absPath: string, before: string | undefined, after: string): Promise<boolean> => {
    const name = vscode.workspace.asRelativePath(absPath);
    const proposed = await showDiff(docs, absPath, before, after, vscode.l10n.t("{0} ↔ agent's proposed edit", name));
    const accept = vscode.l10n.t('Accept');
    const reject = vscode.l10n.t('Reject');
    // Modal: a toast can be missed or hidden, and an unanswered review would hold the agent's request forever.
    const pick = await vscode.window.showInformationMessage(
      vscode.l10n.t('The agent wants to write {0}. Apply this edit?', name),
      { modal: true, detail: vscode.l10n.t('The diff editor behind this dialog shows the change.') },
      accept,
      reject,
    );
    await closeDiffsShowing(proposed);
    return pick === accept;
  };
}
