import * as vscode from 'vscode';
import type { AgentSession } from '../session/agentSession';
import { SilenceWatch } from '../session/silenceWatch';

/** `agentHost.silenceWarningSeconds`: how long a running turn may hear nothing from the agent before it is said (0: never). */
function threshold(): number {
  return vscode.workspace.getConfiguration('agentHost').get<number>('silenceWarningSeconds', 30);
}

/**
 * One tab's silent-agent report: follows the tab's session (a new one at every start) and counts how long
 * its running turn has heard nothing from the agent. `onChange` fires at every change of the count (about
 * once a second while it is reported).
 */
export class TurnSilence implements vscode.Disposable {
  private watch: SilenceWatch | undefined;
  private unfollow: (() => void)[] = [];
  private readonly sub: vscode.Disposable;

  constructor(
    onDidChangeSession: vscode.Event<AgentSession | undefined>,
    private readonly onChange: () => void,
  ) {
    this.sub = onDidChangeSession((session) => this.follow(session));
  }

  /** Whole seconds the running turn has heard nothing, once past the threshold; else undefined. */
  get seconds(): number | undefined {
    return this.watch?.seconds;
  }

  private follow(session: AgentSession | undefined): void {
    this.stop();
    if (!session) return;
    const watch = new SilenceWatch({ thresholdSeconds: threshold, onChange: () => this.onChange() });
    this.watch = watch;
    this.unfollow = [
      session.onActivity((waitingOnHost) => watch.activity(waitingOnHost)),
      session.model.on((e) => {
        if (e.type === 'turn') watch.turn(e.state !== 'idle');
      }),
    ];
    watch.turn(session.model.turn !== 'idle');
  }

  private stop(): void {
    const reported = this.watch?.seconds !== undefined;
    for (const off of this.unfollow.splice(0)) off();
    this.watch?.dispose();
    this.watch = undefined;
    if (reported) this.onChange();
  }

  dispose(): void {
    this.sub.dispose();
    this.stop();
  }
}
