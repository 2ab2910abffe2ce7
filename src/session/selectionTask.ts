/**
 * The selection commands as structured requests, for agents that run them themselves (the agent service's
 * `exec_explain` … `exec_unittest_code`) instead of taking a prompt. The editor and the CLI build these from
 * the code at hand; an agent session that offers `selectionTasks` runs them. Positions are 0-based.
 */
import type { ContentPart } from './sessionModel';

export interface TaskPosition {
  line: number;
  character: number;
}
export interface TaskRange {
  start: TaskPosition;
  end: TaskPosition;
}

/** A piece of code as the service takes it (`selected_text`, `visible_text`). */
export interface TextContext {
  filepath: string;
  range: TaskRange;
  text: string;
}

/** A symbol of the function under test (`func_symbols`): a SymbolKind name such as "Function". */
export interface TaskSymbol {
  name: string;
  kind: string;
  range: TaskRange;
  children: TaskSymbol[];
}

export type TaskLanguage = 'en' | 'zh';

export type SelectionTaskRequest =
  | { task: 'explain' | 'fix'; language: TaskLanguage; selected: TextContext; visible: TextContext; diagnostic?: string }
  | { task: 'docstring' | 'optimize'; language: TaskLanguage; selected: TextContext; visible?: TextContext }
  | {
      task: 'testCases';
      language: TaskLanguage;
      filepath: string;
      fileContent: string;
      funcName: string;
      funcLocation: TaskRange;
      funcSymbols: TaskSymbol[];
      userPrompt?: string;
    }
  | {
      task: 'testCode';
      language: TaskLanguage;
      /** The cases the first step proposed (as the user kept them). */
      testCasesStr: string;
      functionName?: string;
      userPrompt?: string;
      /** The test file's path relative to the project. */
      filePath?: string;
      relevantContent?: string;
      referenceContent?: string;
    };

export type SelectionTaskName = SelectionTaskRequest['task'];

/**
 * Selection tasks the agent runs from structured context. A run is a turn: the transcript shows `display` as
 * the user's message and the answer streams into the session model; it resolves with how the turn ended.
 */
export interface SelectionTasks {
  run(request: SelectionTaskRequest, display: ContentPart[]): Promise<{ stopReason: string }>;
  /** A task sent while another runs cancels that one itself, and says so (the agent service): no Stop first. */
  readonly newerCancelsRunning?: boolean;
}
