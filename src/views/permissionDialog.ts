import * as vscode from 'vscode';
import type { PermissionDecider, PermissionRequestInfo } from '../session/permissions';

/** Formats a tool call's rawInput as the few lines a person needs to decide. */
export function summarizeRawInput(rawInput: unknown): string {
  if (rawInput == null) return '';
  if (typeof rawInput !== 'object') return String(rawInput);
  const o = rawInput as Record<string, unknown>;
  const command = o.command ?? o.cmd;
  if (command !== undefined) return `$ ${Array.isArray(command) ? command.join(' ') : String(command)}`;
  const file = o.file_path ?? o.filePath ?? o.filepath ?? o.path ?? o.abspath;
  const lines: string[] = [];
  if (file !== undefined) lines.push(String(file));
  const content = o.diff ?? o.content ?? o.new_string ?? o.newString ?? o.newText ?? o.patch;
  if (typeof content === 'string') lines.push(content.length > 600 ? `${content.slice(0, 600)}…` : content);
  if (lines.length) return lines.join('\n');
  const json = JSON.stringify(rawInput, null, 1);
  return json.length > 600 ? `${json.slice(0, 600)}…` : json;
}

/** Asks in a modal dialog with the agent's options verbatim; closing it answers cancelled. */
export const modalPermissionDecider: PermissionDecider = async (request: PermissionRequestInfo) => {
  const { toolCall, options } = request;
  const detail = [
    vscode.l10n.t('Kind: {0}', toolCall.toolKind),
    summarizeRawInput(toolCall.rawInput),
  ]
    .filter(Boolean)
    .join('\n\n');
  const title = vscode.l10n.t('The agent wants to run: {0}', toolCall.title || toolCall.id);
  const picked = await vscode.window.showWarningMessage(
    title,
    { modal: true, detail },
    ...options.map((o) => ({ title: o.name, optionId: o.optionId })),
  );
  return picked ? { outcome: 'selected', optionId: picked.optionId, by: 'user' } : { outcome: 'cancelled', by: 'user' };
};
