/**
 * The test agent service's side of each request (docs/agent-service.md, "The test server"): checking a request's
 * fields as the service's protocol document (§2) lists them, and the default answers, deterministic and derived from the
 * request so that tests can assert what the service received. No sockets here: agentServiceServer.ts sends them.
 */

export const EXEC_COMMANDS = ['exec_explain', 'exec_docstring', 'exec_optimize', 'exec_fix', 'exec_unittest_recommend', 'exec_unittest_code', 'exec_chat'] as const;
export type ExecCommand = (typeof EXEC_COMMANDS)[number];

/** The document's list_model example. */
export const DEFAULT_MODELS = ['local deepseek-R1:32b', 'deepseek-R1:32b'];

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}
export interface TextContext {
  filepath: string;
  range: Range;
  text: string;
}

/** A request as received: JSON with the document's snake_case keys. */
export type Request = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPosition = (v: unknown): v is Position => isObject(v) && Number.isInteger(v.line) && Number.isInteger(v.character) && (v.line as number) >= 0 && (v.character as number) >= 0;
const isRange = (v: unknown): v is Range => isObject(v) && isPosition(v.start) && isPosition(v.end);
const isTextContext = (v: unknown): v is TextContext => isObject(v) && typeof v.filepath === 'string' && isRange(v.range) && typeof v.text === 'string';
const isSymbol = (v: unknown): boolean =>
  isObject(v) && typeof v.name === 'string' && typeof v.kind === 'string' && isRange(v.range) && (v.children === undefined || (Array.isArray(v.children) && v.children.every(isSymbol)));

type FieldCheck = [field: string, required: boolean, check: (v: unknown) => boolean, wants: string];
const string: FieldCheck[2] = (v) => typeof v === 'string';
const context: FieldCheck[2] = isTextContext;
const CONTEXT = 'an object {filepath, range: {start: {line, character}, end: {line, character}}, text}';
const COMMON: FieldCheck[] = [
  ['language', false, (v) => v === 'en' || v === 'zh', '"en" or "zh"'],
  ['stream', false, (v) => typeof v === 'boolean', 'a boolean'],
];

/** Each command's fields beyond request_id and cmd (`model` is checked against the models separately). */
const FIELDS: Record<ExecCommand, FieldCheck[]> = {
  exec_explain: [['selected_text', true, context, CONTEXT], ['visible_text', true, context, CONTEXT], ['model', true, string, 'a string'], ...COMMON],
  exec_docstring: [['selected_text', true, context, CONTEXT], ['visible_text', false, context, CONTEXT], ['model', true, string, 'a string'], ...COMMON],
  exec_optimize: [['selected_text', true, context, CONTEXT], ['visible_text', false, context, CONTEXT], ['model', true, string, 'a string'], ...COMMON],
  exec_fix: [['selected_text', true, context, CONTEXT], ['visible_text', false, context, CONTEXT], ['model', true, string, 'a string'], ...COMMON],
  exec_unittest_recommend: [
    ['file_content', true, string, 'a string'],
    ['filepath', true, (v) => typeof v === 'string' && v !== '', 'a non-empty string'],
    ['func_name', true, (v) => typeof v === 'string' && v !== '', 'a non-empty string'],
    ['func_location', true, isRange, 'a range {start: {line, character}, end: {line, character}}'],
    ['func_symbols', true, (v) => Array.isArray(v) && v.every(isSymbol), 'an array of symbols {name, kind, range, children}'],
    ['user_prompt', false, string, 'a string'],
    ['model', true, string, 'a string'],
    ...COMMON,
  ],
  exec_unittest_code: [
    ['test_cases_str', true, (v) => typeof v === 'string' && v.trim() !== '', 'a non-empty string'],
    ['function_name', false, string, 'a string'],
    ['user_prompt', false, string, 'a string'],
    ['file_path', false, string, 'a string'],
    ['relevant_content', false, string, 'a string'],
    ['reference_content', false, string, 'a string'],
    ['model', false, string, 'a string'],
    ...COMMON,
  ],
  exec_chat: [['msg', true, (v) => typeof v === 'string' && v !== '', 'a non-empty string'], ['model', true, string, 'a string'], ...COMMON],
};

/** The first problem with an exec_* request, as the plain-text `error` the service answers; undefined when it is valid. */
export function validate(cmd: ExecCommand, req: Request, models: readonly string[]): string | undefined {
  for (const [field, required, check, wants] of FIELDS[cmd]) {
    const value = req[field];
    if (value === undefined || value === null) {
      if (required) return `${cmd}: missing field "${field}"`;
      continue;
    }
    if (!check(value)) return `${cmd}: field "${field}" must be ${wants}`;
  }
  // Reading: models compare case-insensitively (the document lists "deepseek-R1:32b" and sends "deepseek-r1:32b").
  const model = req.model;
  if (typeof model === 'string' && !models.some((m) => m.toLowerCase() === model.toLowerCase())) return `${cmd}: unknown model "${model}" (models: ${models.join(', ')})`;
  return undefined;
}

/** "33:0-45:41": a range exactly as received (reading: the document does not say 0- or 1-based, so no shift). */
export const rangeText = (r: Range): string => `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
const firstLine = (text: string): string => text.split('\n').find((l) => l.trim() !== '') ?? '';
const lineCount = (text: string): number => (text === '' ? 0 : text.replace(/\n$/, '').split('\n').length);
/** The extension of a path with either separator (the document's example paths are Windows ones). */
export const extensionOf = (filepath: string): string => /\.([A-Za-z0-9]+)$/.exec(filepath.split(/[\\/]/).pop() ?? '')?.[1]?.toLowerCase() ?? '';
const FENCE: Record<string, string> = { py: 'python', ts: 'typescript', tsx: 'tsx', js: 'javascript', jsx: 'jsx', mjs: 'javascript', cjs: 'javascript' };
const fenceOf = (filepath: string): string => FENCE[extensionOf(filepath)] ?? extensionOf(filepath);
const isJsLike = (filepath: string): boolean => ['ts', 'tsx', 'js', 'jsx', 'mjs', 'cjs'].includes(extensionOf(filepath));
const commentPrefix = (filepath: string): string => (isJsLike(filepath) ? '//' : '#');
const fenced = (lang: string, code: string): string => `\`\`\`${lang}\n${code.replace(/\n+$/, '')}\n\`\`\``;
const indentOf = (line: string): string => /^\s*/.exec(line)?.[0] ?? '';

/** A function name as words: "next_turn" and "nextTurn" both give "next turn". */
function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_$]+/g, ' ')
    .trim()
    .toLowerCase();
}

/** The name a signature line declares ("def next_turn(self):", "export function nextTurn(a) {"), or "selection". */
function declaredName(line: string): string {
  return /\b(?:def|function|class)\s+([A-Za-z_$][\w$]*)/.exec(line)?.[1] ?? /([A-Za-z_$][\w$]*)\s*(?:=\s*(?:async\s*)?)?\(/.exec(line)?.[1] ?? 'selection';
}

function explain(req: Request, zh: boolean): string {
  const sel = req.selected_text as TextContext;
  const vis = req.visible_text as TextContext;
  const first = firstLine(sel.text).trim();
  const n = lineCount(sel.text);
  if (zh) {
    return [
      `代码解释：\`${sel.filepath}\` 的 ${rangeText(sel.range)}（可见范围 ${rangeText(vis.range)}）。`,
      `选中代码的第一行是：\`${first}\``,
      `这段代码共 ${n} 行。它读取输入，计算结果并返回。测试服务生成此说明。`,
    ].join('\n\n');
  }
  return [
    `Explanation of \`${sel.filepath}\` ${rangeText(sel.range)} (visible ${rangeText(vis.range)}).`,
    `The selection starts with: \`${first}\``,
    `It has ${n} lines. It reads its inputs, computes a result and returns it. This explanation comes from the test agent service.`,
  ].join('\n\n');
}

/** The selection's signature with a doc comment added and its body replaced by `...` (the devchat-style flow). */
function docstring(req: Request, zh: boolean): string {
  const sel = req.selected_text as TextContext;
  const lines = sel.text.replace(/\n+$/, '').split('\n');
  const signature = lines.find((l) => l.trim() !== '') ?? '';
  const name = declaredName(signature);
  const indent = indentOf(signature);
  const summary = zh ? `${name} 的说明文档（测试服务生成）。` : `${words(name).replace(/^./, (c) => c.toUpperCase())}.`;
  const detail = zh ? `来自 ${sel.filepath} 的 ${rangeText(sel.range)}。` : `From ${sel.filepath} ${rangeText(sel.range)}.`;
  let code: string;
  if (isJsLike(sel.filepath)) {
    const open = signature.trimEnd().endsWith('{');
    code = [`${indent}/**`, `${indent} * ${summary}`, `${indent} *`, `${indent} * ${detail}`, `${indent} */`, signature, `${indent}  ...`, ...(open ? [`${indent}}`] : [])].join('\n');
  } else {
    const inner = `${indent}    `;
    code = [signature, `${inner}"""${summary}`, '', `${inner}${detail}`, `${inner}"""`, `${inner}...`].join('\n');
  }
  const lead = zh ? `为 \`${name}\` 添加了文档注释：` : `Added a doc comment to \`${name}\`:`;
  return `${lead}\n\n${fenced(fenceOf(sel.filepath), code)}`;
}

/** optimize and fix: one fenced block, the selection with a marker comment first and trailing blanks trimmed, then a sentence. */
function rewrite(req: Request, zh: boolean, kind: 'optimize' | 'fix'): string {
  const sel = req.selected_text as TextContext;
  const lines = sel.text.replace(/\n+$/, '').split('\n');
  const indent = indentOf(lines.find((l) => l.trim() !== '') ?? '');
  const note = kind === 'optimize' ? (zh ? '已优化' : 'optimized by the test agent') : zh ? '已修复' : 'fixed by the test agent';
  const code = [`${indent}${commentPrefix(sel.filepath)} ${note}`, ...lines.map((l) => l.trimEnd())].join('\n');
  const first = firstLine(sel.text).trim();
  const sentence =
    kind === 'optimize'
      ? zh
        ? `这是 \`${sel.filepath}\` ${rangeText(sel.range)} 优化后的版本，行为不变（从 \`${first}\` 开始）。`
        : `This is the optimized version of \`${sel.filepath}\` ${rangeText(sel.range)} (starting at \`${first}\`); it behaves the same.`
      : zh
        ? `这是 \`${sel.filepath}\` ${rangeText(sel.range)} 修复后的版本（从 \`${first}\` 开始）。`
        : `This is the fixed version of \`${sel.filepath}\` ${rangeText(sel.range)} (starting at \`${first}\`).`;
  return `${fenced(fenceOf(sel.filepath), code)}\n\n${sentence}`;
}

export interface TestCase {
  title: string;
  kind: 'happy' | 'edge';
  description: string;
  input: string;
  expected: string;
}

/** Three happy and three edge cases for `func_name`, as a fenced JSON array (reading: the document says English only). */
function unittestRecommend(req: Request): string {
  const fn = req.func_name as string;
  const symbols = (req.func_symbols as unknown[]).length;
  const make = (kind: TestCase['kind'], what: string, input: string, expected: string): TestCase => ({
    title: `${fn} ${what}`,
    kind,
    description: `Checks that ${fn} ${what}.`,
    input,
    expected,
  });
  const cases: TestCase[] = [
    make('happy', 'handles a typical input', 'a typical value', 'the documented result'),
    make('happy', 'handles a second typical input', 'another typical value', 'the documented result for it'),
    make('happy', 'gives the same result when called twice', 'the same value twice', 'equal results'),
    make('edge', 'handles an empty input', 'an empty value', 'no error and an empty result'),
    make('edge', 'handles the largest input', 'the largest allowed value', 'a correct result without overflow'),
    make('edge', 'rejects an invalid input', 'an invalid value', 'a clear error'),
  ];
  const prompt = typeof req.user_prompt === 'string' && req.user_prompt !== '' ? ` User prompt: ${req.user_prompt}` : '';
  return `Test cases for \`${fn}\` in \`${req.filepath}\` ${rangeText(req.func_location as Range)} (${symbols} symbols).${prompt}\n\n${fenced('json', JSON.stringify(cases, null, 2))}`;
}

/** The case titles in test_cases_str: a JSON array of {title} (maybe fenced), else one case per non-empty line. */
export function caseTitles(testCases: string): string[] {
  const json = /```(?:json)?\s*\n([\s\S]*?)```/.exec(testCases)?.[1] ?? testCases;
  try {
    const parsed: unknown = JSON.parse(json);
    if (Array.isArray(parsed)) return parsed.map((c) => (isObject(c) && typeof c.title === 'string' ? c.title : JSON.stringify(c)));
  } catch {
    // Not JSON: the cases are lines of text.
  }
  return testCases
    .split('\n')
    .map((l) => l.replace(/^\s*(?:[-*]|\d+[.)])\s*/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('```'));
}

/** One fenced block of tests, one per case title, in the language of file_path (Python when there is none). */
function unittestCode(req: Request): string {
  const fn = typeof req.function_name === 'string' && req.function_name !== '' ? req.function_name : 'the function';
  const filePath = typeof req.file_path === 'string' ? req.file_path : '';
  const titles = caseTitles(req.test_cases_str as string);
  let code: string;
  if (isJsLike(filePath)) {
    code = ["import { test } from 'node:test';", '', ...titles.flatMap((t) => [`test(${JSON.stringify(t)}, () => {`, `  // calls ${fn}`, '});', ''])].join('\n');
  } else {
    const cls = `Test${words(fn)
      .split(' ')
      .map((w) => w.replace(/^./, (c) => c.toUpperCase()))
      .join('')
      .replace(/[^A-Za-z0-9_]/g, '')}`;
    const body = titles.flatMap((t, i) => [`    def test_case_${i + 1}(self):`, `        ${JSON.stringify(t)}`, `        ...  # calls ${fn}`, '']);
    code = ['import unittest', '', '', `class ${cls}(unittest.TestCase):`, ...body].join('\n');
  }
  return `${titles.length} tests for \`${fn}\`:\n\n${fenced(fenceOf(filePath) || 'python', code)}`;
}

function chat(req: Request, zh: boolean): string {
  const msg = req.msg as string;
  return zh ? `你说：「${msg}」\n\n这是测试服务的回答，共 ${msg.length} 个字符。` : `You said: "${msg}"\n\nThis is the test agent service's answer to a message of ${msg.length} characters.`;
}

/**
 * The default answer to a valid exec_* request. `language: "zh"` answers in Chinese, except the unittest
 * commands (reading: the document says "目前仅支持英文回复", English only) unless `unittestEnglishOnly` is false.
 */
export function defaultAnswer(cmd: ExecCommand, req: Request, unittestEnglishOnly = true): string {
  const zh = req.language === 'zh';
  switch (cmd) {
    case 'exec_explain':
      return explain(req, zh);
    case 'exec_docstring':
      return docstring(req, zh);
    case 'exec_optimize':
      return rewrite(req, zh, 'optimize');
    case 'exec_fix':
      return rewrite(req, zh, 'fix');
    case 'exec_unittest_recommend':
      return zh && !unittestEnglishOnly ? `测试建议（中文）：\n\n${unittestRecommend(req)}` : unittestRecommend(req);
    case 'exec_unittest_code':
      return zh && !unittestEnglishOnly ? `测试代码（中文）：\n\n${unittestCode(req)}` : unittestCode(req);
    case 'exec_chat':
      return chat(req, zh);
  }
}
