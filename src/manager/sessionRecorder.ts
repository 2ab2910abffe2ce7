import * as vscode from 'vscode';
import type { AgentSession } from '../session/agentSession';
import { longTextDir, longTextStore } from '../session/longText';
import { phrase } from '../session/notices';
import { SessionIdTakenError, type SessionStore } from '../session/sessionStore';
import type { AgentManager } from './agentManager';

/**
 * Records every session the editor runs in the local index the CLI shares (title from the first prompt,
 * agent, folder, times) when a turn starts, with a slim copy of its transcript when a turn ends (written within
 * TRANSCRIPT_DELAY_MS, and when the process goes: the copy costs its whole size). A
 * reattached session keeps its earlier copy in front of what this process adds.
 */
export function recordSessions(manager: AgentManager, store: () => SessionStore | undefined, log: vscode.LogOutputChannel): vscode.Disposable {
  return manager.onEachProcess((session: AgentSession, { agent, cwd }) => {
    const target = store();
    if (!target) return new vscode.Disposable(() => undefined);
    // A message past the limit keeps its whole text beside the index (the folder `agentHost.sessions.stateDir` names).
    session.model.longText = longTextStore(longTextDir(target.dir), session.model.longText?.limit);
    const earlier = session.attach.how !== 'new' ? (target.transcript(session.sessionId) ?? []) : [];
    let refused = false;
    /** The index entry when a turn starts; its transcript too when the turn ends (the slim copy costs its whole size). */
    const save = (ended: boolean) => {
      const firstPrompt = session.model.messages('user')[0]?.text;
      if (refused || (!firstPrompt && !earlier.length)) return; // nothing asked yet: not history
      try {
        target.upsert({ sessionId: session.sessionId, agent: agent.name, cwd, ...(firstPrompt ? { firstPrompt } : {}) });
        if (ended)
          target.saveTranscriptSoon(session.sessionId, [...earlier, ...session.model.timeline()], (id, error) =>
            log.warn(`Could not keep the transcript of session ${id} in ${target.dir}: ${error.message}`),
          );
      } catch (error) {
        log.warn(`Could not record session ${session.sessionId} in ${target.dir}: ${(error as Error).message}`);
        // Another agent's or folder's id: the session runs unrecorded, and says so in its transcript (once).
        if (error instanceof SessionIdTakenError) {
          refused = true;
          session.model.notice('warning', phrase('notRecorded'), error.message);
        }
      }
    };
    const off = session.model.on((e) => {
      if (e.type === 'turn' && (e.state === 'idle' || e.state === 'running')) save(e.state === 'idle');
    });
    return new vscode.Disposable(() => {
      off();
      target.flush();
    });
  });
}
