import * as vscode from 'vscode';

/**
 * Restricted Mode: the person has not trusted this workspace, and an agent is a program that reads and
 * changes it (and runs commands in it), so Atrium starts none there. Every agent start goes through
 * `requireTrust`; views say the same thing with a way to trust the folder.
 */
export function restrictedModeMessage(): string {
  return vscode.l10n.t('This workspace is in Restricted Mode; Atrium runs agents only in trusted workspaces.');
}

export class RestrictedModeError extends Error {
  override readonly name = 'RestrictedModeError';
  constructor() {
    super(restrictedModeMessage());
  }
}

/** Throws RestrictedModeError unless the workspace is trusted. */
export function requireTrust(): void {
  if (!vscode.workspace.isTrusted) throw new RestrictedModeError();
}
