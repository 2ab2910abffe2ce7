/** Test cases proposed by the agent (step one of the unit-test command), parsed leniently. No vscode. */
import { codeBlocks } from './codeBlocks';

export interface TestCase {
  title: string;
  kind: 'happy' | 'edge';
  description: string;
  /** Arguments as an expression of the code's language, when the agent gave them. */
  input?: string;
  expected?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : v === undefined || v === null ? undefined : JSON.stringify(v);

function kindOf(v: unknown, fallback: 'happy' | 'edge'): 'happy' | 'edge' {
  const k = String(v ?? '').toLowerCase();
  if (/edge|corner|boundary|error|invalid|negative|边界|异常/.test(k)) return 'edge';
  if (/happy|normal|typical|positive|basic|正常/.test(k)) return 'happy';
  return fallback;
}

function toCase(raw: unknown, fallback: 'happy' | 'edge'): TestCase | undefined {
  if (typeof raw === 'string') return raw.trim() ? { title: raw.trim(), kind: fallback, description: '' } : undefined;
  if (!isRecord(raw)) return undefined;
  const title = text(raw.title ?? raw.name ?? raw.case ?? raw.description);
  if (!title?.trim()) return undefined;
  const input = text(raw.input ?? raw.inputs ?? raw.args ?? raw.arguments);
  const expected = text(raw.expected ?? raw.expected_output ?? raw.output ?? raw.result);
  return {
    title: title.trim(),
    kind: kindOf(raw.kind ?? raw.type ?? raw.category, fallback),
    description: text(raw.description ?? raw.details) ?? '',
    ...(input !== undefined ? { input } : {}),
    ...(expected !== undefined ? { expected } : {}),
  };
}

function fromValue(value: unknown): TestCase[] {
  if (Array.isArray(value)) return value.map((v) => toCase(v, 'happy')).filter((c): c is TestCase => !!c);
  if (!isRecord(value)) return [];
  for (const key of ['cases', 'test_cases', 'testCases', 'tests']) if (Array.isArray(value[key])) return fromValue(value[key]);
  // `{happy: [...], edge: [...]}` (devchat's shape: happy-path and edge-case lists).
  const out: TestCase[] = [];
  for (const [key, list] of Object.entries(value)) {
    if (!Array.isArray(list)) continue;
    const kind = kindOf(key, 'happy');
    for (const item of list) {
      const c = toCase(item, kind);
      if (c) out.push(c);
    }
  }
  return out;
}

/** The first balanced JSON array or object in `s`, or undefined. */
function firstJson(s: string): unknown {
  for (let start = 0; start < s.length; start++) {
    const open = s[start];
    if (open !== '[' && open !== '{') continue;
    let depth = 0;
    let inString = false;
    for (let i = start; i < s.length; i++) {
      const c = s[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '[' || c === '{') depth++;
      else if ((c === ']' || c === '}') && --depth === 0) {
        try {
          return JSON.parse(s.slice(start, i + 1));
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}

/** Cases from the agent's answer: a ```json block, else the first JSON value in the text. Throws when none. */
export function parseTestCases(answer: string): TestCase[] {
  const candidates = [
    ...codeBlocks(answer)
      .filter((b) => b.lang === 'json' || b.lang === '')
      .map((b) => b.code),
    answer,
  ];
  for (const candidate of candidates) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch {
      value = firstJson(candidate);
    }
    const cases = fromValue(value);
    if (cases.length > 0) return cases;
  }
  throw new Error('the answer holds no test cases as JSON');
}

/** The cases as a person reads them in the chat: one line each, happy paths first. */
export function casesAsList(cases: TestCase[]): string {
  const line = (c: TestCase) => `• ${c.title}${c.description && c.description !== c.title ? ` — ${c.description}` : ''}${c.input !== undefined ? `  (${c.input} → ${c.expected ?? '?'})` : ''}`;
  const happy = cases.filter((c) => c.kind === 'happy').map(line);
  const edge = cases.filter((c) => c.kind === 'edge').map(line);
  return [...(happy.length ? ['Happy paths:', ...happy] : []), ...(edge.length ? ['Edge cases:', ...edge] : [])].join('\n');
}

/** What goes back to the agent in step two. */
export function casesForPrompt(cases: TestCase[]): string {
  return JSON.stringify(cases, null, 2);
}
