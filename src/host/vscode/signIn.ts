import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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
  runTerminal: (method: Extract<SignInMethod, { kind: 'terminal' }>, cwd: string | undefined) => Promise<number | undefined> = runInTerminal;
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
        const code = await this.runTerminal(method, agent.cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
        if (code === 0) return 'restart';
        this.log.warn(`Sign-in command of "${agent.name}" ${code === undefined ? 'did not finish (its terminal was closed)' : `exited with code ${code}`}: ${commandLine(method)}`);
        void vscode.window.showErrorMessage(
          inertMarkup(
            code === undefined
              ? vscode.l10n.t('Signing in to {0} did not finish: its terminal was closed before the login command ended.', agent.name)
              : vscode.l10n.t('Signing in to {0} failed: the login command exited with code {1}. Its output stays in the terminal "{2}".', agent.name, code, terminalName(method)),
          ),
        );
        return undefined;
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

const terminalName = (method: SignInMethod) => vscode.l10n.t('Sign in: {0}', method.name);

/**
 * Run by `sh -c` around the login command (its words are arguments, never parsed): writes the exit code to
 * the file `$1`; a code other than 0 keeps the terminal open with the command's output and `$2` until Enter.
 */
const KEEP_OPEN_ON_FAILURE = 'f=$1; note=$2; shift 2; "$@"; c=$?; printf %s "$c" > "$f"; [ "$c" -eq 0 ] && exit 0; printf \'\\n[exit code %s] %s\\n\' "$c" "$note"; read -r _; exit "$c"';

/**
 * Runs the login command in a VS Code terminal and resolves with its exit code (undefined: the terminal was
 * closed before it ended). VS Code closes a terminal whose process ends, so on POSIX the command runs under
 * `sh` (KEEP_OPEN_ON_FAILURE): a failed login stays on screen ("command not found: pi", its exit code) while
 * its code is known at once. On Windows the command is the terminal's process, as before.
 */
async function runInTerminal(method: Extract<SignInMethod, { kind: 'terminal' }>, cwd: string | undefined): Promise<number | undefined> {
  const dir = process.platform === 'win32' ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'agent-host-login-'));
  const codeFile = dir && path.join(dir, 'code');
  const note = vscode.l10n.t('The sign-in command failed; its output is above. Press Enter to close this terminal.');
  const terminal = vscode.window.createTerminal({
    name: terminalName(method),
    shellPath: codeFile ? '/bin/sh' : method.command,
    shellArgs: codeFile ? ['-c', KEEP_OPEN_ON_FAILURE, 'agent-host-login', codeFile, note, method.command, ...method.args] : method.args,
    env: method.env,
    ...(cwd ? { cwd } : {}),
  });
  terminal.show();
  return new Promise<number | undefined>((resolve) => {
    const finish = (code: number | undefined) => {
      sub.dispose();
      clearInterval(poll);
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      resolve(code);
    };
    const written = (): number | undefined => {
      const text = codeFile && fs.existsSync(codeFile) ? fs.readFileSync(codeFile, 'utf8').trim() : '';
      return /^\d+$/.test(text) ? Number(text) : undefined;
    };
    const check = (t: vscode.Terminal) => {
      if (t !== terminal) return;
      const code = written();
      if (code !== undefined) finish(code);
      // A process that ended keeps its terminal open on some hosts: its exitStatus tells.
      else if (t.exitStatus) finish(codeFile ? undefined : t.exitStatus.code);
    };
    const sub = vscode.window.onDidCloseTerminal(check);
    const poll = setInterval(() => check(terminal), 250);
  });
}
