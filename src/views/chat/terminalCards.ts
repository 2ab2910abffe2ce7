import type { ToolCallEntity } from '../../session/sessionModel';
import { metaTerminalId, type TerminalChange, type TerminalView } from '../../session/terminalFeed';
import type { TerminalCardContent } from '../../shared/chatProtocol';

/** The agent's terminals as the chat needs them (src/host/vscode/agentTerminals.ts). */
export interface TerminalSource {
  view(id: string): TerminalView | undefined;
  onChange(listener: (change: TerminalChange) => void): () => void;
  /** Shows it in a VS Code terminal; false when it is gone. */
  show(id: string): boolean;
}

/**
 * A tool call's card as the page gets it: each `{type: "terminal"}` content item with that terminal's command,
 * output, exit and release; a call whose agent ran its own shell (`_meta.terminal_*`) gets one such item. Remembers
 * which call shows which terminal, so a change of the terminal re-posts that call.
 */
export class TerminalCards {
  private readonly owners = new Map<string, string>();
  private readonly unsubscribe: () => void;

  /** `onCard`: the tool call `id` shows a terminal that changed (output, exit, release). */
  constructor(
    private readonly source: TerminalSource | undefined,
    onCard: (id: string) => void,
  ) {
    this.unsubscribe =
      source?.onChange(({ id }) => {
        const owner = this.owners.get(id);
        if (owner) onCard(owner);
      }) ?? (() => undefined);
  }

  /** "Show in Terminal" on a card; false when the terminal is gone. */
  show(id: string): boolean {
    return this.source?.show(id) ?? false;
  }

  dispose(): void {
    this.unsubscribe();
  }

  withTerminals(call: ToolCallEntity): ToolCallEntity {
    if (!this.source) return call;
    let changed = false;
    // An agent's own shell may also name its terminal in the content (claude: the tool use id, unprefixed).
    const meta = metaTerminalId(call);
    const ended = call.status !== 'pending' && call.status !== 'in_progress';
    const content = call.content.map((c) => {
      const id = terminalIdOf(c);
      const card = this.card(meta && id === meta.slice(5) ? meta : id, call.id, ended);
      if (card) changed = true;
      return card ?? c;
    });
    const card = meta && !content.some((c) => terminalIdOf(c) === meta) ? this.card(meta, call.id, ended) : undefined;
    if (card) content.push(card);
    return changed || card ? { ...call, content } : call;
  }

  /**
   * Terminal `id` as call `callId`'s card shows it (`ended`: the call is over, so a terminal without an exit no longer
   * runs); undefined for one no longer known (the item stays as the agent sent it).
   */
  private card(id: string | undefined, callId: string, ended: boolean): TerminalCardContent | undefined {
    if (id === undefined) return undefined;
    this.owners.set(id, callId);
    const view = this.source?.view(id);
    if (!view) return undefined;
    const { commandLine, output, dropped, released, exit } = view;
    return { type: 'terminal', terminalId: id, ...(commandLine ? { commandLine } : {}), output, dropped, released, ...(exit ? { exit } : {}), ...(ended ? { ended } : {}) };
  }
}

function terminalIdOf(c: unknown): string | undefined {
  const o = c as { type?: unknown; terminalId?: unknown } | null;
  return o?.type === 'terminal' && typeof o.terminalId === 'string' ? o.terminalId : undefined;
}
