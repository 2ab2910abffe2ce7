/**
 * pi's RPC settings in the header, in the display language: the RPC adapter publishes them as config options
 * named in English (src/rpc/stateSync.ts, `publishConfigOptions`; it has no vscode), with their raw values
 * ("true", "one-at-a-time") as the choices' names, marked `_meta.hostNamed`. An agent's own options pass as they are.
 */
import * as vscode from 'vscode';
import type { ConfigOptionView } from '../../shared/chatProtocol';

function names(): Record<string, { name: string; description?: string }> {
  return {
    thinking_level: { name: vscode.l10n.t('Thinking level') },
    steering_mode: { name: vscode.l10n.t('Steering'), description: vscode.l10n.t('How queued steering messages are delivered') },
    follow_up_mode: { name: vscode.l10n.t('Follow-ups'), description: vscode.l10n.t('How queued follow-ups are delivered') },
    interrupt_mode: { name: vscode.l10n.t('Interrupt'), description: vscode.l10n.t('Whether steering interrupts remaining tool calls') },
    auto_compaction: { name: vscode.l10n.t('Auto-compaction') },
    auto_retry: { name: vscode.l10n.t('Auto-retry') },
  };
}

function values(): Record<string, string> {
  return {
    off: vscode.l10n.t('Off'),
    minimal: vscode.l10n.t('Minimal'),
    low: vscode.l10n.t('Low'),
    medium: vscode.l10n.t('Medium'),
    high: vscode.l10n.t('High'),
    xhigh: vscode.l10n.t('Extra high'),
    'one-at-a-time': vscode.l10n.t('One at a time'),
    all: vscode.l10n.t('All at once'),
    wait: vscode.l10n.t('After the running tool'),
    immediate: vscode.l10n.t('Immediately'),
    true: vscode.l10n.t('On'),
    false: vscode.l10n.t('Off'),
  };
}

export function localizedRpcOptions(options: ConfigOptionView[]): ConfigOptionView[] {
  const byId = names();
  const byValue = values();
  return options.map((o) => {
    const text = o.hostNamed ? byId[o.id] : undefined;
    if (!text) return o;
    return { ...o, ...text, options: o.options.map((v) => ({ ...v, name: byValue[v.value] ?? v.name })) };
  });
}
