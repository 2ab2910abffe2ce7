// Plain data the chat page reads too (through src/shared): no imports, nothing Node-only.

/** The agent process as the editor shows it. */
export type AgentState = 'stopped' | 'starting' | 'ready' | 'busy' | 'error';

/**
 * Agent state beyond the shared model that the chat shows as is (pi RPC: queue, modes, widgets, status,
 * stats, composer text). Plain data: a typed projection the adapter builds, never parsed by views.
 */
export interface AgentExtras {
  /** Messages waiting at the agent. */
  queued: number;
  steering: string[];
  followUp: string[];
  steeringMode?: string;
  followUpMode?: string;
  interruptMode?: string;
  thinkingLevel?: string;
  autoCompaction?: boolean;
  autoRetry?: boolean;
  /** Extension widgets by key (plain text lines). */
  widgets: { key: string; lines: string[] }[];
  /** Extension status texts. */
  status: string[];
  stats?: { totalTokens?: number; inputTokens?: number; outputTokens?: number; cost?: number; messages?: number };
  /** Text the agent put into the composer (`set_editor_text`), the last one. */
  editorText?: string;
}
