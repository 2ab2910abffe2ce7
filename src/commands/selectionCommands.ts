/**
 * The selection commands (the original agent service's exec_explain / docstring / optimize / fix /
 * unittest / chat), run through whatever agent is configured: editor context submenu "Agent", palette,
 * keybindings, CodeLens above functions, and quick fixes on diagnostics.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentManager } from '../manager/agentManager';
import { registerCommand } from '../views/commandRegistry';
import { refuseInRestrictedMode } from '../views/restrictedMode';
import { buildInstructions, docConvention, languageName, resolveAnswerLanguage, type AnswerLanguage, type PromptVars, type TaskName } from '../tasks/templates';
import { fitReplacement, pickCodeBlock } from '../tasks/codeBlocks';
import { bodyUnchanged, docStyle, extractDocComment, spliceDocComment, stubFunction } from '../tasks/docstring';
import { enclosingFunction, functionSymbols, resolveTarget, symbolContext, toContext, visibleContext, type Target } from './editorContext';
import { lineSpan, type CodeContext } from '../tasks/promptParts';
import { ProposalPreview } from './proposals';
import { symbolsIn, taskRange, textContext } from './taskRequests';
import type { SelectionTaskRequest } from '../session/selectionTask';
import { TaskRunner, type TaskContext } from './taskRunner';
import { casesAsList, casesForPrompt, parseTestCases } from '../tasks/testCases';
import { frameworksFor, planTests, type Framework } from '../tasks/testFramework';
import { pickTestCases } from './testCasePicker';

export const SELECTION_COMMANDS = {
  explain: 'agentHost.explainSelection',
  docstring: 'agentHost.generateDocstring',
  optimize: 'agentHost.optimizeSelection',
  fix: 'agentHost.fixSelection',
  tests: 'agentHost.generateUnitTests',
  ask: 'agentHost.askAboutSelection',
} as const;

/** The task's progress while a proposal is open in the diff editor (it is the one notification, and closes with the task). */
function reviewHint(): string {
  return vscode.l10n.t("review the proposal: Accept or Reject in the diff editor's title bar (Cancel here rejects)");
}

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('agentHost');
}

function answerLanguage(): AnswerLanguage {
  return resolveAnswerLanguage(config().get<string>('answerLanguage', 'auto'), vscode.env.language);
}

function instructions(task: TaskName, vars: PromptVars): string {
  const override = config().get<string>(`prompts.${task}`, '');
  return buildInstructions(task, answerLanguage(), vars, override);
}

function relPath(uri: vscode.Uri): string {
  return vscode.workspace.asRelativePath(uri, false);
}

function baseVars(target: Target): PromptVars {
  const { document, range } = target;
  const fn = target.fn;
  return {
    languageId: document.languageId,
    languageName: languageName(document.languageId),
    file: relPath(document.uri),
    lines: lineSpan(range),
    symbolName: fn?.name ?? '',
    symbolKind: fn?.kind === vscode.SymbolKind.Method ? 'method' : 'function',
  };
}

/** The chat's short stand-in for a task prompt, e.g. "Docstring: cart_total in pricing.py". */
function chatLabel(task: TaskName, vars: PromptVars): string {
  const names: Record<TaskName, string> = {
    explain: vscode.l10n.t('Explain'),
    docstring: vscode.l10n.t('Docstring'),
    optimize: vscode.l10n.t('Optimize'),
    fix: vscode.l10n.t('Fix'),
    testCases: vscode.l10n.t('Test cases'),
    testCode: vscode.l10n.t('Unit tests'),
    ask: vscode.l10n.t('Ask'),
  };
  const file = path.basename(vars.file ?? '');
  const what = vars.symbolName ? vscode.l10n.t('{0} in {1}', vars.symbolName, file) : vscode.l10n.t('lines {0} of {1}', vars.lines ?? '', file);
  // The colon too is the language's (Chinese takes a full-width one).
  return vscode.l10n.t('{0}: {1}', names[task], what);
}

function diagnosticText(diagnostic: unknown): string {
  return typeof diagnostic === 'string' && diagnostic ? `\nThe editor reports this problem there: "${diagnostic}".` : '';
}

export function registerSelectionCommands(manager: AgentManager, log: vscode.LogOutputChannel, showTranscript: () => void): vscode.Disposable {
  const runner = new TaskRunner(manager, log);
  const proposals = new ProposalPreview();

  /** Shows the conversation: the chat view when the chat is installed, else the transcript channel. */
  const showChat = async () => {
    const all = await vscode.commands.getCommands(true);
    if (all.includes('agentHost.focusChat')) await vscode.commands.executeCommand('agentHost.focusChat');
    else showTranscript();
  };

  const withTarget = (action: (target: Target, diagnostic?: unknown) => Promise<void>) => async (uri?: unknown, range?: unknown, diagnostic?: unknown) => {
    if (refuseInRestrictedMode()) return;
    const target = await resolveTarget(uri, range);
    if (!target) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Open a file and select code first.'));
      return;
    }
    await action(target, diagnostic);
  };

  const selectionContexts = (target: Target): CodeContext[] => {
    const visible = visibleContext(target.document);
    return [toContext('selection', target.document, target.range), ...(visible ? [visible] : [])];
  };

  /** The selection and the visible code as the agent service takes them (the selection stands for code not on screen). */
  const selectedAndVisible = (contexts: CodeContext[]) => {
    const selected = textContext(contexts[0]!);
    return { selected, visible: contexts[1] ? textContext(contexts[1]) : selected };
  };

  const explain = withTarget(async (target, diagnostic) => {
    await showChat();
    await runner.run(vscode.l10n.t('Explaining {0}', path.basename(target.document.uri.fsPath)), async (ctx) => {
      const vars = { ...baseVars(target), diagnosticText: diagnosticText(diagnostic) };
      const contexts = selectionContexts(target);
      const diag = typeof diagnostic === 'string' && diagnostic ? { diagnostic } : {};
      await ctx.ask(instructions('explain', vars), contexts, chatLabel('explain', vars), { task: 'explain', language: answerLanguage(), ...selectedAndVisible(contexts), ...diag });
    });
  });

  const rewrite = (task: 'fix' | 'optimize') =>
    withTarget(async (target, diagnostic) => {
      const title = task === 'fix' ? vscode.l10n.t('Fixing the selection') : vscode.l10n.t('Optimizing the selection');
      await runner.run(title, async (ctx) => {
        const original = target.document.getText(target.range);
        const vars = { ...baseVars(target), diagnosticText: diagnosticText(diagnostic) };
        const contexts = selectionContexts(target);
        const request: SelectionTaskRequest =
          task === 'fix' ? { task, language: answerLanguage(), ...selectedAndVisible(contexts) } : { task, language: answerLanguage(), selected: textContext(contexts[0]!) };
        const answer = await ctx.ask(instructions(task, vars), contexts, chatLabel(task, vars), request);
        const block = pickCodeBlock(answer, target.document.languageId);
        if (!block) throw new Error(vscode.l10n.t('the answer holds no code block'));
        const replacement = fitReplacement(original, block.code);
        if (replacement === original) {
          void vscode.window.showInformationMessage(vscode.l10n.t('The agent proposes no change.'));
          return;
        }
        ctx.report(reviewHint());
        const label = task === 'fix' ? vscode.l10n.t('Proposed fix') : vscode.l10n.t('Proposed optimization');
        await proposals.reviewEdit(target.document, target.range, replacement, `${label}: ${path.basename(target.document.uri.fsPath)}`, ctx.token);
      });
    });

  const docstring = withTarget(async (target) => {
    const { document } = target;
    // The docstring documents a whole function: widen a partial selection to the function around it.
    const fn = target.fn ?? (await enclosingFunction(document, target.range));
    let range = fn && !target.range.isEqual(fn.range) && fn.range.contains(target.range) ? fn.range : target.range;
    // An existing doc comment right above the function is replaced, so it belongs to the range.
    range = withCommentAbove(document, range);
    await runner.run(vscode.l10n.t('Writing a docstring'), async (ctx) => {
      const original = document.getText(range);
      const vars: PromptVars = {
        ...baseVars({ document, range, ...(fn ? { fn } : {}) }),
        stub: stubFunction(original, document.languageId),
        docConvention: docConvention(document.languageId),
      };
      const selection = toContext('selection', document, range);
      const answer = await ctx.ask(instructions('docstring', vars), [selection], chatLabel('docstring', vars), { task: 'docstring', language: answerLanguage(), selected: textContext(selection) });
      const block = pickCodeBlock(answer, document.languageId);
      const doc = extractDocComment(block?.code ?? answer, document.languageId);
      if (!doc) throw new Error(vscode.l10n.t('the answer holds no documentation comment'));
      const proposed = spliceDocComment(original, doc, document.languageId);
      if (!bodyUnchanged(original, proposed, document.languageId)) {
        throw new Error(vscode.l10n.t('the proposal would change the code, not only its documentation; refused'));
      }
      ctx.report(reviewHint());
      await proposals.reviewEdit(document, range, proposed, `${vscode.l10n.t('Proposed docstring')}: ${path.basename(document.uri.fsPath)}`, ctx.token);
    });
  });

  const unitTests = withTarget(async (target) => {
    const { document } = target;
    const fn = target.fn ?? (await enclosingFunction(document, target.range));
    const tgt: Target = fn && target.range.isEmpty ? { document, range: fn.range, fn } : { ...target, ...(fn ? { fn } : {}) };
    await runner.run(vscode.l10n.t('Writing unit tests'), async (ctx) => {
      ctx.report(vscode.l10n.t('gathering the symbol context'));
      const symbols = await symbolContext(tgt);
      const vars = baseVars(tgt);
      ctx.report(vscode.l10n.t('proposing test cases'));
      const casesRequest: SelectionTaskRequest = {
        task: 'testCases',
        language: answerLanguage(),
        filepath: document.uri.fsPath,
        fileContent: document.getText(),
        funcName: tgt.fn?.name ?? '',
        funcLocation: taskRange(tgt.range),
        funcSymbols: await symbolsIn(document, tgt.range),
      };
      const casesAnswer = await ctx.ask(instructions('testCases', vars), [...selectionContexts(tgt), ...symbols], chatLabel('testCases', vars), casesRequest);
      const proposed = parseTestCases(casesAnswer);
      // The agent's answer is JSON; the transcript also gets the cases as a list one can read.
      ctx.note(vscode.l10n.t('Proposed test cases for {0} ({1})', vars.symbolName || path.basename(document.uri.fsPath), proposed.length), casesAsList(proposed));
      ctx.report(vscode.l10n.t('choose the test cases'));
      const chosen = await pickTestCases(proposed, vars.symbolName || path.basename(document.uri.fsPath), ctx.token);
      if (!chosen || chosen.length === 0) return;
      ctx.report(vscode.l10n.t('choose the test framework and file'));
      const plan = await testPlan(document, ctx);
      if (!plan) return;
      const folder = vscode.workspace.getWorkspaceFolder(document.uri);
      if (!folder) throw new Error(vscode.l10n.t('the file is not in a workspace folder'));
      const testUri = vscode.Uri.joinPath(folder.uri, plan.testPath);
      const contexts = [toContext('code under test', document, tgt.range)];
      let existing = false;
      try {
        const testDoc = await vscode.workspace.openTextDocument(testUri);
        existing = true;
        contexts.push(toContext('current test file', testDoc, wholeDocument(testDoc)));
      } catch {
        // a new file
      }
      let referenceContent: string | undefined;
      if (plan.reference && plan.reference !== plan.testPath) {
        const refDoc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, plan.reference));
        contexts.push(toContext('reference test file', refDoc, wholeDocument(refDoc)));
        referenceContent = refDoc.getText();
      }
      ctx.report(vscode.l10n.t('writing the tests'));
      const codeAnswer = await ctx.ask(
        instructions('testCode', {
          ...vars,
          framework: plan.framework,
          testPath: plan.testPath,
          referenceFile: plan.reference ?? '',
          importPath: plan.importPath,
          testFileState: existing ? ' (it exists: keep its tests and add the new ones)' : ' (a new file)',
          cases: casesForPrompt(chosen),
        }),
        contexts,
        `${chatLabel('testCode', vars)} → ${plan.testPath}`,
        {
          task: 'testCode',
          language: answerLanguage(),
          testCasesStr: casesForPrompt(chosen),
          ...(vars.symbolName ? { functionName: vars.symbolName } : {}),
          filePath: plan.testPath,
          relevantContent: document.getText(tgt.range),
          ...(referenceContent ? { referenceContent } : {}),
        },
      );
      const block = pickCodeBlock(codeAnswer, document.languageId);
      if (!block) throw new Error(vscode.l10n.t('the answer holds no code block'));
      ctx.report(reviewHint());
      const content = block.code.endsWith('\n') ? block.code : `${block.code}\n`;
      await proposals.reviewFile(testUri, content, `${vscode.l10n.t('Proposed tests')}: ${plan.testPath}`, ctx.token);
    });
  });

  const ask = withTarget(async (target) => {
    const all = await vscode.commands.getCommands(true);
    if (all.includes('agentHost.addSelectionToChat')) {
      // The chat attaches the selection as a context chip; the user types the question there.
      const editor = await vscode.window.showTextDocument(target.document, { preserveFocus: false });
      editor.selection = new vscode.Selection(target.range.start, target.range.end);
      await vscode.commands.executeCommand('agentHost.addSelectionToChat');
      await vscode.commands.executeCommand('agentHost.focusChat');
      return;
    }
    const question = await vscode.window.showInputBox({
      prompt: vscode.l10n.t('Ask the agent about the selection'),
      ignoreFocusOut: true,
    });
    if (!question) return;
    showTranscript();
    await runner.run(vscode.l10n.t('Asking about the selection'), async (ctx) => {
      await ctx.ask(instructions('ask', { ...baseVars(target), question }), selectionContexts(target), question);
    });
  });

  const codeLens = new FunctionCodeLens();
  return vscode.Disposable.from(
    runner,
    proposals,
    codeLens,
    registerCommand(SELECTION_COMMANDS.explain, explain),
    registerCommand(SELECTION_COMMANDS.docstring, docstring),
    registerCommand(SELECTION_COMMANDS.optimize, rewrite('optimize')),
    registerCommand(SELECTION_COMMANDS.fix, rewrite('fix')),
    registerCommand(SELECTION_COMMANDS.tests, unitTests),
    registerCommand(SELECTION_COMMANDS.ask, ask),
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, codeLens),
    vscode.languages.registerCodeActionsProvider({ scheme: 'file' }, new AgentQuickFixes(), {
      providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
    }),
  );
}

function wholeDocument(document: vscode.TextDocument): vscode.Range {
  return new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
}

/** Extends `range` upwards over a doc comment that sits right above it (`/** … *\/` or `//` lines). */
function withCommentAbove(document: vscode.TextDocument, range: vscode.Range): vscode.Range {
  const style = docStyle(document.languageId);
  if (style === 'python') return range;
  let line = range.start.line - 1;
  if (line < 0) return range;
  const text = (l: number) => document.lineAt(l).text;
  if (style === 'block' && /\*\/\s*$/.test(text(line))) {
    let start = line;
    while (start > 0 && !/^\s*\/\*\*/.test(text(start))) start--;
    if (!/^\s*\/\*\*/.test(text(start))) return range;
    return new vscode.Range(start, 0, range.end.line, range.end.character);
  }
  if (style === 'line' && /^\s*\/\//.test(text(line))) {
    while (line > 0 && /^\s*\/\//.test(text(line - 1))) line--;
    return new vscode.Range(line, 0, range.end.line, range.end.character);
  }
  // The function's own first line: take it whole, so the comment lands at its indentation.
  return range.start.character > 0 && document.lineAt(range.start.line).text.slice(0, range.start.character).trim() === ''
    ? new vscode.Range(range.start.line, 0, range.end.line, range.end.character)
    : range;
}

async function testPlan(document: vscode.TextDocument, ctx: TaskContext) {
  const folder = vscode.workspace.getWorkspaceFolder(document.uri);
  if (!folder) throw new Error(vscode.l10n.t('the file is not in a workspace folder'));
  const found = await vscode.workspace.findFiles(
    new vscode.RelativePattern(folder, '**/*.{py,ts,tsx,js,jsx,mjs,cjs,toml,cfg,ini,json}'),
    '{**/node_modules/**,**/.git/**,**/.venv/**,**/dist/**,**/out/**}',
    5000,
  );
  const files = found.map((u) => path.posix.normalize(vscode.workspace.asRelativePath(u, false)));
  const texts = new Map<string, string>();
  for (const rel of files) {
    if (/(^|\/)(package\.json|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini)$|test/.test(rel)) {
      texts.set(rel, new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder.uri, rel))));
    }
  }
  const view = { languageId: document.languageId, source: relPath(document.uri), files, read: (rel: string) => texts.get(rel) };
  let plan = planTests(view);
  if (!plan.confident || !plan.framework) {
    const pick = await vscode.window.showQuickPick(frameworksFor(document.languageId), {
      title: vscode.l10n.t('Which test framework does this project use?'),
      ignoreFocusOut: true,
    });
    if (!pick || ctx.token.isCancellationRequested) return undefined;
    plan = planTests(view, pick as Framework);
  }
  return plan as typeof plan & { framework: Framework };
}

/** Explain / Docstring / Tests above each function and method; `agentHost.codeLens.enabled` toggles them. */
/** Test files by the usual names: `*.test.ts`, `*.spec.js`, `test_*.py`, `*_test.py`, `*_test.go`, files under `__tests__/`. */
const TEST_FILE = /(\.(test|spec)\.[cm]?[jt]sx?$)|(\/test_[^/]*\.py$)|(_test\.(py|go)$)|(\/__tests__\/)/;

class FunctionCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly sub = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('agentHost.codeLens.enabled')) this.changed.fire();
  });
  private readonly trust = vscode.workspace.onDidGrantWorkspaceTrust(() => this.changed.fire());

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    // In Restricted Mode no agent runs: no lenses that could only refuse.
    if (!vscode.workspace.isTrusted || !vscode.workspace.getConfiguration('agentHost').get<boolean>('codeLens.enabled', true)) return [];
    const lenses: vscode.CodeLens[] = [];
    // No lenses in test files (explaining `test(…)` blocks or writing tests for tests helps nobody), nor on the
    // callbacks the language service lists as functions (`describe('…') callback`).
    if (TEST_FILE.test(document.uri.path)) return lenses;
    for (const fn of await functionSymbols(document)) {
      if (/ callback$/.test(fn.name)) continue;
      const at = new vscode.Range(fn.range.start, fn.range.start);
      const args = [document.uri, fn.range];
      lenses.push(
        new vscode.CodeLens(at, { title: vscode.l10n.t('Explain'), command: SELECTION_COMMANDS.explain, arguments: args }),
        new vscode.CodeLens(at, { title: vscode.l10n.t('Docstring'), command: SELECTION_COMMANDS.docstring, arguments: args }),
        new vscode.CodeLens(at, { title: vscode.l10n.t('Tests'), command: SELECTION_COMMANDS.tests, arguments: args }),
      );
    }
    return lenses;
  }

  dispose(): void {
    this.sub.dispose();
    this.trust.dispose();
    this.changed.dispose();
  }
}

/** "Fix with agent" and "Explain problem" on each diagnostic under the cursor. */
class AgentQuickFixes implements vscode.CodeActionProvider {
  async provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): Promise<vscode.CodeAction[]> {
    const actions: vscode.CodeAction[] = [];
    if (!vscode.workspace.isTrusted) return actions;
    for (const diagnostic of context.diagnostics.slice(0, 3)) {
      // The agent sees the whole function the problem is in (else the problem's lines).
      const fn = await enclosingFunction(document, diagnostic.range);
      const range = fn?.range ?? new vscode.Range(diagnostic.range.start.line, 0, diagnostic.range.end.line, document.lineAt(diagnostic.range.end.line).text.length);
      const args = [document.uri, range, diagnostic.message];
      const fix = new vscode.CodeAction(vscode.l10n.t('Fix with agent'), vscode.CodeActionKind.QuickFix);
      fix.command = { title: fix.title, command: SELECTION_COMMANDS.fix, arguments: args };
      fix.diagnostics = [diagnostic];
      const explain = new vscode.CodeAction(vscode.l10n.t('Explain problem'), vscode.CodeActionKind.QuickFix);
      explain.command = { title: explain.title, command: SELECTION_COMMANDS.explain, arguments: args };
      explain.diagnostics = [diagnostic];
      actions.push(fix, explain);
    }
    return actions;
  }
}
