import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import { commandWordsOf, displayWords } from '../host/commandWords';
import { workspaceRelative } from './displayPaths';
import type { PermissionAnswer, PermissionPresenter } from '../host/permissionBroker';
import { type RuleOffer, type RuleWhere, ruleOffer } from '../host/permissionRules';
import { cleanPatch, commandOf, OPTION_KIND_LABELS, optionContradicts, type PermissionRequestInfo } from '../session/permissions';
import type { PermissionEntity, PermissionOption, ToolCallEntity } from '../session/sessionModel';
import { permissionOptionLabel } from '../shared/permissionOptions';
import { closeDiffsShowing } from './virtualDocuments';

/** Formats a tool call's rawInput as the few lines a person needs to decide. */
export function summarizeRawInput(rawInput: unknown): string {
  if (rawInput == null) return '';
  if (typeof rawInput !== 'object') return String(rawInput);
  const o = rawInput as Record<string, unknown>;
  const parsed = commandWordsOf(rawInput);
  // Argv is shown quoted as a shell would need it, so a word with spaces reads as one word.
  if (parsed && 'words' in parsed && Array.isArray((rawInput as { command?: unknown }).command)) return `$ ${displayWords(parsed.words)}`;
  const command = commandOf(rawInput);
  if (command !== undefined) return `$ ${command}`;
  const file = o.file_path ?? o.filePath ?? o.filepath ?? o.path ?? o.abspath;
  const lines: string[] = [];
  if (file !== undefined) lines.push(String(file));
  const patch = o.diff ?? o.patch;
  const content = typeof patch === 'string' ? cleanPatch(patch) : (o.content ?? o.new_string ?? o.newString ?? o.newText);
  if (typeof content === 'string') lines.push(content.length > 600 ? `${content.slice(0, 600)}…` : content);
  if (lines.length) return lines.join('\n');
  const json = JSON.stringify(rawInput, null, 1);
  return json.length > 600 ? `${json.slice(0, 600)}…` : json;
}

/** The first `{type:"diff", path, oldText, newText}` of a tool call's content, if any. */
export function diffOf(request: PermissionRequestInfo): { path: string; oldText: string | null; newText: string } | undefined {
  for (const c of request.toolCall.content) {
    const d = c as { type?: unknown; path?: unknown; oldText?: unknown; newText?: unknown };
    if (d.type === 'diff' && typeof d.path === 'string' && typeof d.newText === 'string') {
      return { path: d.path, oldText: typeof d.oldText === 'string' ? d.oldText : null, newText: d.newText };
    }
  }
  return undefined;
}

/**
 * A button label for one option: what its kind does ("Allow once", "Always allow", "Reject", "Always
 * reject"), the agent's wording beside it when it differs, and a warning sign when that wording says the
 * opposite of the kind (the kind is what is recorded, never the name).
 */
export function optionLabel(option: PermissionOption): string {
  const kindLabel = OPTION_KIND_LABELS[option.kind];
  return permissionOptionLabel({ name: option.name, contradicts: optionContradicts(option) }, kindLabel && vscode.l10n.t(kindLabel), kindLabel ? [kindLabel] : []);
}

/** Longest rule text a button shows word for word; a longer one is named in the detail instead. */
const BUTTON_RULE_CHARS = 48;

/** What an "always" rule made from this request names, as a person reads it (`npm test`, a file, a title). */
export function ruleText(offer: RuleOffer): string | undefined {
  const e = offer.exact;
  if (e?.command) return `\`${displayWords(e.command)}\``;
  if (e?.path !== undefined) return `\`${vscode.workspace.asRelativePath(e.path)}\``;
  if (e?.title !== undefined) return `“${e.title}”`;
  return undefined;
}

/** A button per way to answer: the agent's options, an "always" one saying the rule it makes, and — where safe — a broader prefix rule. */
export function answerButtons(request: PermissionRequestInfo, offer: RuleOffer = ruleOffer(request.toolCall)): { title: string; answer: PermissionAnswer }[] {
  const what = ruleText(offer);
  const shown = (text: string) => (text.length <= BUTTON_RULE_CHARS ? text : vscode.l10n.t('this exact command'));
  const out: { title: string; answer: PermissionAnswer }[] = [];
  for (const o of byKind(request.options)) {
    const always = o.kind === 'allow_always' || o.kind === 'reject_always';
    // Nothing safe to remember (a line that is not plain words): the "once" button says it all.
    if (always && !what && request.options.some((x) => x.kind === o.kind.replace('always', 'once'))) continue;
    if (!always || !what) {
      out.push({ title: optionLabel(o), answer: { optionId: o.optionId } });
      continue;
    }
    const kindLabel = o.kind === 'allow_always' ? vscode.l10n.t('Always allow {0}', shown(what)) : vscode.l10n.t('Always reject {0}', shown(what));
    const plain = OPTION_KIND_LABELS[o.kind]!;
    out.push({ title: permissionOptionLabel({ name: o.name, contradicts: optionContradicts(o) }, kindLabel, [plain, vscode.l10n.t(plain)]), answer: { optionId: o.optionId } });
    if (o.kind === 'allow_always' && offer.prefix) {
      const prefix = `\`${displayWords(offer.prefix)} …\``;
      out.push({ title: vscode.l10n.t('Always allow commands starting with {0}', prefix), answer: { optionId: o.optionId, scope: 'prefix' } });
    }
  }
  return out;
}

/** A pending permission entity with the buttons `answerButtons` gives it (the chat's inline card shows them). */
export function withAnswerButtons(entity: PermissionEntity, toolCall: ToolCallEntity, offer: RuleOffer): PermissionEntity {
  const buttons = answerButtons({ sessionId: '', toolCall, options: entity.options }, offer).map(({ title, answer }) => ({
    optionId: answer.optionId,
    kind: entity.options.find((o) => o.optionId === answer.optionId)?.kind ?? '',
    label: title,
    ...(answer.scope === 'prefix' ? { scope: 'prefix' as const } : {}),
  }));
  return { ...entity, buttons };
}

/** Where a rule is kept, as a person reads it (the dialog, the rules view, the card). */
export function whereLabel(where: RuleWhere): string {
  if (where === 'session') return vscode.l10n.t('this session (until the window closes)');
  return where === 'user' ? vscode.l10n.t('everywhere (every workspace)') : vscode.l10n.t('this workspace');
}

/**
 * The "Always…" follow-up: each "always" answer kept in each place (this session, this workspace,
 * everywhere), in a quick pick; undefined when closed (the dialog asks again).
 */
async function pickAlwaysWhere(answers: { title: string; answer: PermissionAnswer }[], places: readonly RuleWhere[]): Promise<PermissionAnswer | undefined> {
  const items = answers.flatMap(({ title, answer }) => places.map((where) => ({ label: title, description: whereLabel(where), answer: { ...answer, where } })));
  const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Keep the rule for this session, this workspace or everywhere'), matchOnDescription: true });
  return picked?.answer;
}

/** The detail's lines on what "always" would remember, or that this line never can be. */
export function ruleDetail(request: PermissionRequestInfo, offer: RuleOffer = ruleOffer(request.toolCall)): string {
  const hasAlways = request.options.some((o) => o.kind.endsWith('_always'));
  if (offer.protectedFile) return vscode.l10n.t('This names a protected file, {0}: it is asked every time and never made a rule.', offer.protectedFile);
  if (offer.notPlain) return hasAlways ? vscode.l10n.t('This command cannot become a rule ({0}): it is asked every time.', offer.notPlain) : '';
  const what = ruleText(offer);
  if (!hasAlways || !what) return '';
  const lines = [
    offer.exact?.command
      ? vscode.l10n.t('“Always” makes a rule for exactly {0} in this workspace: any other command line still asks.', what)
      : vscode.l10n.t('“Always” makes a rule for {0} in this workspace.', what),
  ];
  if (offer.prefix)
    lines.push(vscode.l10n.t('“Commands starting with” also covers {0} followed only by simple arguments (no option, no space or special character in a word).', `\`${displayWords(offer.prefix)}\``));
  lines.push(vscode.l10n.t('“Always…” keeps the rule for this session or everywhere instead.'));
  lines.push(vscode.l10n.t('Rules are listed, added and revoked in the Permission Rules view.'));
  return lines.join('\n');
}

/** The modal's question: its verb follows the tool's kind (an edit is not "run"). */
export function permissionTitle(kind: string | undefined, what: string): string {
  switch (kind) {
    case 'read':
      return vscode.l10n.t('The agent wants to read: {0}', what);
    case 'edit':
      return vscode.l10n.t('The agent wants to edit: {0}', what);
    case 'delete':
      return vscode.l10n.t('The agent wants to delete: {0}', what);
    case 'move':
      return vscode.l10n.t('The agent wants to move: {0}', what);
    case 'search':
      return vscode.l10n.t('The agent wants to search: {0}', what);
    case 'execute':
      return vscode.l10n.t('The agent wants to run: {0}', what);
    case 'fetch':
      return vscode.l10n.t('The agent wants to fetch: {0}', what);
    case 'switch_mode':
      return vscode.l10n.t('The agent wants to switch mode: {0}', what);
    default:
      return vscode.l10n.t('The agent wants to use a tool: {0}', what);
  }
}

/** Buttons in a fixed order by kind: Allow once, Always allow, Reject, Always reject, then anything else. */
const KIND_ORDER = ['allow_once', 'allow_always', 'reject_once', 'reject_always'];
function byKind(options: readonly PermissionOption[]): PermissionOption[] {
  const rank = (o: PermissionOption) => (KIND_ORDER.includes(o.kind) ? KIND_ORDER.indexOf(o.kind) : KIND_ORDER.length);
  return [...options].sort((a, b) => rank(a) - rank(b));
}

/**
 * A modal dialog with a button per option (labelled by its kind, the agent's wording beside; rejects first);
 * closing it (Cancel, Escape) answers cancelled, which stops the turn — the detail says so. The buttons keep
 * one order every time it shows, and the default (Enter) never approves: "Show Diff" when the request carries
 * a diff (it opens the diff beside the editor, and the dialog asks again, the same), else Reject, else Cancel.
 * The diff's tab closes once the request is answered. A request the agent changed while it was
 * open says what changed. An answer given after the request was withdrawn is dropped with a notification (a
 * modal cannot be closed by code).
 */
export function modalPermissionPresenter(
  openDiff: (diff: NonNullable<ReturnType<typeof diffOf>>) => Promise<vscode.Uri>,
  offerFor: (request: PermissionRequestInfo) => RuleOffer = (r) => ruleOffer(r.toolCall),
  places: () => readonly RuleWhere[] = () => ['workspace'],
): PermissionPresenter {
  return async ({ request }, signal) => {
    const { toolCall, options } = request;
    const offer = offerFor(request);
    const warnings = [
      ...(request.changed?.length ? [vscode.l10n.t('⚠ The agent changed this request while it was being asked:'), ...request.changed.map((c) => `  ${c}`)] : []),
      ...options.filter(optionContradicts).map((o) => vscode.l10n.t('⚠ The option “{0}” is named against what it does ({1}).', o.name, vscode.l10n.t(OPTION_KIND_LABELS[o.kind] ?? o.kind))),
    ];
    const explain = vscode.l10n.t('Reject tells the agent no and lets it go on; Cancel (Escape) stops the turn.');
    // Paths read relative to the workspace, but a command line is shown exactly as it will run.
    const readable = (text: string) => (toolCall.toolKind === 'execute' || commandWordsOf(toolCall.rawInput) ? text : workspaceRelative(text));
    const detail = [warnings.join('\n'), vscode.l10n.t('Kind: {0}', toolCall.toolKind), readable(summarizeRawInput(toolCall.rawInput)), ruleDetail(request, offer), explain]
      .filter(Boolean)
      .join('\n\n');
    const title = permissionTitle(toolCall.toolKind, readable(toolCall.title || toolCall.id));
    const diff = diffOf(request);
    type Button = { title: string; answer: PermissionAnswer | undefined; isCloseAffordance?: boolean };
    const showDiff: Button = { title: vscode.l10n.t('Show Diff'), answer: undefined };
    // One order every time it shows, and the first (Enter) never approves: Show Diff, else a reject, else Cancel.
    const isReject = (b: Button) => options.find((o) => o.optionId === b.answer?.optionId)?.kind.startsWith('reject') ?? false;
    const answers = answerButtons(request, offer);
    const items: Button[] = [...answers.filter(isReject), ...answers.filter((b) => !isReject(b))];
    const first: Button | undefined = diff ? showDiff : items.some(isReject) ? undefined : { title: vscode.l10n.t('Cancel'), answer: undefined, isCloseAffordance: true };
    const always = answers.filter((b) => options.find((o) => o.optionId === b.answer.optionId)?.kind.endsWith('_always') && ruleText(offer));
    // Where a rule is kept is a second, rarer choice: one button opens it, so the dialog keeps its few buttons.
    const elsewhere: Button = { title: vscode.l10n.t('Always…'), answer: undefined };
    const buttons = [...(first ? [first] : []), ...items, ...(always.length && places().length > 1 ? [elsewhere] : [])];
    let shown: vscode.Uri | undefined;
    try {
      for (;;) {
        const picked = await vscode.window.showWarningMessage(title, { modal: true, detail }, ...buttons);
        // Withdrawn while it was up (time-out, the agent exited or asked again, a Stop from a key binding):
        // VS Code cannot close a modal from an extension, so the answer goes nowhere, and the person is told.
        if (signal.aborted) {
          if (picked?.answer !== undefined) {
            void vscode.window.showInformationMessage(
              inertMarkup(vscode.l10n.t('Atrium: the request "{0}" was withdrawn before you answered; nothing was allowed or recorded.', toolCall.title || toolCall.id)),
            );
          }
          return undefined;
        }
        if (picked === elsewhere) {
          const answer = await pickAlwaysWhere(always, places());
          if (answer && !signal.aborted) return answer;
          if (signal.aborted) return undefined;
          continue;
        }
        if (picked === showDiff && diff) {
          shown = await openDiff(diff);
          continue;
        }
        return picked?.answer;
      }
    } finally {
      if (shown) await closeDiffsShowing(shown).catch(() => undefined);
    }
  };
}
