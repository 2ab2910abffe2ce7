/**
 * Ticks the walkthrough's steps when their work is done, whether or not its page was ever open. VS Code hears a
 * step's completion events only once its walkthrough service is up — when the page first opens — so an agent
 * picked or a turn run before that never counted; and an `onContext` key already true when the page registers
 * its steps never ticks one either. So the extension watches each step's own completion events (package.json)
 * and marks the step done through VS Code's `welcome.markStepComplete`, which keeps it in the profile's storage
 * exactly like a tick on the page (and "Mark Step Incomplete" on the page still undoes it).
 */
import * as vscode from 'vscode';
import { type ContextKeys, onDidRunCommand } from './commandRegistry';
import { WALKTHROUGH_ID, walkthroughEvents } from './firstSteps';

export function trackWalkthrough(extension: vscode.Extension<unknown>, keys: ContextKeys, log: vscode.LogOutputChannel): vscode.Disposable {
  const events = walkthroughEvents(extension.packageJSON);
  const settings = [...events.keys()].filter((e) => e.startsWith('onSettingChanged:')).map((e) => e.slice('onSettingChanged:'.length));
  // Once a window: VS Code keeps the tick; a step marked incomplete on the page ticks again at its next event in a new window.
  const marked = new Set<string>();
  const happened = (event: string) => {
    for (const step of events.get(event) ?? []) {
      if (marked.has(step)) continue;
      marked.add(step);
      log.info(`Walkthrough: step "${step}" done (${event})`);
      // Its storage keeps the tick even when the step is not registered yet (the command then rejects): not an error.
      vscode.commands.executeCommand('welcome.markStepComplete', `${extension.id}#${WALKTHROUGH_ID}#${step}`).then(undefined, (error: unknown) => {
        log.debug(`Walkthrough: welcome.markStepComplete ${step}: ${(error as Error).message ?? error}`);
      });
    }
  };
  return vscode.Disposable.from(
    onDidRunCommand((id) => happened(`onCommand:${id}`)),
    keys.onDidChange(({ key, value }) => {
      if (value) happened(`onContext:${key}`);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      for (const s of settings) if (e.affectsConfiguration(s)) happened(`onSettingChanged:${s}`);
    }),
  );
}
