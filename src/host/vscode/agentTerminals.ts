import * as vscode from 'vscode';
import type { TerminalEvents, TerminalExitStatus as ExitStatus } from '../../session/sessionHost';
import type { SessionEvent, ToolCallEntity } from '../../session/sessionModel';

/** One read-only VS Code terminal (a pseudoterminal) showing a command the agent runs. */
class AgentTerminal {
  private readonly writer = new vscode.EventEmitter<string>();
  private readonly closer = new vscode.EventEmitter<number | void>();
  private buffered: string[] = [];
  private opened = false;
  readonly terminal: vscode.Terminal;

  constructor(name: string, commandLine: string | undefined) {
    const pty: vscode.Pseudoterminal = {
      onDidWrite: this.writer.event,
      onDidClose: this.closer.event,
      open: () => {
        this.opened = true;
        for (const b of this.buffered.splice(0)) this.writer.fire(b);
      },
      close: () => undefined,
    };
    this.terminal = vscode.window.createTerminal({ name, pty, isTransient: true, iconPath: new vscode.ThemeIcon('hubot') });
    if (commandLine) this.write(`\x1b[2m$ ${commandLine}\x1b[0m\n`);
  }

  write(data: string): void {
    const text = data.replace(/\r?\n/g, '\r\n');
    if (this.opened) this.writer.fire(text);
    else this.buffered.push(text);
  }

  exit(status: ExitStatus | { exitCode?: number | null; signal?: string | null }): void {
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
 * Shows agent commands in VS Code terminals: ACP `terminal/*` commands (TerminalService events) and shells
 * the agent runs itself, reported through `_meta.terminal_info / terminal_output / terminal_exit`.
 */
export class AgentTerminals implements vscode.Disposable {
  private readonly terms = new Map<string, AgentTerminal>();
  /** The last `_meta.terminal_output` object seen per tool call: meta is merged, so repeats are not new output. */
  private readonly seenOutput = new WeakSet<object>();
  private readonly seenExit = new WeakSet<object>();

  /** Events to pass as `terminalEvents` of a session. */
  readonly events: TerminalEvents = {
    onCreate: (id, commandLine) => this.open(id, commandLine),
    onOutput: (id, data) => this.terms.get(id)?.write(data),
    onExit: (id, status) => this.terms.get(id)?.exit(status),
  };

  /** Feed every session event; tool calls with terminal meta get a terminal. */
  onSessionEvent(event: SessionEvent): void {
    if (event.type !== 'entity' || event.entity.kind !== 'tool_call') return;
    this.fromMeta(event.entity);
  }

  terminal(id: string): vscode.Terminal | undefined {
    return this.terms.get(id)?.terminal;
  }

  private open(id: string, commandLine: string | undefined): AgentTerminal {
    let t = this.terms.get(id);
    if (!t) {
      t = new AgentTerminal(vscode.l10n.t('Agent: {0}', (commandLine ?? id).slice(0, 40)), commandLine);
      this.terms.set(id, t);
    }
    return t;
  }

  private fromMeta(call: ToolCallEntity): void {
    const meta = call.meta;
    if (!meta) return;
    const info = meta.terminal_info as { terminal_id?: string } | undefined;
    const output = meta.terminal_output as { terminal_id?: string; data?: string } | undefined;
    const exit = meta.terminal_exit as { terminal_id?: string; exit_code?: number | null; signal?: string | null } | undefined;
    const id = info?.terminal_id ?? output?.terminal_id ?? exit?.terminal_id;
    if (!id) return;
    const command = typeof (call.rawInput as { command?: unknown } | undefined)?.command === 'string' ? String((call.rawInput as { command: string }).command) : call.title;
    const t = this.open(`meta:${id}`, command);
    if (output && typeof output === 'object' && !this.seenOutput.has(output)) {
      this.seenOutput.add(output);
      if (typeof output.data === 'string') t.write(output.data);
    }
    if (exit && typeof exit === 'object' && !this.seenExit.has(exit)) {
      this.seenExit.add(exit);
      t.exit({ exitCode: exit.exit_code ?? null, signal: exit.signal ?? null });
    }
  }

  dispose(): void {
    for (const t of this.terms.values()) t.dispose();
    this.terms.clear();
  }
}
