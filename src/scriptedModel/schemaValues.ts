/**
 * Values built from the JSON Schemas agents attach to their tools, so a scripted tool call passes the agent's own
 * argument validation. Schemas arrive in several dialects: standard JSON Schema, zod/typebox output with `$ref`
 * and `anyOf`, and Gemini's upper-case type names.
 */

export type JsonSchema = Record<string, unknown>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lookupRef(root: unknown, ref: string): JsonSchema | undefined {
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isRecord(node) ? node[part] : undefined;
  }
  return isRecord(node) ? node : undefined;
}

/** One concrete schema: local `$ref`s followed, and the first non-null branch of `anyOf`/`oneOf` taken. */
export function resolveSchema(schema: unknown, root: unknown = schema): JsonSchema {
  let current: JsonSchema = isRecord(schema) ? schema : {};
  for (let hops = 0; hops < 16; hops++) {
    const ref = current.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      current = lookupRef(root, ref) ?? {};
      continue;
    }
    const branches = current.anyOf ?? current.oneOf;
    if (Array.isArray(branches)) {
      const pick = branches.find((b) => isRecord(b) && schemaType(resolveSchema(b, root)) !== 'null');
      const { anyOf: _a, oneOf: _o, ...rest } = current;
      current = { ...rest, ...(isRecord(pick) ? resolveSchema(pick, root) : {}) };
      continue;
    }
    break;
  }
  return current;
}

/** The schema's type in lower case (Gemini sends `OBJECT`, `STRING`), ignoring `null` in type unions. */
export function schemaType(schema: JsonSchema): string | undefined {
  const declared = schema.type;
  const names = (Array.isArray(declared) ? declared : [declared]).filter((t): t is string => typeof t === 'string').map((t) => t.toLowerCase());
  const first = names.find((t) => t !== 'null') ?? names[0];
  if (first) return first;
  if (isRecord(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

export function schemaProperties(schema: JsonSchema): Record<string, unknown> {
  const props = schema.properties;
  return isRecord(props) ? props : {};
}

export function requiredKeys(schema: JsonSchema): string[] {
  const req = schema.required;
  return Array.isArray(req) ? req.filter((k): k is string => typeof k === 'string') : [];
}

/** The first property named like one of `candidates` (in their order), matched exactly, then case-insensitively. */
export function findKey(schema: JsonSchema, candidates: readonly string[]): string | undefined {
  const keys = Object.keys(schemaProperties(schema));
  for (const c of candidates) if (keys.includes(c)) return c;
  for (const c of candidates) {
    const hit = keys.find((k) => k.toLowerCase() === c.toLowerCase());
    if (hit) return hit;
  }
  return undefined;
}

// Enum choices that keep an agent's side checks quiet: gemini's router picks the cheap model, and its
// next-speaker check hands the turn back to the user instead of continuing on its own.
const PREFERRED_ENUM_VALUES = ['user', 'flash'];

function stringFor(key: string): string {
  if (/reason/i.test(key)) return 'simple';
  if (/dir|cwd|folder/i.test(key)) return '.';
  if (/description|instruction|explanation|justification|summary|title/i.test(key)) return 'Scripted call';
  return 'scripted';
}

function numberFor(key: string, schema: JsonSchema, integer: boolean): number {
  const num = (k: string): number | undefined => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined);
  const exMin = num('exclusiveMinimum');
  const exMax = num('exclusiveMaximum');
  const min = num('minimum') ?? (exMin !== undefined ? exMin + (integer ? 1 : 0.001) : undefined);
  const max = num('maximum') ?? (exMax !== undefined ? exMax - (integer ? 1 : 0.001) : undefined);
  let value = /timeout/i.test(key) ? 120000 : 0;
  if (min !== undefined && value < min) value = min;
  if (max !== undefined && value > max) value = max;
  return integer ? Math.ceil(value) : value;
}

/** A type-appropriate value for `schema`; `key` (the property name) picks friendlier strings and numbers. */
export function sampleValue(schema: unknown, root: unknown, key = '', depth = 0): unknown {
  const s = resolveSchema(schema, root);
  if ('const' in s) return s.const;
  const choices = s.enum;
  if (Array.isArray(choices) && choices.length > 0) {
    return choices.find((c) => typeof c === 'string' && PREFERRED_ENUM_VALUES.includes(c)) ?? choices[0];
  }
  if ('default' in s) return s.default;
  switch (schemaType(s)) {
    case 'integer':
      return numberFor(key, s, true);
    case 'number':
      return numberFor(key, s, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const minItems = typeof s.minItems === 'number' ? s.minItems : 0;
      return minItems > 0 && depth < 8 ? [sampleValue(s.items, root, key, depth + 1)] : [];
    }
    case 'object':
      return depth < 8 ? sampleObject(s, root, false, depth + 1) : {};
    default:
      return stringFor(key);
  }
}

/** An object with every required property filled (every property when `all`). */
export function sampleObject(schema: unknown, root: unknown = schema, all = false, depth = 0): Record<string, unknown> {
  const s = resolveSchema(schema, root);
  const props = schemaProperties(s);
  const keys = all ? Object.keys(props) : requiredKeys(s);
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = sampleValue(props[key], root, key, depth);
  return out;
}
