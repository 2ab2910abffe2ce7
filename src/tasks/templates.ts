/**
 * The prompts of the selection commands, in one place. Each task has an English and a Chinese template; a
 * user may override a task's template with the setting `agentHost.prompts.<task>` (one string for both
 * languages: the header below already says which language to answer in).
 *
 * Every prompt starts with a fixed header the user cannot override: the line `Atrium task: <task>` (a
 * stable marker tools and the scripted test model recognise), the answer language, and the rule that the
 * agent answers in text only — the editor applies the result after the user reviewed it.
 *
 * Placeholders: `{{name}}` is replaced by the variable of that name; unknown names become empty.
 */

export const TASKS = ['explain', 'docstring', 'optimize', 'fix', 'testCases', 'testCode', 'ask'] as const;
export type TaskName = (typeof TASKS)[number];
export type AnswerLanguage = 'en' | 'zh';

export type PromptVars = Record<string, string | undefined>;

const HEADER: Record<AnswerLanguage, string> = {
  en: 'Answer in English.\n' + 'Reply in text only: do not edit files, create files or run commands for this task. ' + 'The editor applies your answer after the user has reviewed it.',
  zh:
    'Answer in Simplified Chinese (请用简体中文回答；代码和标识符保持原样).\n' +
    'Reply in text only: do not edit files, create files or run commands for this task. ' +
    'The editor applies your answer after the user has reviewed it.',
};

const EN: Record<TaskName, string> = {
  explain:
    'Explain the selected {{languageName}} code from {{file}} (lines {{lines}}): what it does, how it does it, ' +
    'and anything surprising (edge cases, pitfalls). The selection and the code visible around it are attached.' +
    '{{diagnosticText}}',
  docstring:
    'Write the documentation comment for the {{languageName}} {{symbolKind}} below, in the convention of the ' +
    'language ({{docConvention}}): a one-line summary, the parameters, the return value and the errors it raises.\n' +
    'Return ONLY one fenced code block with the {{symbolKind}} and its documentation comment, its body replaced by ' +
    '`...` exactly as below. Do not change the signature.\n\n```{{languageId}}\n{{stub}}\n```',
  optimize:
    'Optimize the selected {{languageName}} code from {{file}} (lines {{lines}}) for speed, memory and ' +
    'readability without changing its behaviour. First return the complete replacement for the selection in one ' +
    'fenced ```{{languageId}} code block, then explain the changes briefly.',
  fix:
    'Find and fix the bugs in the selected {{languageName}} code from {{file}} (lines {{lines}}).{{diagnosticText}} ' +
    'First return the complete corrected replacement for the selection in one fenced ```{{languageId}} code block ' +
    '(keep the rest unchanged), then explain each fix briefly.',
  testCases:
    'Propose unit test cases for the {{languageName}} {{symbolKind}} `{{symbolName}}` from {{file}} (lines ' +
    '{{lines}}): at least 3 happy-path cases and at least 3 edge cases. The selection, the code around it and the ' +
    'definitions of the symbols it uses are attached.\n' +
    'Return ONLY a fenced ```json code block holding an array of objects ' +
    '`{"title": string, "kind": "happy" | "edge", "description": string, "input": string, "expected": string}` — ' +
    '`input` and `expected` as {{languageName}} expressions.',
  testCode:
    'Write unit tests for the {{languageName}} {{symbolKind}} `{{symbolName}}` from {{file}} with the ' +
    '{{framework}} framework. The tests go into `{{testPath}}`{{testFileState}}. Follow the style, imports and ' +
    'layout of the reference test file `{{referenceFile}}` when one is attached. Import the code under test from ' +
    '`{{importPath}}`.\nCover exactly these cases:\n```json\n{{cases}}\n```\n' +
    'Return ONLY the complete content of `{{testPath}}` in one fenced ```{{languageId}} code block.',
  ask: '{{question}}\n\n(About the selected {{languageName}} code from {{file}}, lines {{lines}}; attached.)',
};

const ZH: Record<TaskName, string> = {
  explain: '解释 {{file}}（第 {{lines}} 行）中选中的 {{languageName}} 代码：它做什么、怎么做，以及值得注意的地方（边界情况、陷阱）。' + '附件中有选中的代码和周围可见的代码。{{diagnosticText}}',
  docstring:
    '为下面的 {{languageName}} {{symbolKind}} 按该语言的惯例（{{docConvention}}）编写文档注释：一句话概述、参数、返回值和可能抛出的错误。\n' +
    '只返回一个代码块，包含该 {{symbolKind}} 及其文档注释，函数体保持为 `...`，与下面完全一致。不要修改签名。\n\n' +
    '```{{languageId}}\n{{stub}}\n```',
  optimize:
    '在不改变行为的前提下，从速度、内存和可读性方面优化 {{file}}（第 {{lines}} 行）中选中的 {{languageName}} 代码。' +
    '先在一个 ```{{languageId}} 代码块中给出选中部分的完整替换代码，然后简要说明改动。',
  fix:
    '找出并修复 {{file}}（第 {{lines}} 行）中选中的 {{languageName}} 代码里的错误。{{diagnosticText}}' +
    '先在一个 ```{{languageId}} 代码块中给出选中部分修复后的完整替换代码（其余保持不变），然后简要说明每处修复。',
  testCases:
    '为 {{file}}（第 {{lines}} 行）中的 {{languageName}} {{symbolKind}} `{{symbolName}}` 设计单元测试用例：至少 3 个正常路径用例和至少 3 个边界用例。' +
    '附件中有选中的代码、周围的代码以及它用到的符号的定义。\n' +
    '只返回一个 ```json 代码块，内容为对象数组 ' +
    '`{"title": string, "kind": "happy" | "edge", "description": string, "input": string, "expected": string}`，' +
    '`input` 和 `expected` 写成 {{languageName}} 表达式。',
  testCode:
    '使用 {{framework}} 框架为 {{file}} 中的 {{languageName}} {{symbolKind}} `{{symbolName}}` 编写单元测试。' +
    '测试写入 `{{testPath}}`{{testFileState}}。如果附有参考测试文件 `{{referenceFile}}`，请遵循它的风格、导入方式和结构。' +
    '从 `{{importPath}}` 导入被测代码。\n只覆盖以下用例：\n```json\n{{cases}}\n```\n' +
    '只在一个 ```{{languageId}} 代码块中返回 `{{testPath}}` 的完整内容。',
  ask: '{{question}}\n\n（关于 {{file}} 第 {{lines}} 行中选中的 {{languageName}} 代码；见附件。）',
};

export const DEFAULT_TEMPLATES: Record<AnswerLanguage, Record<TaskName, string>> = { en: EN, zh: ZH };

/** The first line of every task prompt; `taskOf` reads it back. */
export function taskMarker(task: TaskName): string {
  return `Atrium task: ${task}`;
}

export function taskOf(prompt: string): TaskName | undefined {
  const m = /^Atrium task: (\w+)/m.exec(prompt);
  return m && (TASKS as readonly string[]).includes(m[1] ?? '') ? (m[1] as TaskName) : undefined;
}

export function renderTemplate(template: string, vars: PromptVars): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => vars[name] ?? '');
}

/** The whole instruction text of a task: the fixed header, then the (possibly overridden) template. */
export function buildInstructions(task: TaskName, language: AnswerLanguage, vars: PromptVars, override?: string): string {
  const template = override && override.trim() !== '' ? override : DEFAULT_TEMPLATES[language][task];
  return `${taskMarker(task)}\n${HEADER[language]}\n\n${renderTemplate(template, vars)}`;
}

/** `auto` follows VS Code's display language (`zh-cn`, `zh-tw` → zh). */
export function resolveAnswerLanguage(setting: string | undefined, displayLanguage: string): AnswerLanguage {
  if (setting === 'en' || setting === 'zh') return setting;
  return displayLanguage.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

const LANGUAGE_NAMES: Record<string, string> = {
  python: 'Python',
  typescript: 'TypeScript',
  typescriptreact: 'TypeScript (React)',
  javascript: 'JavaScript',
  javascriptreact: 'JavaScript (React)',
  java: 'Java',
  csharp: 'C#',
  cpp: 'C++',
  c: 'C',
  go: 'Go',
  rust: 'Rust',
  kotlin: 'Kotlin',
  php: 'PHP',
  ruby: 'Ruby',
  swift: 'Swift',
};

export function languageName(languageId: string): string {
  return LANGUAGE_NAMES[languageId] ?? languageId;
}

export function docConvention(languageId: string): string {
  if (languageId === 'python') return 'a PEP 257 docstring, Google style sections';
  if (languageId.startsWith('typescript') || languageId.startsWith('javascript')) return 'JSDoc';
  if (languageId === 'java' || languageId === 'kotlin') return 'Javadoc / KDoc';
  if (languageId === 'csharp') return 'XML documentation comments';
  if (languageId === 'go') return 'Go doc comments';
  if (languageId === 'rust') return '/// rustdoc comments';
  return 'the usual documentation comment';
}
