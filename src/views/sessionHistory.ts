/**
 * "Atrium: Session History…": the sessions of this workspace in a quick pick — the running agent's own
 * list (ACP `session/list`) merged with Atrium's local index (shared with the CLI) — newest first. Enter
 * opens one in the chat (load, resume or new, said in the transcript); the item buttons rename, export as
 * Markdown, and delete (by the agent too when it can, after a modal confirmation).
 */
import * as fs from 'node:fs/promises';
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import type { AgentManager } from '../manager/agentManager';
import type { AgentSessionInfo } from '../session/agentSession';
import { exportFileName, transcriptMarkdown, type SessionStore } from '../session/sessionStore';
import type { TimelineEntity } from '../session/sessionModel';

export interface HistoryEntry {
  sessionId: string;
  title: string;
  agent: string;
  cwd: string;
  updatedAt: string;
  /** Listed by the agent itself; false when only the local index knows it. */
  byAgent: boolean;
  firstPrompt?: string;
}

/** The agent's list (for `agent`) and the local index, one entry per session id, newest first. */
export function mergeHistory(fromAgent: AgentSessionInfo[] | undefined, agent: string | undefined, store: SessionStore, cwd: string): HistoryEntry[] {
  const byId = new Map<string, HistoryEntry>();
  for (const r of store.list({ cwd })) {
    byId.set(r.sessionId, { sessionId: r.sessionId, title: r.title, agent: r.agent, cwd: r.cwd, updatedAt: r.updatedAt, byAgent: false, ...(r.firstPrompt ? { firstPrompt: r.firstPrompt } : {}) });
  }
  const hidden = store.hidden();
  for (const s of fromAgent ?? []) {
    if (hidden.has(s.sessionId)) continue;
    const known = byId.get(s.sessionId);
    byId.set(s.sessionId, {
      sessionId: s.sessionId,
      title: known?.title && known.title !== '(untitled)' ? known.title : (s.title ?? known?.title ?? '(untitled)'),
      agent: known?.agent ?? agent ?? '?',
      cwd: s.cwd,
      updatedAt: [s.updatedAt ?? '', known?.updatedAt ?? ''].sort().at(-1)!,
      byAgent: true,
      ...(known?.firstPrompt ? { firstPrompt: known.firstPrompt } : {}),
    });
  }
  return [...byId.values()].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

function ago(iso: string): string {
  const ms = Date.now() - Date.parse(iso);
  if (!Number.isFinite(ms)) return '';
  const min = Math.round(ms / 60_000);
  if (min < 1) return vscode.l10n.t('just now');
  if (min < 60) return vscode.l10n.t('{0} min ago', min);
  const h = Math.round(min / 60);
  if (h < 48) return vscode.l10n.t('{0} h ago', h);
  return vscode.l10n.t('{0} days ago', Math.round(h / 24));
}

type Item = vscode.QuickPickItem & { entry: HistoryEntry };

/** A session to open from history: its agent, id, and title (none when it has no title of its own). */
export interface HistorySession {
  agent: string;
  sessionId: string;
  title?: string;
}

export interface HistoryDeps {
  manager: AgentManager;
  store: () => SessionStore;
  log: vscode.LogOutputChannel;
  /** Opens the session in the chat (the chat controller's openFromHistory); its tab takes the session's title. */
  open: (session: HistorySession, copy: TimelineEntity[] | undefined) => Promise<unknown>;
}

const RENAME: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: vscode.l10n.t('Rename') };
const EXPORT: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('export'), tooltip: vscode.l10n.t('Export as Markdown') };
const DELETE: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: vscode.l10n.t('Delete') };

type Choice = { kind: 'open'; entry: HistoryEntry } | { kind: 'button'; entry: HistoryEntry; button: vscode.QuickInputButton };

/** One showing of the list: resolves with what was chosen, or undefined when it was dismissed. */
async function pickOnce(load: () => Promise<HistoryEntry[]>, currentId: string | undefined): Promise<Choice | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = vscode.l10n.t('Atrium: Session History');
  qp.placeholder = vscode.l10n.t('Open a session of this folder (Enter); rename, export or delete with the buttons');
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  let choice: Choice | undefined;
  const closed = new Promise<void>((resolve) => qp.onDidHide(() => resolve()));
  qp.onDidTriggerItemButton(({ item, button }) => {
    choice = { kind: 'button', entry: item.entry, button };
    qp.hide();
  });
  qp.onDidAccept(() => {
    const entry = qp.selectedItems[0]?.entry;
    if (!entry) return;
    choice = { kind: 'open', entry };
    qp.hide();
  });
  qp.show();
  const entries = await load();
  qp.items = entries.map((entry) => ({
    entry,
    label: entry.title,
    description: [entry.agent, ago(entry.updatedAt), entry.sessionId === currentId ? vscode.l10n.t('open now') : ''].filter(Boolean).join(' · '),
    detail: `${entry.byAgent ? vscode.l10n.t('kept by the agent') : vscode.l10n.t('Atrium copy only')} · ${entry.sessionId}`,
    buttons: [RENAME, EXPORT, DELETE],
  }));
  if (!entries.length) qp.placeholder = vscode.l10n.t('No sessions in this folder yet');
  qp.busy = false;
  await closed;
  qp.dispose();
  return choice;
}

/**
 * Shows the history; a button's action (rename, export, delete) runs with its own dialog, then the list
 * comes back. Resolves when it is dismissed, or once the chosen session is open.
 */
export async function showSessionHistory(deps: HistoryDeps): Promise<void> {
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!cwd) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Atrium: open a folder to see its sessions.'));
    return;
  }
  const store = deps.store();
  const current = deps.manager.current;
  const load = async (): Promise<HistoryEntry[]> => {
    let fromAgent: AgentSessionInfo[] | undefined;
    try {
      fromAgent = await current?.directory?.list(cwd);
    } catch (error) {
      deps.log.warn(`session/list failed: ${(error as Error).message}`);
    }
    return mergeHistory(fromAgent, deps.manager.agentName, store, cwd);
  };
  for (;;) {
    const choice = await pickOnce(load, current?.sessionId);
    if (!choice) return;
    const e = choice.entry;
    if (choice.kind === 'open') {
      try {
        await deps.open({ agent: e.agent, sessionId: e.sessionId, ...(e.title !== '(untitled)' ? { title: e.title } : {}) }, store.transcript(e.sessionId));
      } catch (error) {
        void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('Atrium: could not open the session: {0}', (error as Error).message)));
      }
      return;
    }
    try {
      if (choice.button === RENAME) {
        const title = await vscode.window.showInputBox({ title: vscode.l10n.t('Rename session'), value: e.title, ignoreFocusOut: true });
        if (title?.trim() && !store.rename(e.sessionId, title)) store.upsert({ sessionId: e.sessionId, agent: e.agent, cwd: e.cwd, title: title.trim() });
      } else if (choice.button === EXPORT) {
        const live = current?.sessionId === e.sessionId ? current.model.timeline() : [];
        const entities = [...(store.transcript(e.sessionId) ?? []), ...live];
        const target = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.joinPath(vscode.Uri.file(cwd), exportFileName(e.title)), filters: { Markdown: ['md'] } });
        if (target) {
          await fs.writeFile(target.fsPath, transcriptMarkdown(e, entities));
          deps.log.info(`Session ${e.sessionId} exported to ${target.fsPath}`);
          // Said where it went (the list comes back over the editor): Open shows the file.
          const open = vscode.l10n.t('Open');
          void vscode.window.showInformationMessage(vscode.l10n.t('Session "{0}" exported to {1}', e.title, target.fsPath), open).then(async (choice) => {
            if (choice === open) await vscode.window.showTextDocument(target);
          });
        }
      } else if (choice.button === DELETE) {
        const yes = vscode.l10n.t('Delete');
        const sure = await vscode.window.showWarningMessage(
          vscode.l10n.t('Delete the session "{0}"?', e.title),
          { modal: true, detail: e.byAgent ? vscode.l10n.t('The agent deletes it too when it can; otherwise only Atrium forgets it.') : vscode.l10n.t('Atrium forgets its copy.') },
          yes,
        );
        if (sure === yes) {
          const byAgent = e.byAgent && e.agent === deps.manager.agentName ? await current?.directory?.delete(e.sessionId) : false;
          store.delete(e.sessionId, e.byAgent && !byAgent);
          deps.log.info(`Session ${e.sessionId} deleted${byAgent ? ' by the agent and' : ''} from the local index`);
        }
      }
    } catch (error) {
      void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('Atrium: {0}', (error as Error).message)));
    }
  }
}
