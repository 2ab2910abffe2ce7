/**
 * The selection commands as structured requests (src/session/selectionTask.ts), for agents that run them
 * themselves: built from a file's text, its path and a 0-based range, so the editor (from its documents) and
 * the CLI (from the disk) send the same. No vscode.
 */
import type { SelectionTaskRequest, TaskLanguage, TaskRange, TaskSymbol } from '../session/selectionTask';
import { casesForPrompt, type TestCase } from './testCases';
import { textContext, visibleRange } from './textRanges';

/** explain and fix: the selection and the code around it (`visible`: the editor's viewport; default the selection ± 20 lines). */
export function explainOrFixRequest(task: 'explain' | 'fix', language: TaskLanguage, text: string, filepath: string, range: TaskRange, visible?: TaskRange, diagnostic?: string): SelectionTaskRequest {
  return {
    task,
    language,
    selected: textContext(text, filepath, range),
    visible: textContext(text, filepath, visible ?? visibleRange(text, range)),
    ...(diagnostic ? { diagnostic } : {}),
  };
}

/** docstring and optimize: the selection alone (for a docstring, the whole function with the comment above it). */
export function selectedRequest(task: 'docstring' | 'optimize', language: TaskLanguage, text: string, filepath: string, range: TaskRange): SelectionTaskRequest {
  return { task, language, selected: textContext(text, filepath, range) };
}

/** Step one of the tests: the whole file and the function under test, its location and its symbols (the function with what it holds). */
export function testCasesRequest(language: TaskLanguage, text: string, filepath: string, fn: TaskSymbol, userPrompt?: string): SelectionTaskRequest {
  return {
    task: 'testCases',
    language,
    filepath,
    fileContent: text,
    funcName: fn.name,
    funcLocation: fn.range,
    funcSymbols: [fn],
    ...(userPrompt ? { userPrompt } : {}),
  };
}

export interface TestCodeInput {
  /** The cases to cover: those the user kept of step one (headless: all). */
  cases: TestCase[];
  functionName?: string;
  /** The test file's path relative to the project (the plan's). */
  testPath?: string;
  /** The code of the function under test. */
  relevantContent?: string;
  /** A reference test file's text, when the project has one. */
  referenceContent?: string;
  userPrompt?: string;
}

/** Step two of the tests: the cases as JSON, where the tests go and the code they test. */
export function testCodeRequest(language: TaskLanguage, input: TestCodeInput): SelectionTaskRequest {
  return {
    task: 'testCode',
    language,
    testCasesStr: casesForPrompt(input.cases),
    ...(input.functionName ? { functionName: input.functionName } : {}),
    ...(input.userPrompt ? { userPrompt: input.userPrompt } : {}),
    ...(input.testPath ? { filePath: input.testPath } : {}),
    ...(input.relevantContent ? { relevantContent: input.relevantContent } : {}),
    ...(input.referenceContent ? { referenceContent: input.referenceContent } : {}),
  };
}
