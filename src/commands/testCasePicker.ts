/**
 * Step one and a half of the unit-test command: the proposed cases in a multi-select quick pick, all
 * checked; the user unchecks, edits (pencil on a row) or adds cases (+ in the title) before the tests are
 * written.
 */
import * as vscode from 'vscode';
import type { TestCase } from '../tasks/testCases';

interface CaseItem extends vscode.QuickPickItem {
  index: number;
}

type Outcome = { kind: 'accept'; picked: number[] } | { kind: 'edit'; index: number; picked: number[] } | { kind: 'add'; picked: number[] } | { kind: 'hide' };

const EDIT_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: vscode.l10n.t('Edit this case') };
const ADD_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('add'), tooltip: vscode.l10n.t('Add a case') };

function describe(c: TestCase): string {
  const io = c.input !== undefined ? `${c.input} → ${c.expected ?? '?'}` : '';
  return [c.description, io].filter((s) => s).join(' — ');
}

async function editCase(existing: TestCase | undefined): Promise<TestCase | undefined> {
  const title = await vscode.window.showInputBox({
    title: existing ? vscode.l10n.t('Edit the test case') : vscode.l10n.t('Add a test case'),
    prompt: vscode.l10n.t('What the test checks'),
    value: existing?.title ?? '',
    ignoreFocusOut: true,
  });
  if (!title) return undefined;
  const kind = existing?.kind ?? ((await vscode.window.showQuickPick(['happy', 'edge'], { title: vscode.l10n.t('Kind of case') })) as TestCase['kind'] | undefined) ?? 'happy';
  const description = await vscode.window.showInputBox({
    title,
    prompt: vscode.l10n.t('Details: inputs and the expected result (optional)'),
    value: existing ? existing.description : '',
    ignoreFocusOut: true,
  });
  return {
    title,
    kind,
    description: description ?? '',
    ...(existing?.input !== undefined && existing.title === title ? { input: existing.input } : {}),
    ...(existing?.expected !== undefined && existing.title === title ? { expected: existing.expected } : {}),
  };
}

function showOnce(cases: TestCase[], picked: Set<number>, subject: string, token: vscode.CancellationToken): Promise<Outcome> {
  const qp = vscode.window.createQuickPick<CaseItem>();
  qp.title = vscode.l10n.t('Unit tests for {0}: choose the cases', subject);
  qp.placeholder = vscode.l10n.t('Check the cases to write; the pencil edits a case, + adds one');
  qp.canSelectMany = true;
  qp.ignoreFocusOut = true;
  qp.matchOnDetail = true;
  qp.buttons = [ADD_BUTTON];
  const items = cases.map<CaseItem>((c, index) => ({
    index,
    label: c.title,
    description: c.kind === 'edge' ? vscode.l10n.t('edge case') : vscode.l10n.t('happy path'),
    detail: describe(c),
    buttons: [EDIT_BUTTON],
  }));
  qp.items = items;
  qp.selectedItems = items.filter((i) => picked.has(i.index));
  return new Promise<Outcome>((resolve) => {
    let done = false;
    const finish = (o: Outcome) => {
      if (done) return;
      done = true;
      resolve(o);
      qp.hide();
    };
    const current = () => qp.selectedItems.map((i) => i.index);
    const subs = [
      qp.onDidAccept(() => finish({ kind: 'accept', picked: current() })),
      qp.onDidTriggerItemButton((e) => finish({ kind: 'edit', index: e.item.index, picked: current() })),
      qp.onDidTriggerButton(() => finish({ kind: 'add', picked: current() })),
      qp.onDidHide(() => {
        finish({ kind: 'hide' });
        for (const s of subs) s.dispose();
        qp.dispose();
      }),
      token.onCancellationRequested(() => finish({ kind: 'hide' })),
    ];
    qp.show();
  });
}

/** The cases the user chose (edited and added ones included), or undefined when dismissed. */
export async function pickTestCases(proposed: TestCase[], subject: string, token: vscode.CancellationToken): Promise<TestCase[] | undefined> {
  const cases = [...proposed];
  let picked = new Set(cases.map((_, i) => i));
  for (;;) {
    const outcome = await showOnce(cases, picked, subject, token);
    if (outcome.kind === 'hide' || token.isCancellationRequested) return undefined;
    picked = new Set(outcome.picked);
    if (outcome.kind === 'accept') return cases.filter((_, i) => picked.has(i));
    const edited = await editCase(outcome.kind === 'edit' ? cases[outcome.index] : undefined);
    if (!edited) continue;
    if (outcome.kind === 'edit') cases[outcome.index] = edited;
    else cases.push(edited);
    picked.add(outcome.kind === 'edit' ? outcome.index : cases.length - 1);
  }
}
