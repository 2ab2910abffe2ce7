import * as vscode from 'vscode';
import { restrictedModeMessage } from '../manager/agentManager';

/** The command that shows VS Code's workspace trust editor (where the person can trust the folder). */
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';

/**
 * In Restricted Mode: says why nothing runs, with a button that opens the trust editor, and returns true
 * (the caller stops). In a trusted workspace: false.
 */
export function refuseInRestrictedMode(): boolean {
  if (vscode.workspace.isTrusted) return false;
  const manage = vscode.l10n.t('Manage Workspace Trust');
  void vscode.window.showWarningMessage(`Atrium: ${restrictedModeMessage()}`, manage).then((pick) => {
    if (pick === manage) void vscode.commands.executeCommand(MANAGE_TRUST_COMMAND);
  });
  return true;
}
