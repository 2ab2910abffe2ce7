import type { PermissionOption, ToolCallEntity } from './sessionModel';

export interface PermissionRequestInfo {
  sessionId: string;
  toolCall: ToolCallEntity;
  options: PermissionOption[];
}

export type PermissionDecision =
  | { outcome: 'selected'; optionId: string; by: 'user' | 'policy' | 'rule'; /** The rule that answered (by: 'rule'). */ rule?: string }
  | { outcome: 'cancelled'; by: 'user' | 'timeout' | 'cancel' | 'policy' };

/** Decides one permission request; the signal aborts when the turn is cancelled. */
export type PermissionDecider = (request: PermissionRequestInfo, signal: AbortSignal) => Promise<PermissionDecision>;

/** Tool kinds that only look: allowed by `approve-reads`. */
export const READ_ONLY_KINDS = new Set(['read', 'search', 'think', 'fetch']);

/** The agent's own option of the wanted sort (never an invented id); undefined when it offers none. */
export function pickOption(options: PermissionOption[], want: 'allow' | 'reject'): PermissionOption | undefined {
  const once = options.find((o) => o.kind === `${want}_once`);
  return once ?? options.find((o) => o.kind.startsWith(want));
}

export type PolicyName = 'approve-all' | 'approve-reads' | 'deny-all';

/** Headless policies for the CLI and tests. */
export function policyDecider(policy: PolicyName): PermissionDecider {
  return async ({ toolCall, options }) => {
    const allow = policy === 'approve-all' || (policy === 'approve-reads' && READ_ONLY_KINDS.has(toolCall.toolKind));
    const option = pickOption(options, allow ? 'allow' : 'reject');
    return option ? { outcome: 'selected', optionId: option.optionId, by: 'policy' } : { outcome: 'cancelled', by: 'policy' };
  };
}
