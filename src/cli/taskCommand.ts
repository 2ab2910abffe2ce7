/**
 * `agent-host task explain|docstring|optimize|fix|tests`: one selection command, as the editor runs it, against
 * any agent; prints the answer or the proposed edit as a unified diff, and writes no file. An agent that runs
 * selection tasks itself (`selectionTasks`) gets the structured request instead of a prompt.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AgentExitedError } from '../core/agentProcess';
import type { Logger } from '../core/log';
import { oneLine } from '../core/visibleText';
import type { AgentConfig } from '../session/agentConfig';
import { TURN_EXIT_CODES, type AgentSession } from '../session/agentSession';
import type { SelectionTaskRequest, TaskLanguage, TaskRange, TaskSymbol } from '../session/selectionTask';
import { AuthRequiredError, type AgentStartOptions } from '../session/sessionHost';
import { buildPromptParts, displayParts, lineSpan, type CodeContext } from '../tasks/promptParts';
import { docstringProposal, rewriteProposal, testFileProposal } from '../tasks/proposedEdits';
import { explainOrFixRequest, selectedRequest, testCasesRequest, testCodeRequest } from '../tasks/selectionRequests';
import { stubFunction } from '../tasks/docstring';
import { commandTarget, docstringRange } from '../tasks/functionsInText';
import { buildInstructions, docConvention, languageName, type PromptVars, type TaskName } from '../tasks/templates';
import { casesAsList, casesForPrompt, parseTestCases } from '../tasks/testCases';
import { frameworksFor, planTests } from '../tasks/testFramework';
import { replaceRange, textIn, visibleRange, wholeText } from '../tasks/textRanges';
import { startNotices } from './runPrompt';
import { projectView, unifiedDiff } from './taskInput';
import { stderr, stdout } from './terminal';

export const TASK_VERBS = ['explain', 'docstring', 'optimize', 'fix', 'tests'] as const;
export type TaskVerb = (typeof TASK_VERBS)[number];

export const TASK_USAGE = `Usage: agent-host task explain|docstring|optimize|fix|tests --file FILE --range RANGE [--language en|zh]
                       [agent options] [-- CMD [ARG…]]

Runs one of the editor's selection commands against an agent and prints the result; writes no file.
  explain     prints the agent's explanation of the range
  fix         prints the file with the range fixed, as a unified diff
  optimize    prints the file with the range optimized, as a unified diff
  docstring   prints the documentation comment for the function at the range, as a unified diff (nothing
              else in the file may change: a proposal that would is refused, exit 1)
  tests       asks for test cases (all proposed cases are taken, listed on stderr), then for the tests; prints
              the test file (where the project's tests go, by its framework and a reference test) as a unified
              diff against the current one, or against /dev/null for a new file
The diff names files relative to --cwd (a/<path>, b/<path>): \`… | git apply\` applies it there.

  --file FILE          the file (inside the workspace folder, --cwd)
  --range RANGE        L1:C1-L2:C2: 1-based lines and columns as VS Code's status bar shows them; the end column
                       is exclusive, like a selection's end (6:1-10:15 takes line 6 to column 14 of line 10);
                       or L1-L2: lines L1 to L2 whole. A range inside a function, or an empty one (6:5-6:5), works
                       on that function for docstring and tests (as in the editor)
  --language en|zh     the answer's language (default en)

The agent sees the range and, as "the visible code", the range widened by 20 lines each side (clipped to the
file): headless there is no viewport. An agent that runs selection tasks itself gets them as structured requests.
Agent options as for a prompt (agent-host --help): --config/--agent, --command/--arg/--env, -- CMD…, --protocol,
--cwd, --approve-all|--approve-reads|--deny-all (default), --allow-protected, --allow-env, --host-tools,
--mcp-config FILE, --no-mcp, --timeout, --log-level. --format json prints the session's events, then an "answer" event (explain) or a
"proposal" event {file, diff} ("diff" empty when the agent proposes no change), then the "result".

Exit codes as for a prompt: 0 done, 1 error (e.g. the answer holds no code block), 2 usage (a bad --range, a
missing file), 3 agent failed to start, 4 agent exited mid-turn, 5 refusal, 6 max_tokens, 7 cancelled.`;

export interface TaskRun {
  task: TaskVerb;
  /** Absolute path of the file, inside `cwd`, and its text. */
  file: string;
  text: string;
  languageId: string;
  /** The selection, 0-based, end exclusive. */
  selected: TaskRange;
  language: TaskLanguage;
  cwd: string;
  agent: AgentConfig;
  options: AgentStartOptions;
  format: 'text' | 'json';
  emit(event: object): void;
  logger: Logger;
  startAgent(config: AgentConfig, options: AgentStartOptions): Promise<AgentSession>;
}

/** A task that ends before its proposal: `outcome` is a TURN_EXIT_CODES key. */
class TaskEnded extends Error {
  constructor(
    readonly outcome: string,
    message: string,
  ) {
    super(message);
  }
}

interface Step {
  task: TaskName;
  vars: PromptVars;
  contexts: CodeContext[];
  label: string;
  request: () => SelectionTaskRequest;
}

type StepBuilder = (task: TaskName, range: TaskRange, extra: PromptVars, contexts: CodeContext[], request: () => SelectionTaskRequest) => Step;

/** One turn of the task: the prompt (or the structured request); resolves with the agent's answer, the messages the turn added. */
async function ask(session: AgentSession, language: TaskLanguage, step: Step): Promise<string> {
  const before = new Set(session.model.messages('agent').map((m) => m.id));
  const display = displayParts(step.label, step.contexts);
  let stopReason: string;
  try {
    ({ stopReason } = session.selectionTasks
      ? await session.selectionTasks.run(step.request(), display)
      : await session.prompt(buildPromptParts(buildInstructions(step.task, language, step.vars), step.contexts, session.promptCapabilities.embeddedContext), display));
  } catch (error) {
    throw new TaskEnded(error instanceof AgentExitedError ? 'agent_exited' : 'error', (error as Error).message);
  }
  // Only a finished turn is an answer: a refusal, a cut-off or a cancelled one ends the task with its exit code.
  if (stopReason !== 'end_turn') throw new TaskEnded(stopReason in TURN_EXIT_CODES ? stopReason : 'error', `the turn ended with ${oneLine(stopReason)}, not an answer`);
  const answer = session.model
    .messages('agent')
    .filter((m) => !before.has(m.id))
    .map((m) => m.text)
    .join('\n\n');
  if (!answer.trim()) throw new TaskEnded('error', `the agent gave no answer (stop reason: ${oneLine(stopReason)})`);
  return answer;
}

function relPath(run: TaskRun, abs: string): string {
  return path.relative(run.cwd, abs).split(path.sep).join('/');
}

function codeContext(run: TaskRun, label: string, range: TaskRange, text = run.text, file = run.file): CodeContext {
  return { label, filepath: file, range, text: textIn(text, range), languageId: run.languageId };
}

function baseVars(run: TaskRun, range: TaskRange, fn: TaskSymbol | undefined): PromptVars {
  return {
    languageId: run.languageId,
    languageName: languageName(run.languageId),
    file: relPath(run, run.file),
    lines: lineSpan(range),
    symbolName: fn?.name ?? '',
    symbolKind: fn?.kind === 'Method' ? 'method' : 'function',
    diagnosticText: '',
  };
}

const TITLES: Record<TaskName, string> = { explain: 'Explain', docstring: 'Docstring', optimize: 'Optimize', fix: 'Fix', testCases: 'Test cases', testCode: 'Unit tests', ask: 'Ask' };

function label(task: TaskName, vars: PromptVars): string {
  const file = path.basename(vars.file ?? '');
  return `${TITLES[task]}: ${vars.symbolName ? `${vars.symbolName} in ${file}` : `lines ${vars.lines} of ${file}`}`;
}

/** What the task proposes: the answer to print, or the file's new text. */
type Outcome = { answer: string } | { rel: string; before: string | undefined; after: string };

async function perform(run: TaskRun, session: AgentSession): Promise<Outcome> {
  const { text, file, languageId, language } = run;
  const target = commandTarget(text, languageId, run.selected);
  const { fn } = target;
  const selection = (range: TaskRange) => [codeContext(run, 'selection', range), codeContext(run, 'visible code', visibleRange(text, range))];
  const step: StepBuilder = (task, range, extra, contexts, request) => {
    const vars = { ...baseVars(run, range, fn), ...extra };
    return { task, vars, contexts, label: label(task, vars), request };
  };
  switch (run.task) {
    case 'explain': {
      const range = target.range;
      return {
        answer: await ask(
          session,
          language,
          step('explain', range, {}, selection(range), () => explainOrFixRequest('explain', language, text, file, range)),
        ),
      };
    }
    case 'fix':
    case 'optimize': {
      const { range } = target;
      const task = run.task;
      const request = () => (task === 'fix' ? explainOrFixRequest('fix', language, text, file, range) : selectedRequest('optimize', language, text, file, range));
      const answer = await ask(session, language, step(task, range, {}, selection(range), request));
      return { rel: relPath(run, file), before: text, after: replaceRange(text, range, rewriteProposal(textIn(text, range), answer, languageId)) };
    }
    case 'docstring': {
      const range = docstringRange(text, languageId, target.range, fn);
      const original = textIn(text, range);
      const vars = { stub: stubFunction(original, languageId), docConvention: docConvention(languageId) };
      const answer = await ask(
        session,
        language,
        step('docstring', range, vars, [codeContext(run, 'selection', range)], () => selectedRequest('docstring', language, text, file, range)),
      );
      return { rel: relPath(run, file), before: text, after: replaceRange(text, range, docstringProposal(original, answer, languageId)) };
    }
    case 'tests':
      return tests(run, session, target.range, fn, selection, step);
  }
}

async function tests(run: TaskRun, session: AgentSession, range: TaskRange, fn: TaskSymbol | undefined, selection: (r: TaskRange) => CodeContext[], step: StepBuilder): Promise<Outcome> {
  const { text, file, languageId, language } = run;
  // No function at the range: the selection stands for it, unnamed (the prompt then names the lines).
  const subject: TaskSymbol = fn ?? { name: '', kind: 'Function', range, children: [] };
  const casesAnswer = await ask(
    session,
    language,
    step('testCases', range, {}, selection(range), () => testCasesRequest(language, text, file, subject)),
  );
  const cases = parseTestCases(casesAnswer);
  // Headless there is no picker: every proposed case is taken, and listed on stderr.
  run.emit({ type: 'testCases', cases });
  if (run.format === 'text') stderr(`agent-host: ${cases.length} test cases proposed, all taken:\n${casesAsList(cases)}\n`);
  const view = projectView(run.cwd, relPath(run, file), languageId);
  let plan = planTests(view);
  if (!plan.confident || !plan.framework) {
    const framework = frameworksFor(languageId)[0]!;
    plan = planTests(view, framework);
    run.logger.warn(`No test framework found in ${run.cwd}: writing ${framework} tests`);
  }
  const testFile = path.join(run.cwd, plan.testPath);
  const current = existsSync(testFile) ? readFileSync(testFile, 'utf8') : undefined;
  const contexts = [codeContext(run, 'code under test', range)];
  if (current !== undefined) contexts.push(codeContext(run, 'current test file', wholeText(current), current, testFile));
  const refFile = plan.reference && plan.reference !== plan.testPath ? path.join(run.cwd, plan.reference) : undefined;
  const reference = refFile ? readFileSync(refFile, 'utf8') : undefined;
  if (refFile && reference !== undefined) contexts.push(codeContext(run, 'reference test file', wholeText(reference), reference, refFile));
  const vars: PromptVars = {
    framework: plan.framework,
    testPath: plan.testPath,
    referenceFile: plan.reference ?? '',
    importPath: plan.importPath,
    testFileState: current !== undefined ? ' (it exists: keep its tests and add the new ones)' : ' (a new file)',
    cases: casesForPrompt(cases),
  };
  const request = () =>
    testCodeRequest(language, {
      cases,
      ...(fn ? { functionName: fn.name } : {}),
      testPath: plan.testPath,
      relevantContent: textIn(text, range),
      ...(reference !== undefined ? { referenceContent: reference } : {}),
    });
  const codeAnswer = await ask(session, language, step('testCode', range, vars, contexts, request));
  return { rel: plan.testPath, before: current, after: testFileProposal(codeAnswer, languageId) };
}

/** Runs the task on a started agent; prints the answer or the diff on stdout (text), or as events (json). Resolves with the exit code. */
export async function runTask(run: TaskRun): Promise<number> {
  const { emit } = run;
  let session: AgentSession;
  try {
    session = await run.startAgent(run.agent, run.options);
  } catch (error) {
    const err = error as Error;
    emit({ type: 'result', outcome: 'start_failed', error: err.message, ...(error instanceof AuthRequiredError ? { authMethods: error.methods } : {}) });
    if (run.format === 'text') stderr(`agent-host: ${err.message}\n`);
    return TURN_EXIT_CODES.start_failed!;
  }
  const early = startNotices(session);
  const unsubscribe = session.model.on((event) => emit(event));
  emit({ type: 'session', sessionId: session.sessionId, agent: session.agentInfo, cwd: run.cwd, attach: session.attach.how });
  for (const event of early) emit(event);
  let interrupts = 0;
  process.on('SIGINT', () => {
    if (++interrupts === 1) void session.cancel();
    else void session.shutdown().then(() => process.exit(TURN_EXIT_CODES.cancelled));
  });
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => void session.shutdown().finally(() => process.exit(TURN_EXIT_CODES.cancelled)));
  }
  let outcome = 'end_turn';
  let error: string | undefined;
  try {
    const done = await perform(run, session);
    if ('answer' in done) {
      emit({ type: 'answer', task: run.task, text: done.answer });
      if (run.format === 'text') stdout(done.answer.endsWith('\n') ? done.answer : `${done.answer}\n`);
    } else if (done.before === done.after) {
      emit({ type: 'proposal', task: run.task, file: done.rel, diff: '' });
      if (run.format === 'text') stderr(`agent-host: the agent proposes no change to ${oneLine(done.rel)}\n`);
    } else {
      const diff = unifiedDiff(done.rel, done.before, done.after);
      emit({ type: 'proposal', task: run.task, file: done.rel, diff });
      if (run.format === 'text') stdout(diff);
    }
  } catch (e) {
    outcome = e instanceof TaskEnded ? e.outcome : 'error';
    error = (e as Error).message;
  }
  const exitCode = TURN_EXIT_CODES[outcome] ?? TURN_EXIT_CODES.error!;
  // The result is the last event: what the agent reports after the task (usage, a late update) is not printed.
  unsubscribe();
  emit({ type: 'result', outcome, exitCode, ...(error ? { error } : {}) });
  if (error && run.format === 'text') stderr(`agent-host: ${run.task}: ${error}\n`);
  await session.shutdown();
  return exitCode;
}
