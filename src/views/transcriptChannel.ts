import * as vscode from 'vscode';
import type { AgentManager } from '../manager/agentManager';
import { TextRenderer } from '../session/transcriptText';

/** A plain-text transcript of the session, until the chat view lands. */
export class TranscriptChannel implements vscode.Disposable {
  private readonly channel = vscode.window.createOutputChannel('Atrium: Transcript');
  private readonly renderer = new TextRenderer((s) => this.channel.append(s));
  private readonly sub: vscode.Disposable;

  constructor(manager: AgentManager) {
    this.sub = manager.onSessionEvent((e) => {
      if (e.type === 'entity' && e.entity.kind === 'message' && e.entity.role === 'user' && e.created) {
        this.channel.append(`\n\n> ${e.entity.text}\n`);
      }
      this.renderer.render(e);
    });
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.sub.dispose();
    this.channel.dispose();
  }
}
