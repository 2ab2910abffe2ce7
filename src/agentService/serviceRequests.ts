/**
 * The selection commands as the agent service's `exec_*` requests, field by field as the document names
 * them (seed 003 §2.3–2.7). `model` and `stream` are added by the session. Explain sends the selection and the
 * visible code; docstring, optimize and fix the selection only (the document names no other field, so a
 * problem the editor reports is not sent); the unit tests go in two steps.
 */
import type { SelectionTaskRequest } from '../session/selectionTask';

export function taskFrame(request: SelectionTaskRequest): { cmd: string; fields: Record<string, unknown> } {
  const language = request.language;
  switch (request.task) {
    case 'explain':
      return { cmd: 'exec_explain', fields: { language, selected_text: request.selected, visible_text: request.visible } };
    case 'docstring':
      return { cmd: 'exec_docstring', fields: { language, selected_text: request.selected } };
    case 'optimize':
      return { cmd: 'exec_optimize', fields: { language, selected_text: request.selected } };
    case 'fix':
      return { cmd: 'exec_fix', fields: { language, selected_text: request.selected } };
    case 'testCases':
      return {
        cmd: 'exec_unittest_recommend',
        fields: {
          language,
          ...(request.userPrompt ? { user_prompt: request.userPrompt } : {}),
          file_content: request.fileContent,
          filepath: request.filepath,
          func_name: request.funcName,
          func_location: request.funcLocation,
          func_symbols: request.funcSymbols,
        },
      };
    case 'testCode':
      return {
        cmd: 'exec_unittest_code',
        fields: {
          language,
          test_cases_str: request.testCasesStr,
          ...(request.functionName ? { function_name: request.functionName } : {}),
          ...(request.userPrompt ? { user_prompt: request.userPrompt } : {}),
          ...(request.filePath ? { file_path: request.filePath } : {}),
          ...(request.relevantContent ? { relevant_content: request.relevantContent } : {}),
          ...(request.referenceContent ? { reference_content: request.referenceContent } : {}),
        },
      };
  }
}
