/**
 * Sign-in in VS Code (SignInPrompts): a "Sign in" notification action, a quick pick of the agent's methods,
 * a modal that shows a login command in full before it runs, the command in a VS Code terminal, and an
 * input box for an API key.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import { commandLine, shownVariable, type SignInMethod, type SignInPrompts } from '../host/signIn';
import type { AgentConfig } from '../session/agentConfig';

type TerminalMethod = Extract<SignInMethod, { kind: 'terminal' }>;

const terminalName = (method: SignInMethod) => vscode.l10n.t('Sign in: {0}', method.name);

export const signInDialogs: SignInPrompts = {
  needed(agent, methods) {
    const signIn = vscode.l10n.t('Sign in');
    void Promise.resolve(vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('{0} needs you to sign in ({1}).', agent.name, methods.map((m) => m.name).join(', '))), signIn)).then((pick) => {
      if (pick === signIn) void vscode.commands.executeCommand('agentHost.signIn');
    });
  },

  async choose(agent, methods) {
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
  },

  /** The variables with their values (secrets masked) and what was dropped, in a modal: nothing runs unseen. */
  async confirmCommand(agent, method) {
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
  },

  runTerminal: runInTerminal,

  failed(agent: AgentConfig, method: TerminalMethod, code: number | undefined) {
    void vscode.window.showErrorMessage(
      inertMarkup(
        code === undefined
          ? vscode.l10n.t('Signing in to {0} did not finish: its terminal was closed before the login command ended.', agent.name)
          : vscode.l10n.t('Signing in to {0} failed: the login command exited with code {1}. Its output stays in the terminal "{2}".', agent.name, code, terminalName(method)),
      ),
    );
  },

  askSecret(agent, method, varName) {
    return Promise.resolve(
      vscode.window.showInputBox({
        title: vscode.l10n.t('Sign in to {0}: {1}', agent.name, method.name),
        prompt: inertMarkup(vscode.l10n.t("{0} (kept in the editor's secret storage, never in settings)", varName)),
        password: true,
        ignoreFocusOut: true,
      }),
    );
  },
};

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
async function runInTerminal(method: TerminalMethod, cwd: string | undefined): Promise<number | undefined> {
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
