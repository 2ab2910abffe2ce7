import * as vscode from 'vscode';
import type { TerminalEvents, TerminalExitStatus as ExitStatus } from '../../session/sessionHost';
import type { SessionEvent } from '../../session/sessionModel';
import { type TerminalChange, TerminalFeed, type TerminalView } from '../../session/terminalFeed';

/** One read-only VS Code terminal (a pseudoterminal) showing a command the agent runs. */
class AgentTerminal {
  private readonly writer = new vscode.EventEmitter<string>();
  private readonly closer = new vscode.EventEmitter<number | void>();
  private buffered: string[] = [];
  private opened = false;
  exited = false;
  readonly terminal: vscode.Terminal;

  constructor(name: string, onClose: () => void) {
    const pty: vscode.Pseudoterminal = {
      onDidWrite: this.writer.event,
      onDidClose: this.closer.event,
      open: () => {
        this.opened = true;
        for (const b of this.buffered.splice(0)) this.writer.fire(b);
      },
      close: onClose,
    };
    this.terminal = vscode.window.createTerminal({ name, pty, isTransient: true, iconPath: new vscode.ThemeIcon('hubot') });
  }

  write(data: string): void {
    const text = data.replace(/\r?\n/g, '\r\n');
    if (this.opened) this.writer.fire(text);
    else this.buffered.push(text);
  }

  exit(status: ExitStatus): void {
    this.exited = true;
    const what = status.signal ? `signal ${status.signal}` : `exit code ${status.exitCode ?? '?'}`;
    this.write(`\n\x1b[2m[${what}]\x1b[0m\n`);
  }

  dispose(): void {
    this.terminal.dispose();
    this.writer.dispose();
    this.closer.dispose();
  }
}

/**
 * The agent's terminals in VS Code: what the tool cards show comes from `feed` (ACP `terminal/*` commands run by
 * the terminal service, and shells the agent runs itself, reported through `_meta.terminal_*`). A VS Code terminal
 * is made only when the user asks ("Show in Terminal" on a card), with the output the card holds, then follows the
 * command live; it goes when the agent releases the terminal (or the user closes it).
 */
export class AgentTerminals implements vscode.Disposable {
  readonly feed = new TerminalFeed();
  private readonly shown = new Map<string, AgentTerminal>();
  private readonly unsubscribe: () => void;

  constructor() {
    this.unsubscribe = this.feed.onChange(({ id, data }) => {
      const t = this.shown.get(id);
      const view = this.feed.view(id);
      if (!t) return;
      if (data) t.write(data);
      if (!view || view.released) this.close(id);
      else if (view.exit && !t.exited) t.exit(view.exit);
    });
  }

  /** Events to pass as `terminalEvents` of a session's terminal service. */
  get events(): TerminalEvents {
    return this.feed.events;
  }

  /** Feed every session event; tool calls with terminal meta are recorded. */
  onSessionEvent(event: SessionEvent): void {
    if (event.type === 'entity' && event.entity.kind === 'tool_call') this.feed.fromToolCall(event.entity);
  }

  view(id: string): TerminalView | undefined {
    return this.feed.view(id);
  }

  onChange(listener: (change: TerminalChange) => void): () => void {
    return this.feed.onChange(listener);
  }

  /** Shows the terminal `id` in VS Code (made now if need be); false when there is no such terminal or it was released. */
  show(id: string): boolean {
    const view = this.feed.view(id);
    if (!view || view.released) return false;
    let t = this.shown.get(id);
    if (!t) {
      t = new AgentTerminal(vscode.l10n.t('Agent: {0}', (view.commandLine ?? id).slice(0, 40)), () => this.shown.delete(id));
      this.shown.set(id, t);
      if (view.commandLine) t.write(`\x1b[2m$ ${view.commandLine}\x1b[0m\n`);
      if (view.dropped) t.write(`\x1b[2m[${vscode.l10n.t('{0} earlier characters not kept', view.dropped)}]\x1b[0m\n`);
      t.write(view.output);
      if (view.exit) t.exit(view.exit);
    }
    t.terminal.show();
    return true;
  }

  /** The VS Code terminal shown for `id`, if any. */
  terminal(id: string): vscode.Terminal | undefined {
    return this.shown.get(id)?.terminal;
  }

  private close(id: string): void {
    this.shown.get(id)?.dispose();
    this.shown.delete(id);
  }

  dispose(): void {
    this.unsubscribe();
    for (const t of this.shown.values()) t.dispose();
    this.shown.clear();
  }
}
