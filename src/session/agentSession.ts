import type { ExitInfo } from '../core/agentProcess';
import type { ContentPart, SessionModel } from './sessionModel';

/** What a running agent looks like to views, whichever protocol it speaks. */
export interface AgentSession {
  readonly sessionId: string;
  readonly model: SessionModel;
  readonly agentInfo: { name: string; title?: string; version?: string; protocol: 'acp' | 'rpc'; protocolVersion?: number };
  /** `display`: what the transcript shows as the user's message instead of `parts` (e.g. a short label and chips). */
  prompt(parts: ContentPart[], display?: ContentPart[]): Promise<{ stopReason: string }>;
  cancel(): Promise<void>;
  setMode(modeId: string): Promise<void>;
  setConfigOption(configId: string, value: string | boolean): Promise<void>;
  setModel(modelId: string): Promise<void>;
  shutdown(): Promise<ExitInfo>;
  onExit(listener: (exit: ExitInfo) => void): () => void;
  /** 'unresponsive' after a request timed out, 'ok' again at the next answer. */
  onHealth(listener: (health: 'ok' | 'unresponsive', detail: string) => void): () => void;
}

/** How a turn ended, as the CLI's exit code tells it. */
export const TURN_EXIT_CODES: Record<string, number> = {
  end_turn: 0,
  error: 1,
  usage: 2,
  start_failed: 3,
  agent_exited: 4,
  refusal: 5,
  max_tokens: 6,
  max_turn_requests: 6,
  cancelled: 7,
};
