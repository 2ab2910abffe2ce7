/**
 * First steps: the walkthrough "Get started with Atrium" (package.json `contributes.walkthroughs`) and
 * the same steps in short in an empty chat. The page may ask the extension to run only the commands named
 * here — it names one, and anything else is refused. Plain Node loads this (type-only imports).
 */
import type { FirstStepCommand } from '../shared/chatProtocol';
import type { CommandId } from './commandIds';

/** The walkthrough's id in package.json; VS Code knows it as `<publisher>.<name>#getStarted`. */
export const WALKTHROUGH_ID = 'getStarted';

/** Every first-step command, each one a contributed command (the type says both). */
const ALLOWED: { readonly [C in FirstStepCommand]: C extends CommandId ? true : never } = {
  'agentHost.selectAgent': true,
  'agentHost.addAgent': true,
  'agentHost.signIn': true,
  'agentHost.getStarted': true,
};

/** The command the page asked for, if it is a first step; throws otherwise. */
export function firstStepCommand(value: unknown): FirstStepCommand {
  if (typeof value === 'string' && Object.hasOwn(ALLOWED, value)) return value as FirstStepCommand;
  throw new Error(`Not a command the chat may run: ${JSON.stringify(value)}`);
}

/**
 * The walkthrough's completion events (package.json) → the steps each one completes, as VS Code names them
 * (`onCommand:agentHost.selectAgent` → ["chooseAgent"]). Empty when the manifest has no such walkthrough.
 */
export function walkthroughEvents(packageJson: unknown): Map<string, string[]> {
  type Manifest = { contributes?: { walkthroughs?: { id?: string; steps?: { id?: string; completionEvents?: unknown[] }[] }[] } };
  const walkthrough = (packageJson as Manifest | undefined)?.contributes?.walkthroughs?.find((w) => w.id === WALKTHROUGH_ID);
  const events = new Map<string, string[]>();
  for (const step of walkthrough?.steps ?? []) {
    for (const event of step.completionEvents ?? []) {
      if (typeof event === 'string' && typeof step.id === 'string') events.set(event, [...(events.get(event) ?? []), step.id]);
    }
  }
  return events;
}
