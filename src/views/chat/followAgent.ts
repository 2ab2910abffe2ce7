import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { AgentManager } from '../../manager/agentManager';
import type { ToolCallEntity } from '../../session/sessionModel';
import { type ContextKeys, registerCommand } from '../commandRegistry';
import { inWorkspace, resolveAgentPath } from './editorActions';

const KEY = 'agentHost.chat.followAgent';
/** A burst of tool calls (ten files read at once) opens the last of them, not ten editors in a row. */
export const FOLLOW_MS = 250;
/** Locations remembered as opened per session (each is opened once); past it the memory starts again. */
const SEEN_MAX = 5000;

/**
 * "Follow Agent" (the chat's title bar, an eye): while on, the files and lines the agent's tool calls name
 * (their `locations`) open in the editor as it works — the active chat tab's session only, each location once,
 * in a preview editor that does not take the focus from the chat, inside the workspace only (a location elsewhere
 * is left to the card's link, which asks first), a file that does not exist yet tried again when its tool call
 * changes. Remembered across windows (off at first).
 */
export class FollowAgent implements vscode.Disposable {
  private readonly seen = new Set<string>();
  private next: { key: string; path: string; line: number | null | undefined } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private offModel: (() => void) | undefined;
  private readonly subs: vscode.Disposable[];

  constructor(
    private readonly manager: AgentManager,
    private readonly state: vscode.Memento,
    private readonly keys: ContextKeys,
    private readonly log: vscode.LogOutputChannel,
  ) {
    keys.set('agentHost.followingAgent', this.on);
    this.subs = [
      registerCommand('agentHost.followAgent', () => this.set(true)),
      registerCommand('agentHost.stopFollowingAgent', () => this.set(false)),
      manager.onDidChangeSession(() => this.watch()),
    ];
    this.watch();
  }

  get on(): boolean {
    return this.state.get<boolean>(KEY, false);
  }

  private async set(on: boolean): Promise<void> {
    await this.state.update(KEY, on);
    this.keys.set('agentHost.followingAgent', on);
    this.log.info(`Follow Agent ${on ? 'on: the files the agent works on open in the editor' : 'off'}`);
  }

  private watch(): void {
    this.offModel?.();
    this.seen.clear();
    this.offModel = this.manager.current?.model.on((e) => {
      if (e.type === 'entity' && e.entity.kind === 'tool_call') this.saw(e.entity);
    });
  }

  private saw(t: ToolCallEntity): void {
    if (!this.on) return;
    for (const l of t.locations) {
      const key = `${t.id}\0${l.path}\0${l.line ?? ''}`;
      if (this.seen.has(key)) continue;
      if (this.seen.size >= SEEN_MAX) this.seen.clear();
      this.seen.add(key);
      this.next = { key, path: l.path, line: l.line };
    }
    if (this.next) this.timer ??= setTimeout(() => void this.open(), FOLLOW_MS);
  }

  private async open(): Promise<void> {
    this.timer = undefined;
    const at = this.next;
    this.next = undefined;
    if (!at || !this.on) return;
    const uri = resolveAgentPath(at.path);
    if (!inWorkspace(uri)) return;
    if (!fs.statSync(uri.fsPath, { throwIfNoEntry: false })?.isFile()) {
      this.seen.delete(at.key); // not written yet: its tool call's next update tries again
      return;
    }
    const pos = new vscode.Position(Math.max(0, (at.line ?? 1) - 1), 0);
    try {
      await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), preview: true, preserveFocus: true });
      this.log.debug(`Follow Agent: opened ${vscode.workspace.asRelativePath(uri)}${at.line ? `:${at.line}` : ''}`);
    } catch (error) {
      this.log.warn(`Follow Agent: could not open ${uri.fsPath}: ${(error as Error).message}`);
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.offModel?.();
    for (const s of this.subs) s.dispose();
  }
}
