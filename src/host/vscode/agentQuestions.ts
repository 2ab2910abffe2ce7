import * as vscode from 'vscode';
import { inertMarkup } from '../../core/visibleText';
import type { Logger } from '../../core/log';
import { elicitationUrl } from '../openTargets';

/** `_agentao.cn/ask_user` parameters. */
interface AskUser {
  question?: unknown;
  header?: unknown;
  options?: unknown;
  multiple?: unknown;
  allowCustom?: unknown;
}

function cancellation(signal: AbortSignal): vscode.CancellationTokenSource {
  const source = new vscode.CancellationTokenSource();
  signal.addEventListener('abort', () => source.cancel(), { once: true });
  return source;
}

function optionLabel(o: unknown): { label: string; description?: string } | undefined {
  if (typeof o === 'string') return { label: o };
  if (o && typeof o === 'object') {
    const r = o as Record<string, unknown>;
    const label = r.label ?? r.value ?? r.name ?? r.text;
    if (typeof label === 'string') return { label, ...(typeof r.description === 'string' ? { description: r.description } : {}) };
  }
  return undefined;
}

/**
 * Free-form question (input box) or a choice (quick pick, optionally multiple, optionally "Other…"). The title
 * names the agent and carries the question, so it stays in view while the person types (a quick pick's
 * placeholder goes at the first keystroke).
 */
export async function askUser(params: unknown, signal: AbortSignal, agentName?: string): Promise<{ outcome: 'answered'; text: string } | { outcome: 'cancelled' }> {
  const p = (params ?? {}) as AskUser;
  const question = typeof p.question === 'string' ? p.question : vscode.l10n.t('The agent has a question');
  const who = agentName ?? vscode.l10n.t('The agent');
  const title = typeof p.header === 'string' ? vscode.l10n.t('{0} asks ({1}): {2}', who, p.header, question) : vscode.l10n.t('{0} asks: {1}', who, question);
  const options = Array.isArray(p.options) ? p.options.map(optionLabel).filter((o): o is { label: string } => !!o) : [];
  const source = cancellation(signal);
  try {
    const input = async (): Promise<string | undefined> => vscode.window.showInputBox({ title, prompt: inertMarkup(question), ignoreFocusOut: true }, source.token);
    if (options.length === 0) {
      const text = await input();
      return text === undefined ? { outcome: 'cancelled' } : { outcome: 'answered', text };
    }
    const other = { label: vscode.l10n.t('Other…'), alwaysShow: true };
    const items: vscode.QuickPickItem[] = [...options, ...(p.allowCustom ? [other] : [])];
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
}

interface PropertySchema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  oneOf?: { const?: unknown; title?: string }[];
  default?: unknown;
  items?: { enum?: unknown[] };
}

/**
 * ACP `elicitation/create`. Form mode: one input per schema property (enums as quick picks, booleans as
 * yes/no); url mode: an http(s) URL is shown whole and opened only after the person agrees, any other is
 * declined and said (elicitationUrl). Answers `{action: accept|decline|cancel}`.
 */
export async function elicit(params: unknown, signal: AbortSignal, agentName?: string, log?: Logger): Promise<Record<string, unknown>> {
  const p = (params ?? {}) as { mode?: unknown; message?: unknown; url?: unknown; requestedSchema?: { properties?: Record<string, PropertySchema>; required?: string[] | null } };
  const who = agentName ?? vscode.l10n.t('The agent');
  const message = vscode.l10n.t('{0} asks: {1}', who, typeof p.message === 'string' ? p.message : '');
  const source = cancellation(signal);
  try {
    if (p.mode === 'url' && typeof p.url === 'string') {
      const target = elicitationUrl(p.url);
      if (!target.ok) {
        log?.warn(`${who} asked to open ${JSON.stringify(p.url)}; declined: ${target.reason}`);
        // The URL stays out of the notification, which would render `[label](command:…)` in it as a link.
        void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('{0} asked to open a link, which was not opened: {1} (the log has the link).', who, target.reason)));
        return { action: 'decline' };
      }
      const open = vscode.l10n.t('Open {0}', target.host);
      const pick = await vscode.window.showWarningMessage(vscode.l10n.t('{0} asks you to open {1}', who, target.url), { modal: true, detail: message }, open);
      if (pick !== open) return { action: 'decline' };
      await vscode.env.openExternal(vscode.Uri.parse(target.url));
      return { action: 'accept' };
    }
    if (p.mode !== undefined && p.mode !== 'form') return { action: 'decline' };
    const props = p.requestedSchema?.properties ?? {};
    const required = new Set(p.requestedSchema?.required ?? []);
    const content: Record<string, unknown> = {};
    const names = Object.keys(props);
    for (const [i, name] of names.entries()) {
      const s = props[name]!;
      const title = `${message} (${i + 1}/${names.length})`;
      const prompt = s.title ?? name;
      const choices = s.enum ?? s.oneOf?.map((o) => o.const) ?? s.items?.enum;
      let value: unknown;
      if (s.type === 'boolean') {
        const yes = vscode.l10n.t('Yes');
        const no = vscode.l10n.t('No');
        const pick = await vscode.window.showQuickPick([yes, no], { title, placeHolder: prompt, ignoreFocusOut: true }, source.token);
        if (pick === undefined) return { action: 'cancel' };
        value = pick === yes;
      } else if (choices) {
        const pick = await vscode.window.showQuickPick(
          choices.map((c) => ({ label: String(c), value: c })),
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
              if (!v && required.has(name)) return vscode.l10n.t('Required');
              if (v && numeric && !Number.isFinite(Number(v))) return vscode.l10n.t('Enter a number');
              return undefined;
            },
          },
          source.token,
        );
        if (text === undefined) return { action: 'cancel' };
        if (text === '' && !required.has(name)) continue;
        value = numeric ? Number(text) : text;
      }
      content[name] = value;
    }
    return { action: 'accept', content };
  } finally {
    source.dispose();
  }
}
