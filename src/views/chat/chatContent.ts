/**
 * Pure helpers of the chat view (no `vscode` import, unit-tested in plain Node): prompt blocks from the
 * composer's text and context chips, and the agent's config options flattened for the header.
 */
import type { ConfigOptionView, ContextChip } from '../../shared/chatProtocol';
import type { ContentPart } from '../../session/sessionModel';

export interface PromptCaps {
  image: boolean;
  embeddedContext: boolean;
}

const LANGUAGE_BY_EXT: Record<string, string> = {
  ts: 'text/x-typescript',
  js: 'text/javascript',
  py: 'text/x-python',
  md: 'text/markdown',
  json: 'application/json',
};

function mimeFor(uri: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(uri.split(/[?#]/)[0] ?? '')?.[1]?.toLowerCase();
  return ext ? LANGUAGE_BY_EXT[ext] : undefined;
}

/**
 * ACP content blocks for one prompt: the text first, then each chip as a `resource_link` (the agent reads the
 * file itself) or, when the agent takes embedded context, a `resource` carrying the text. Images go only to
 * agents that accept them; the caller tells the user when one was dropped.
 */
export function buildPromptParts(text: string, chips: ContextChip[], caps: PromptCaps): { parts: ContentPart[]; dropped: ContextChip[] } {
  const parts: ContentPart[] = [];
  const dropped: ContextChip[] = [];
  if (text.trim()) parts.push({ type: 'text', text });
  for (const chip of chips) {
    switch (chip.kind) {
      case 'file': {
        if (!chip.uri) break;
        const mimeType = mimeFor(chip.uri);
        parts.push({ type: 'resource_link', uri: chip.uri, name: chip.label, ...(mimeType ? { mimeType } : {}) });
        break;
      }
      case 'selection': {
        if (!chip.uri) break;
        const uri = chip.range ? `${chip.uri}#L${chip.range.startLine}-${chip.range.endLine}` : chip.uri;
        const mimeType = mimeFor(chip.uri);
        if (caps.embeddedContext && chip.text !== undefined) {
          parts.push({ type: 'resource', resource: { uri, text: chip.text, ...(mimeType ? { mimeType } : {}) } });
        } else {
          parts.push({ type: 'resource_link', uri, name: chip.label, ...(mimeType ? { mimeType } : {}) });
        }
        break;
      }
      case 'problems': {
        const body = chip.text ?? '';
        if (caps.embeddedContext) parts.push({ type: 'resource', resource: { uri: 'agent-host:/problems', text: body, mimeType: 'text/plain' } });
        else parts.push({ type: 'text', text: `\n\n${chip.label}:\n${body}` });
        break;
      }
      case 'image': {
        if (caps.image && chip.text) parts.push({ type: 'image', data: chip.text, mimeType: chip.mimeType ?? 'image/png' });
        else dropped.push(chip);
        break;
      }
    }
  }
  return { parts, dropped };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The agent's `configOptions` (ACP SessionConfigOption: select with flat or grouped options, or boolean),
 * in the agent's order, with anything malformed left out.
 */
export function normalizeConfigOptions(raw: unknown[]): ConfigOptionView[] {
  const out: ConfigOptionView[] = [];
  for (const o of raw) {
    if (!isRecord(o) || typeof o.id !== 'string') continue;
    const name = typeof o.name === 'string' ? o.name : o.id;
    const base = {
      id: o.id,
      name,
      ...(typeof o.description === 'string' ? { description: o.description } : {}),
      ...(typeof o.category === 'string' ? { category: o.category } : {}),
    };
    if (o.type === 'boolean' || typeof o.currentValue === 'boolean') {
      out.push({ ...base, type: 'boolean', currentValue: o.currentValue === true, options: [] });
      continue;
    }
    const options: ConfigOptionView['options'] = [];
    const add = (v: unknown, group?: string) => {
      if (!isRecord(v) || typeof v.value !== 'string') return;
      options.push({
        value: v.value,
        name: typeof v.name === 'string' ? v.name : v.value,
        ...(typeof v.description === 'string' ? { description: v.description } : {}),
        ...(group ? { group } : {}),
      });
    };
    for (const item of Array.isArray(o.options) ? o.options : []) {
      if (isRecord(item) && Array.isArray(item.options)) {
        const group = typeof item.name === 'string' ? item.name : typeof item.group === 'string' ? item.group : undefined;
        for (const inner of item.options) add(inner, group);
      } else add(item);
    }
    if (!options.length) continue;
    out.push({ ...base, type: 'select', currentValue: typeof o.currentValue === 'string' ? o.currentValue : options[0]!.value, options });
  }
  return out;
}

/** Config options replace the legacy mode / model pickers when they cover the same category. */
export function legacyPickers(options: ConfigOptionView[]): { modes: boolean; models: boolean } {
  return {
    modes: !options.some((o) => o.category === 'mode'),
    models: !options.some((o) => o.category === 'model'),
  };
}
