/**
 * The agent's questions in VS Code (QuestionPrompts): a question as an input box or a quick pick, a form as
 * one input per field, a checked link in a modal that shows it whole. Titles name the agent and carry the
 * question, so it stays in view while the person types (a quick pick's placeholder goes at the first keystroke).
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import type { QuestionPrompts } from '../host/agentQuestions';
import type { AskUserAnswer, ElicitAnswer } from '../session/sessionHost';

function cancellation(signal: AbortSignal): vscode.CancellationTokenSource {
  const source = new vscode.CancellationTokenSource();
  signal.addEventListener('abort', () => source.cancel(), { once: true });
  return source;
}

export const questionDialogs: QuestionPrompts = {
  /** Free-form question (input box) or a choice (quick pick, optionally multiple, optionally "Other…"). */
  async askUser(agent, p, signal): Promise<AskUserAnswer> {
    const question = p.question ?? vscode.l10n.t('The agent has a question');
    const title = p.header !== undefined ? vscode.l10n.t('{0} asks ({1}): {2}', agent, p.header, question) : vscode.l10n.t('{0} asks: {1}', agent, question);
    const source = cancellation(signal);
    try {
      const input = async (): Promise<string | undefined> => vscode.window.showInputBox({ title, prompt: inertMarkup(question), ignoreFocusOut: true }, source.token);
      if (p.options.length === 0) {
        const text = await input();
        return text === undefined ? { outcome: 'cancelled' } : { outcome: 'answered', text };
      }
      const other = { label: vscode.l10n.t('Other…'), alwaysShow: true };
      const items: vscode.QuickPickItem[] = [...p.options, ...(p.allowCustom ? [other] : [])];
      if (p.multiple) {
        const picked = await vscode.window.showQuickPick(items, { title, placeHolder: question, canPickMany: true, ignoreFocusOut: true }, source.token);
        if (!picked) return { outcome: 'cancelled' };
        const labels = picked.filter((i) => i !== other).map((i) => i.label);
        if (picked.includes(other)) {
          const extra = await input();
          if (extra === undefined) return { outcome: 'cancelled' };
          labels.push(extra);
        }
        return { outcome: 'answered', text: labels.join(', ') };
      }
      const picked = await vscode.window.showQuickPick(items, { title, placeHolder: question, ignoreFocusOut: true }, source.token);
      if (!picked) return { outcome: 'cancelled' };
      if (picked !== other) return { outcome: 'answered', text: picked.label };
      const text = await input();
      return text === undefined ? { outcome: 'cancelled' } : { outcome: 'answered', text };
    } finally {
      source.dispose();
    }
  },

  /** Enums as quick picks (several for an array), booleans as yes/no, the rest as input boxes (numbers checked). */
  async fillForm(agent, form, signal): Promise<ElicitAnswer> {
    const message = vscode.l10n.t('{0} asks: {1}', agent, form.message);
    const source = cancellation(signal);
    try {
      const content: Record<string, unknown> = {};
      for (const [i, s] of form.fields.entries()) {
        const title = `${message} (${i + 1}/${form.fields.length})`;
        const prompt = s.title ?? s.name;
        let value: unknown;
        if (s.type === 'boolean') {
          const yes = vscode.l10n.t('Yes');
          const no = vscode.l10n.t('No');
          const pick = await vscode.window.showQuickPick([yes, no], { title, placeHolder: prompt, ignoreFocusOut: true }, source.token);
          if (pick === undefined) return { action: 'cancel' };
          value = pick === yes;
        } else if (s.choices) {
          const pick = await vscode.window.showQuickPick(
            s.choices.map((c) => ({ label: String(c), value: c })),
            { title, placeHolder: prompt, canPickMany: s.type === 'array', ignoreFocusOut: true },
            source.token,
          );
          if (pick === undefined) return { action: 'cancel' };
          value = Array.isArray(pick) ? pick.map((x) => x.value) : (pick as { value: unknown }).value;
        } else {
          const numeric = s.type === 'number' || s.type === 'integer';
          const text = await vscode.window.showInputBox(
            {
              title,
              prompt: inertMarkup(s.description ? `${prompt} — ${s.description}` : prompt),
              ...(s.default !== undefined ? { value: String(s.default) } : {}),
              ignoreFocusOut: true,
              validateInput: (v) => {
                if (!v && s.required) return vscode.l10n.t('Required');
                if (v && numeric && !Number.isFinite(Number(v))) return vscode.l10n.t('Enter a number');
                return undefined;
              },
            },
            source.token,
          );
          if (text === undefined) return { action: 'cancel' };
          if (text === '' && !s.required) continue;
          value = numeric ? Number(text) : text;
        }
        content[s.name] = value;
      }
      return { action: 'accept', content };
    } finally {
      source.dispose();
    }
  },

  async openLink(agent, message, target): Promise<boolean> {
    const open = vscode.l10n.t('Open {0}', target.host);
    const detail = vscode.l10n.t('{0} asks: {1}', agent, message);
    const pick = await vscode.window.showWarningMessage(vscode.l10n.t('{0} asks you to open {1}', agent, target.url), { modal: true, detail }, open);
    if (pick !== open) return false;
    await vscode.env.openExternal(vscode.Uri.parse(target.url));
    return true;
  },

  linkRefused(agent, reason): void {
    // The URL stays out of the notification, which would render `[label](command:…)` in it as a link.
    void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('{0} asked to open a link, which was not opened: {1} (the log has the link).', agent, reason)));
  },
};
