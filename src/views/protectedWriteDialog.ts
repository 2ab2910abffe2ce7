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

/**
 * Asks before a run's changes to protected files go into the user's files (Apply in the Runs view): a modal naming
 * each file and its pattern. 'others' (the default button) applies the rest alone, 'all' them with the rest; closing
 * it applies nothing.
 */
export async function confirmProtectedApply(runLabel: string, files: ReadonlyArray<{ file: string; pattern: string }>, othersToo: boolean): Promise<'all' | 'others' | undefined> {
  const all = othersToo ? vscode.l10n.t('Apply All, Including Them') : vscode.l10n.t('Apply Them');
  const others = vscode.l10n.t('Apply the Other Files');
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t('{0} changed protected files: {1}', runLabel, files.map((f) => f.file).join(', ')),
    {
      modal: true,
      detail: vscode.l10n.t(
        'Files matching {0} can make the editor, git or CI run commands later. Look at the run’s diff first, and apply them only if you asked for this change.',
        [...new Set(files.map((f) => `"${f.pattern}"`))].join(', '),
      ),
    },
    // The safe choice first: it is the default button (Enter).
    ...(othersToo ? [others, all] : [all]),
  );
  return pick === all ? 'all' : pick === others ? 'others' : undefined;
}
