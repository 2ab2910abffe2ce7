import * as vscode from 'vscode';
import type { PermissionPresenter } from '../host/permissionBroker';
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

/** The first `{type:"diff", path, oldText, newText}` of a tool call's content, if any. */
export function diffOf(request: PermissionRequestInfo): { path: string; oldText: string | null; newText: string } | undefined {
  for (const c of request.toolCall.content) {
    const d = c as { type?: unknown; path?: unknown; oldText?: unknown; newText?: unknown };
    if (d.type === 'diff' && typeof d.path === 'string' && typeof d.newText === 'string') {
      return { path: d.path, oldText: typeof d.oldText === 'string' ? d.oldText : null, newText: d.newText };
    }
  }
  return undefined;
}

/**
 * A modal dialog with the agent's options verbatim and in order; closing it answers cancelled. When the
 * request carries a diff, "Show Diff" comes first: it opens the diff editor, then the dialog asks again.
 */
export function modalPermissionPresenter(openDiff: (diff: NonNullable<ReturnType<typeof diffOf>>) => Promise<void>): PermissionPresenter {
  return async ({ request }) => {
    const { toolCall, options } = request;
    const detail = [vscode.l10n.t('Kind: {0}', toolCall.toolKind), summarizeRawInput(toolCall.rawInput)].filter(Boolean).join('\n\n');
    const title = vscode.l10n.t('The agent wants to run: {0}', toolCall.title || toolCall.id);
    const diff = diffOf(request);
    const showDiff = { title: vscode.l10n.t('Show Diff'), optionId: undefined as string | undefined };
    const items = options.map((o) => ({ title: o.name, optionId: o.optionId as string | undefined }));
    for (;;) {
      const picked = await vscode.window.showWarningMessage(title, { modal: true, detail }, ...(diff ? [showDiff] : []), ...items);
      if (picked === showDiff && diff) {
        await openDiff(diff);
        continue;
      }
      return picked?.optionId;
    }
  };
}

/** Asks in a modal dialog with the agent's options verbatim; closing it answers cancelled. */
export const modalPermissionDecider: PermissionDecider = async (request: PermissionRequestInfo, signal) => {
  const optionId = await modalPermissionPresenter(async () => undefined)({ id: '', request, receivedAt: Date.now() }, signal);
  return optionId ? { outcome: 'selected', optionId, by: 'user' } : { outcome: 'cancelled', by: 'user' };
};
