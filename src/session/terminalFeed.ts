/**
 * What the chat's tool cards show of the agent's terminals: each one's command, the end of its output, its exit
 * and whether the agent released it. Two sources: the host's terminal service (ACP `terminal/*`, through
 * `events`), and agents that run their own shell and report it in a tool call's `_meta.terminal_info /
 * terminal_output / terminal_exit` (claude, codex), whose terminals are named `meta:<their id>`. Bounded: the last
 * CARD_CHARS characters of each terminal, the KEPT newest terminals.
 */
import { Listeners } from '../core/listeners';
import { ownCopy } from '../core/ownCopy';
import type { TerminalEvents, TerminalExitStatus } from './sessionHost';
import type { ToolCallEntity } from './sessionModel';

export const CARD_CHARS = 64 * 1024;
export const KEPT = 64;

export interface TerminalView {
  commandLine?: string;
  /** The end of the output (at most CARD_CHARS characters). */
  output: string;
  /** Characters of output before `output` that are no longer kept. */
  dropped: number;
  exit?: TerminalExitStatus;
  released: boolean;
}

/** A change of one terminal: `data` is output just written (all of it, before the bound). */
export interface TerminalChange {
  id: string;
  data?: string;
}

/** The terminal an agent's own shell reports in a tool call's `_meta.terminal_*`, named `meta:<its id>`; undefined for none. */
export function metaTerminalId(call: ToolCallEntity): string | undefined {
  const m = call.meta;
  const raw =
    (m?.terminal_info as { terminal_id?: unknown } | undefined)?.terminal_id ??
    (m?.terminal_output as { terminal_id?: unknown } | undefined)?.terminal_id ??
    (m?.terminal_exit as { terminal_id?: unknown } | undefined)?.terminal_id;
  return typeof raw === 'string' && raw ? `meta:${raw}` : undefined;
}

export class TerminalFeed {
  private readonly terms = new Map<string, TerminalView>();
  private readonly changes = new Listeners<TerminalChange>();
  /** The last `_meta.terminal_output` / `terminal_exit` object seen per tool call: meta is merged, so a repeat is not new. */
  private readonly seen = new WeakSet<object>();

  /** Events for the host's terminal service. */
  readonly events: Required<TerminalEvents> = {
    onCreate: (id, commandLine) => this.open(id, commandLine),
    onOutput: (id, data) => this.write(id, data),
    onExit: (id, status) => this.exit(id, status),
    onRelease: (id) => {
      const t = this.terms.get(id);
      if (!t || t.released) return;
      t.released = true;
      this.changes.fire({ id });
    },
  };

  view(id: string): TerminalView | undefined {
    return this.terms.get(id);
  }

  onChange(listener: (change: TerminalChange) => void): () => void {
    return this.changes.add(listener);
  }

  /** A tool call's `_meta.terminal_*` (an agent's own shell): new output and exit recorded; the terminal it names, if any. */
  fromToolCall(call: ToolCallEntity): string | undefined {
    const id = metaTerminalId(call);
    if (!id) return undefined;
    const output = call.meta?.terminal_output as { data?: unknown } | undefined;
    const exit = call.meta?.terminal_exit as { exit_code?: number | null; signal?: string | null } | undefined;
    const command = (call.rawInput as { command?: unknown } | undefined)?.command;
    const known = this.terms.get(id);
    if (!known) this.open(id, typeof command === 'string' ? command : call.title);
    // The command may come after the call's first report (its input streamed): then it names the terminal.
    else if (typeof command === 'string' && command && known.commandLine !== command) {
      known.commandLine = command;
      this.changes.fire({ id });
    }
    if (output && typeof output === 'object' && !this.seen.has(output)) {
      this.seen.add(output);
      if (typeof output.data === 'string') this.write(id, output.data);
    }
    if (exit && typeof exit === 'object' && !this.seen.has(exit)) {
      this.seen.add(exit);
      this.exit(id, { exitCode: exit.exit_code ?? null, signal: exit.signal ?? null });
    }
    return id;
  }

  private open(id: string, commandLine: string | undefined): void {
    if (this.terms.has(id)) return;
    this.terms.set(id, { ...(commandLine ? { commandLine } : {}), output: '', dropped: 0, released: false });
    // The oldest go first (Map keeps insertion order).
    for (const old of this.terms.keys()) {
      if (this.terms.size <= KEPT) break;
      this.terms.delete(old);
    }
    this.changes.fire({ id });
  }

  private write(id: string, data: string): void {
    const t = this.terms.get(id);
    if (!t || !data) return;
    const all = t.output + data;
    const cut = Math.max(0, all.length - CARD_CHARS);
    // (A slice would keep the whole string alive.)
    t.output = cut ? ownCopy(all.slice(cut)) : all;
    t.dropped += cut;
    this.changes.fire({ id, data });
  }

  private exit(id: string, status: TerminalExitStatus): void {
    const t = this.terms.get(id);
    if (!t) return;
    t.exit = status;
    this.changes.fire({ id });
  }
}
