/**
 * Setting a session's model by its id or name, whichever way the agent offers models: a config option of
 * category `model` (ACP's session config options: codex, claude-agent) or the model list (`session/set_model`:
 * opencode, gemini). A model the agent does not offer is an error naming those it does.
 */
import type { AgentSession } from './agentSession';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The values (and names) a select config option offers, groups flattened. */
function choices(option: Record<string, unknown>): Array<{ value: string; name: string }> {
  const out: Array<{ value: string; name: string }> = [];
  const add = (v: unknown) => {
    if (isRecord(v) && typeof v.value === 'string') out.push({ value: v.value, name: typeof v.name === 'string' ? v.name : v.value });
  };
  for (const item of Array.isArray(option.options) ? option.options : []) {
    if (isRecord(item) && Array.isArray(item.options)) for (const inner of item.options) add(inner);
    else add(item);
  }
  return out;
}

export async function chooseModel(session: AgentSession, wanted: string): Promise<void> {
  const m = session.model;
  const option = m.configOptions.find((o): o is Record<string, unknown> => isRecord(o) && o.category === 'model' && typeof o.id === 'string');
  if (option) {
    const offered = choices(option);
    const hit = offered.find((c) => c.value === wanted) ?? offered.find((c) => c.name === wanted);
    if (!hit) throw new Error(`the agent offers no model "${wanted}" (offered: ${offered.map((c) => c.value).join(', ') || 'none'})`);
    if (option.currentValue !== hit.value) await session.setConfigOption(option.id as string, hit.value);
    return;
  }
  const list = m.models?.availableModels ?? [];
  const hit = list.find((x) => x.modelId === wanted) ?? list.find((x) => x.name === wanted);
  if (!hit) throw new Error(`the agent offers no model "${wanted}" (offered: ${list.map((x) => x.modelId).join(', ') || 'none'})`);
  if (m.models?.currentModelId !== hit.modelId) await session.setModel(hit.modelId);
}
