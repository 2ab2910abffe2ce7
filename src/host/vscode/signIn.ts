import * as vscode from 'vscode';
import { inertMarkup } from '../../core/visibleText';
import type { AuthMethodInfo as AuthMethod, SignInHandler } from '../../session/sessionHost';
import type { AgentConfig } from '../../session/agentConfig';
import { classifyAuthMethod, commandLine, secretKey, shownVariable, type SignInMethod } from '../signIn';

/**
 * Sign-in in the editor: a "Sign in" notification action, then a quick pick of the agent's methods; terminal
 * methods run in a VS Code terminal (exit 0 = signed in); entered API keys go to SecretStorage (never settings)
 * and into the agent's env at every start. `chooser`, `askSecret` and `runTerminal` are replaceable (tests:
 * dialogs cannot show while extension tests run).
 */
export class AgentSignIn implements SignInHandler {
  chooser: (agent: AgentConfig, methods: SignInMethod[]) => Promise<SignInMethod | undefined> = (agent, methods) => this.defaultChooser(agent, methods);
  askSecret: (agent: AgentConfig, method: SignInMethod, varName: string) => Promise<string | undefined> = defaultAskSecret;
  runTerminal: (method: Extract<SignInMethod, { kind: 'terminal' }>, cwd: string | undefined) => Promise<boolean> = runInTerminal;
  /** Shows the exact command line and the variables it sets before anything runs; false = do not run. */
  confirmCommand: (agent: AgentConfig, method: Extract<SignInMethod, { kind: 'terminal' }>) => Promise<boolean> = confirmLoginCommand;

  /** Set while "Sign In" (the command or the notification's action) restarts the agent: then the methods are offered at once. */
  requested = false;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Stored keys of this agent's env_var methods (the names it was asked for before). */
  async env(agent: AgentConfig): Promise<Record<string, string>> {
    const names = (await this.secrets.get(secretKey(agent.name, '*'))) ?? '';
    const out: Record<string, string> = {};
    for (const name of names.split(',').filter(Boolean)) {
      const value = await this.secrets.get(secretKey(agent.name, name));
      if (value) out[name] = value;
    }
    return out;
  }

  async forget(agent: AgentConfig): Promise<void> {
    const names = (await this.secrets.get(secretKey(agent.name, '*'))) ?? '';
    for (const name of names.split(',').filter(Boolean)) await this.secrets.delete(secretKey(agent.name, name));
    await this.secrets.delete(secretKey(agent.name, '*'));
  }

  async signIn(agent: AgentConfig, methods: AuthMethod[]): Promise<{ authenticate: string } | 'restart' | undefined> {
    const method = await this.chooser(
      agent,
      methods.map((m) => classifyAuthMethod(m, agent)),
    );
    if (!method) return undefined;
    this.log.info(`Sign-in to "${agent.name}" with ${method.kind} method "${method.id}"`);
    switch (method.kind) {
      case 'agent':
        return { authenticate: method.id };
      case 'terminal': {
        if (method.droppedEnv.length) this.log.warn(`Sign-in command of "${agent.name}": not passed to it (variables that could run code the agent chose): ${method.droppedEnv.join(', ')}`);
        if (!(await this.confirmCommand(agent, method))) {
          this.log.info(`Sign-in command of "${agent.name}" not run: ${commandLine(method)}`);
          return undefined;
        }
        const ok = await this.runTerminal(method, agent.cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
        if (!ok) void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('Signing in to {0} did not finish (the login command failed or was closed).', agent.name)));
        return ok ? 'restart' : undefined;
      }
      case 'env_var': {
        const names = ((await this.secrets.get(secretKey(agent.name, '*'))) ?? '').split(',').filter(Boolean);
        for (const name of method.vars) {
          const value = await this.askSecret(agent, method, name);
          if (!value) return undefined;
          await this.secrets.store(secretKey(agent.name, name), value);
          if (!names.includes(name)) names.push(name);
        }
        await this.secrets.store(secretKey(agent.name, '*'), names.join(','));
        return 'restart';
      }
    }
  }

  /**
   * Unasked, the start fails at once (the status bar's tooltip says why) and a notification offers "Sign in",
   * so an unanswered notification never holds the start; its action (or the command) restarts the agent with
   * `requested` set, and the methods are offered in a quick pick.
   */
  private async defaultChooser(agent: AgentConfig, methods: SignInMethod[]): Promise<SignInMethod | undefined> {
    if (!this.requested) {
      const signIn = vscode.l10n.t('Sign in');
      void Promise.resolve(vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('{0} needs you to sign in ({1}).', agent.name, methods.map((m) => m.name).join(', '))), signIn)).then((pick) => {
        if (pick === signIn) void vscode.commands.executeCommand('agentHost.signIn');
      });
      return undefined;
    }
    return pickMethod(agent, methods);
  }
}

/** The login command in full, the variables it sets with their values (secrets masked), and what was dropped, in a modal: nothing runs unseen. */
async function confirmLoginCommand(agent: AgentConfig, method: Extract<SignInMethod, { kind: 'terminal' }>): Promise<boolean> {
  const run = vscode.l10n.t('Run in a Terminal');
  const vars = Object.entries(method.env).map(([name, value]) => shownVariable(name, value));
  const detail = [
    commandLine(method),
    vars.length ? vscode.l10n.t('Sets:\n{0}', vars.join('\n')) : vscode.l10n.t('Sets no variables.'),
    ...(method.droppedEnv.length ? [vscode.l10n.t('Not passed (they could make the command run code the agent chose): {0}', method.droppedEnv.join(', '))] : []),
    vscode.l10n.t('The agent chose this command. Run it only if you trust it.'),
  ].join('\n\n');
  const pick = await vscode.window.showWarningMessage(vscode.l10n.t('Sign in to {0}: run this command?', agent.name), { modal: true, detail }, run);
  return pick === run;
}

/** Always a pick, even of one method: the person sees what signing in will do before it starts. */
async function pickMethod(agent: AgentConfig, methods: SignInMethod[]): Promise<SignInMethod | undefined> {
  const kinds: Record<SignInMethod['kind'], string> = {
    agent: vscode.l10n.t('the agent signs in'),
    terminal: vscode.l10n.t('in a terminal'),
    env_var: vscode.l10n.t('API key'),
  };
  const item = await vscode.window.showQuickPick(
    methods.map((m) => ({
      label: m.name,
      description: m.kind === 'terminal' ? `${kinds[m.kind]}: ${commandLine(m)}` : kinds[m.kind],
      ...(m.description ? { detail: m.description } : {}),
      method: m,
    })),
    { title: vscode.l10n.t('Sign in to {0}', agent.name), ignoreFocusOut: true },
  );
  return item?.method;
}

function defaultAskSecret(agent: AgentConfig, method: SignInMethod, varName: string): Promise<string | undefined> {
  return Promise.resolve(
    vscode.window.showInputBox({
      title: vscode.l10n.t('Sign in to {0}: {1}', agent.name, method.name),
      prompt: inertMarkup(vscode.l10n.t("{0} (kept in the editor's secret storage, never in settings)", varName)),
      password: true,
      ignoreFocusOut: true,
    }),
  );
}

/** Runs the login command in a VS Code terminal (no shell) and resolves true when it exits 0. */
async function runInTerminal(method: Extract<SignInMethod, { kind: 'terminal' }>, cwd: string | undefined): Promise<boolean> {
  const terminal = vscode.window.createTerminal({
    name: vscode.l10n.t('Sign in: {0}', method.name),
    shellPath: method.command,
    shellArgs: method.args,
    env: method.env,
    ...(cwd ? { cwd } : {}),
  });
  terminal.show();
  return new Promise<boolean>((resolve) => {
    const done = (t: vscode.Terminal) => {
      if (t !== terminal || !t.exitStatus) return;
      sub.dispose();
      clearInterval(poll);
      resolve(t.exitStatus.code === 0);
    };
    const sub = vscode.window.onDidCloseTerminal(done);
    // A process that ended keeps its terminal open on some hosts: its exitStatus tells.
    const poll = setInterval(() => done(terminal), 500);
  });
}
