import * as vscode from 'vscode';

/**
 * Asks before the agent writes a protected file (git config or hooks, editor settings, CI workflows…):
 * always a modal, whatever rule or permission mode is active. Closing it denies.
 */
export async function confirmProtectedWrite(absPath: string, pattern: string): Promise<boolean> {
  const allow = vscode.l10n.t('Allow this write');
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t('The agent wants to write a protected file: {0}', vscode.workspace.asRelativePath(absPath)),
    {
      modal: true,
      detail: vscode.l10n.t('Files matching "{0}" can make the editor, git or CI run commands later. Allow only if you asked for this change.\n\n{1}', pattern, absPath),
    },
    allow,
  );
  return pick === allow;
}
