import type { ContentPart, PlanEntry, Role, SessionModel, ToolCallEntity, Usage } from '../session/sessionModel';
import type { SessionUpdate, ToolCallUpdate } from './types';

const CHUNK_ROLES: Record<string, Role> = {
  user_message_chunk: 'user',
  agent_message_chunk: 'agent',
  agent_thought_chunk: 'thought',
};

/** Applies one ACP `session/update` to the session model. Unknown kinds are ignored. */
export function applyAcpUpdate(model: SessionModel, update: SessionUpdate): void {
  const u = update as SessionUpdate & Record<string, unknown>;
  const role = CHUNK_ROLES[u.sessionUpdate];
  if (role) {
    const chunk = u as { content?: ContentPart; messageId?: string | null };
    if (chunk.content && typeof chunk.content === 'object') model.appendChunk(role, chunk.content, chunk.messageId);
    return;
  }
  switch (update.sessionUpdate) {
    case 'tool_call':
    case 'tool_call_update':
      applyToolCall(model, update);
      return;
    case 'plan':
      model.setPlan(update.entries as PlanEntry[]);
      return;
    case 'available_commands_update':
      model.setCommands(update.availableCommands.map((c) => ({ name: c.name, description: c.description, input: c.input })));
      return;
    case 'current_mode_update':
      model.setCurrentMode(update.currentModeId);
      return;
    case 'config_option_update':
      model.setConfigOptions(update.configOptions);
      return;
    case 'session_info_update':
      model.setInfo({ title: update.title ?? null, updatedAt: update.updatedAt ?? null });
      return;
    case 'usage_update':
      model.setUsage({ used: update.used, size: update.size, cost: update.cost ?? null } as Usage);
      return;
    case 'notice': {
      const severity = update.severity === 'error' ? 'error' : update.severity === 'warning' ? 'warning' : 'info';
      model.notice(severity, update.title, update.description ?? undefined);
      return;
    }
    default:
      return;
  }
}

/**
 * Merges an ACP tool call (a `tool_call`/`tool_call_update`, or the `toolCall` of a permission request)
 * into the model; only the fields it carries change.
 */
export function applyToolCall(model: SessionModel, update: ToolCallUpdate): ToolCallEntity {
  const patch: Partial<ToolCallEntity> & { id: string } = { id: update.toolCallId };
  if (update.title != null) patch.title = update.title;
  if (update.kind != null) patch.toolKind = update.kind;
  if (update.status != null) patch.status = update.status;
  if (update.content != null) patch.content = update.content;
  if (update.locations != null) patch.locations = update.locations;
  if (update.rawInput !== undefined) patch.rawInput = update.rawInput;
  if (update.rawOutput !== undefined) patch.rawOutput = update.rawOutput;
  if (update._meta) patch.meta = { ...model.toolCall(update.toolCallId)?.meta, ...update._meta };
  return model.upsertToolCall(patch);
}
