/**
 * "Atrium: Check Agent Compatibility…": the compatibility check (src/check/check*) run on a configured
 * agent from the editor, its report shown as a Markdown preview — the matrix first, each check's frames
 * (the evidence) below it. With a preset that knows our scripted model, the turn checks run against that
 * model in a sandboxed home (the agent's real config and credentials are not used); without one, only what
 * the agent advertises is checked and the turn rows say why they are absent.
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import { renderMarkdown } from '../check/checkReport';
import type { CompatReport } from '../check/checkTypes';
import { presetFor, type AgentPreset } from '../agents/presets';
import type { AgentConfig } from '../session/agentConfig';

export interface CompatCheckContext {
  agents(): AgentConfig[];
  /** The default agent's name (listed first). */
  current?: string;
  /** Runs the check (the composition root wires the adapters); `log` gets one line per check. */
  run(config: AgentConfig, preset: AgentPreset | undefined, scripted: boolean, log: (line: string) => void): Promise<CompatReport>;
  log: vscode.LogOutputChannel;
}

export async function checkCompatibility(ctx: CompatCheckContext): Promise<CompatReport | undefined> {
  const agents = ctx.agents();
  if (!agents.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No agent is configured. Add one with "Atrium: Add Agent…".'));
    return undefined;
  }
  const ordered = [...agents].sort((a, b) => Number(b.name === ctx.current) - Number(a.name === ctx.current));
  const pick = await vscode.window.showQuickPick(
    ordered.map((a) => {
      const preset = presetFor(a);
      const scripted = preset?.scripted === true;
      return {
        label: a.name,
        description: [a.command, ...(a.args ?? [])].join(' '),
        detail: scripted
          ? vscode.l10n.t("Real turns against Atrium's scripted model (preset {0}), in a sandboxed home", preset!.name)
          : vscode.l10n.t('What it advertises only: no scripted model is known for this agent'),
        config: a,
        preset,
        scripted,
      };
    }),
    { title: vscode.l10n.t('Atrium: Check Agent Compatibility'), matchOnDescription: true },
  );
  if (!pick) return undefined;
  const report = await vscode.window
    .withProgress({ location: vscode.ProgressLocation.Notification, title: inertMarkup(vscode.l10n.t('Checking {0}', pick.label)) }, (progress) =>
      ctx.run(pick.config, pick.preset, pick.scripted, (line) => {
        ctx.log.info(`Check ${pick.label}: ${line}`);
        const m = line.match(/^check (\S+): (\w+)/);
        if (m) progress.report({ message: inertMarkup(`${m[1]}: ${m[2]}`) });
      }),
    )
    .then(
      (r) => r,
      (error: Error) => {
        ctx.log.error(`Check ${pick.label} failed: ${error.message}`);
        void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('The compatibility check of {0} failed: {1}', pick.label, error.message)));
        return undefined;
      },
    );
  if (!report) return undefined;
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: renderMarkdown(report) });
  await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
  return report;
}
