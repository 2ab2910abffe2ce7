import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import type { Logger } from '../core/log';
import { exportSessionHtml } from '../host/openTargets';
import type { AgentManager } from '../manager/agentManager';
import type { AgentCommandName, AgentCommands } from '../session/agentCommands';
import { registerCommand } from './commandRegistry';

interface Entry {
  /** The command whose support decides whether the entry is offered. */
  command: AgentCommandName;
  label: string;
  run(s: AgentCommands): Promise<unknown>;
}

async function ask(prompt: string, value = ''): Promise<string | undefined> {
  return vscode.window.showInputBox({ prompt, value, ignoreFocusOut: true });
}

async function pick<T extends string>(title: string, values: readonly T[]): Promise<T | undefined> {
  return (await vscode.window.showQuickPick([...values], { title })) as T | undefined;
}

async function showJson(title: string, value: unknown): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'json', content: `// ${title}\n${JSON.stringify(value, null, 2)}\n` });
  await vscode.window.showTextDocument(doc, { preview: true });
}

/** Every pi RPC command that is not a plain prompt, in the order a user looks for them. */
function entries(log: Logger): Entry[] {
  return [
    {
      command: 'steer',
      label: vscode.l10n.t('Steer the running turn…'),
      run: async (s) => {
        const m = await ask(vscode.l10n.t('Message to steer with'));
        if (m) await s.run('steer', { message: m });
      },
    },
    {
      command: 'follow_up',
      label: vscode.l10n.t('Queue a follow-up…'),
      run: async (s) => {
        const m = await ask(vscode.l10n.t('Follow-up message'));
        if (m) await s.run('follow_up', { message: m });
      },
    },
    {
      command: 'abort_and_prompt',
      label: vscode.l10n.t('Abort and send…'),
      run: async (s) => {
        const m = await ask(vscode.l10n.t('Message to send after aborting'));
        if (m) await s.run('abort_and_prompt', { message: m });
      },
    },
    { command: 'new_session', label: vscode.l10n.t('New session'), run: (s) => s.run('new_session', {}) },
    {
      command: 'set_model',
      label: vscode.l10n.t('Choose model…'),
      run: async (s) => {
        const models = await s.run('get_available_models', {});
        const m = await vscode.window.showQuickPick(
          models.map((x) => ({ label: x.name ?? x.id, description: `${x.provider}/${x.id}`, x })),
          { title: vscode.l10n.t('Model') },
        );
        if (m) await s.run('set_model', { provider: m.x.provider, modelId: m.x.id });
      },
    },
    { command: 'cycle_model', label: vscode.l10n.t('Next model'), run: (s) => s.run('cycle_model', {}) },
    {
      command: 'set_thinking_level',
      label: vscode.l10n.t('Thinking level…'),
      run: async (s) => {
        const l = await pick(vscode.l10n.t('Thinking level'), ['off', 'minimal', 'low', 'medium', 'high', 'xhigh']);
        if (l) await s.run('set_thinking_level', { level: l });
      },
    },
    { command: 'cycle_thinking_level', label: vscode.l10n.t('Next thinking level'), run: (s) => s.run('cycle_thinking_level', {}) },
    {
      command: 'set_steering_mode',
      label: vscode.l10n.t('Steering mode…'),
      run: async (s) => {
        const m = await pick(vscode.l10n.t('Steering mode'), ['one-at-a-time', 'all'] as const);
        if (m) await s.run('set_steering_mode', { mode: m });
      },
    },
    {
      command: 'set_follow_up_mode',
      label: vscode.l10n.t('Follow-up mode…'),
      run: async (s) => {
        const m = await pick(vscode.l10n.t('Follow-up mode'), ['one-at-a-time', 'all'] as const);
        if (m) await s.run('set_follow_up_mode', { mode: m });
      },
    },
    {
      command: 'set_interrupt_mode',
      label: vscode.l10n.t('Interrupt mode…'),
      run: async (s) => {
        const m = await pick(vscode.l10n.t('Interrupt mode'), ['wait', 'immediate'] as const);
        if (m) await s.run('set_interrupt_mode', { mode: m });
      },
    },
    {
      command: 'compact',
      label: vscode.l10n.t('Compact the conversation…'),
      run: async (s) => {
        const i = await ask(vscode.l10n.t('Custom instructions for the summary (optional)'));
        if (i !== undefined) await s.run('compact', i ? { customInstructions: i } : {});
      },
    },
    {
      command: 'set_auto_compaction',
      label: vscode.l10n.t('Auto-compaction…'),
      run: async (s) => {
        const v = await pick(vscode.l10n.t('Auto-compaction'), ['on', 'off'] as const);
        if (v) await s.run('set_auto_compaction', { enabled: v === 'on' });
      },
    },
    {
      command: 'set_auto_retry',
      label: vscode.l10n.t('Auto-retry…'),
      run: async (s) => {
        const v = await pick(vscode.l10n.t('Auto-retry'), ['on', 'off'] as const);
        if (v) await s.run('set_auto_retry', { enabled: v === 'on' });
      },
    },
    { command: 'abort_retry', label: vscode.l10n.t('Stop retrying'), run: (s) => s.run('abort_retry', {}) },
    {
      command: 'bash',
      label: vscode.l10n.t('Run a shell command in the agent…'),
      run: async (s) => {
        const c = await ask(vscode.l10n.t('Command'));
        if (!c) return;
        const r = await s.run('bash', { command: c });
        await showJson(vscode.l10n.t('Output of {0}', c), r);
      },
    },
    { command: 'abort_bash', label: vscode.l10n.t('Stop the shell command'), run: (s) => s.run('abort_bash', {}) },
    { command: 'get_session_stats', label: vscode.l10n.t('Session statistics'), run: async (s) => showJson(vscode.l10n.t('Session statistics'), await s.run('get_session_stats', {})) },
    {
      command: 'export_html',
      label: vscode.l10n.t('Export the session as HTML'),
      run: async (s) => {
        const exported = await exportSessionHtml(s);
        if (!exported.ok) {
          const leads = exported.real ? ` (leading to ${exported.real})` : '';
          log.warn(`Export the session as HTML: asked for ${exported.requested}, the agent answered ${JSON.stringify(exported.answer)}${leads}: ${exported.reason}; nothing opened`);
          void vscode.window.showWarningMessage(
            inertMarkup(vscode.l10n.t('The exported session was not opened: {0} (the log has its answer). Only the .html file the agent was asked to write is opened.', exported.reason)),
          );
          return;
        }
        log.info(`Export the session as HTML: opening ${exported.file}`);
        await vscode.env.openExternal(vscode.Uri.file(exported.file));
      },
    },
    {
      command: 'switch_session',
      label: vscode.l10n.t('Switch to a saved session…'),
      run: async (s) => {
        const f = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { Sessions: ['jsonl'] } });
        if (f?.[0]) await s.run('switch_session', { sessionPath: f[0].fsPath });
      },
    },
    {
      command: 'branch',
      label: vscode.l10n.t('Branch from an earlier message…'),
      run: async (s) => {
        const messages = await s.run('get_branch_messages', {});
        const m = await vscode.window.showQuickPick(
          messages.map((x) => ({ label: x.text.slice(0, 120), x })),
          { title: vscode.l10n.t('Branch from') },
        );
        if (m) await s.run('branch', { entryId: m.x.entryId });
      },
    },
    {
      command: 'get_last_assistant_text',
      label: vscode.l10n.t('Copy the last answer'),
      run: async (s) => {
        const text = await s.run('get_last_assistant_text', {});
        if (text) await vscode.env.clipboard.writeText(text);
      },
    },
    {
      command: 'set_session_name',
      label: vscode.l10n.t('Name the session…'),
      run: async (s) => {
        const n = await ask(vscode.l10n.t('Session name'));
        if (n !== undefined) await s.run('set_session_name', { name: n });
      },
    },
    { command: 'get_messages', label: vscode.l10n.t('Show the raw messages'), run: async (s) => showJson(vscode.l10n.t('Messages'), await s.run('get_messages', {})) },
  ];
}

/** `Atrium: Agent Commands…`: the pi RPC command surface, with unsupported commands shown disabled. */
export function registerRpcCommands(manager: AgentManager, log: Logger): vscode.Disposable {
  return registerCommand('agentHost.agentCommands', async () => {
    const session = manager.current?.commands;
    if (!session) {
      void vscode.window.showInformationMessage(vscode.l10n.t('This agent offers no commands beyond the chat (RPC-mode agents do).'));
      return;
    }
    const items = entries(log).map((e) => {
      const support = session.supports(e.command);
      return { label: support.supported ? e.label : `$(circle-slash) ${e.label}`, description: support.supported ? '' : (support.reason ?? vscode.l10n.t('not supported by this agent')), e, support };
    });
    const chosen = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Agent commands'), matchOnDescription: true });
    if (!chosen) return;
    if (!chosen.support.supported) {
      void vscode.window.showWarningMessage(inertMarkup(chosen.description));
      return;
    }
    try {
      await chosen.e.run(session);
    } catch (error) {
      void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('{0} failed: {1}', chosen.e.label, (error as Error).message)));
    }
  });
}
