/**
 * One prompt through the CLI on the agent lifecycle the editor uses (src/session/lifecycle.ts): the agent is
 * started (reattaching --resume), the prompt sent, and when the agent crashes mid-turn it is started again once,
 * after the backoff, with the same session reattached; then the turn goes on. A second crash gives up.
 */
import { AgentExitedError } from '../core/agentProcess';
import type { Logger } from '../core/log';
import { oneLine } from '../core/visibleText';
import type { AgentConfig } from '../session/agentConfig';
import { TURN_EXIT_CODES, type AgentSession } from '../session/agentSession';
import { AgentLifecycle, TurnInterruptedError } from '../session/lifecycle';
import { chooseModel } from '../session/modelChoice';
import { phrase } from '../session/notices';
import { AuthRequiredError, type AgentStartOptions } from '../session/sessionHost';
import type { TimelineEntity } from '../session/sessionModel';
import { SessionIdTakenError, type SessionStore } from '../session/sessionStore';
import { stderr } from './terminal';

/** What the agent is told after it was started again mid-turn with its session reattached. */
export const CONTINUE_PROMPT = 'You stopped unexpectedly in the middle of my last request and were started again with this session. Carry on with that request where you stopped.';

export interface PromptRun {
  agent: AgentConfig;
  /** How every start of the agent runs (the lifecycle adds which session to reattach). */
  options: AgentStartOptions;
  prompt: string;
  resume?: string;
  cwd: string;
  store: SessionStore;
  logger: Logger;
  format: 'text' | 'json';
  emit(event: object): void;
  startAgent(config: AgentConfig, options: AgentStartOptions): Promise<AgentSession>;
  /** The model the session is set to once started (ACP `session/set_model`, …); a model it does not have fails the run. */
  model?: string;
  /**
   * Who cancels the turn and stops the agent (a fan-out's runs share one Ctrl-C); without them this run answers
   * the process's own SIGINT (cancel, then stop), SIGTERM and SIGHUP.
   */
  signals?: { cancel: AbortSignal; stop: AbortSignal };
}

/**
 * The notices a session said while it started, before anything listened (an MCP server the agent cannot take, …),
 * as the entity events a listener would have got: emitted after the session's `session` event.
 */
export function startNotices(session: AgentSession): object[] {
  return session.model
    .timeline()
    .filter((e) => e.kind === 'notice')
    .map((entity) => ({ type: 'entity', entity, created: true }));
}

export async function runPrompt(run: PromptRun): Promise<number> {
  const { agent, emit, format, logger, store, cwd } = run;
  const life = new AgentLifecycle(
    { log: logger, plan: () => ({ agent: agent.name, launch: (attach) => run.startAgent(agent, { ...run.options, ...(attach ? { attach } : {}) }) }) },
    run.resume ? { agent: agent.name, sessionId: run.resume } : undefined,
  );
  // Each session's events from when it is ours; what it said before that, after its `session` event (announce).
  const early = new Map<AgentSession, object[]>();
  life.onSession((s) => {
    if (!s) return;
    early.set(s, startNotices(s));
    s.model.on((event) => emit(event));
  });

  let session: AgentSession;
  try {
    session = await life.ensureStarted();
  } catch (error) {
    await life.stop(); // a crash at start schedules a restart: the CLI does not wait for it
    const err = error as Error;
    emit({ type: 'result', outcome: 'start_failed', error: err.message, ...(error instanceof AuthRequiredError ? { authMethods: error.methods } : {}) });
    if (format === 'text') stderr(`agent-host: ${err.message}\n`);
    return TURN_EXIT_CODES.start_failed!;
  }
  const announce = (s: AgentSession, asked: string | undefined) => {
    const attach = s.attach;
    emit({
      type: 'session',
      sessionId: s.sessionId,
      agent: s.agentInfo,
      cwd,
      attach: attach.how,
      ...(attach.requested ? { requested: attach.requested } : {}),
      ...(attach.detail ? { attachDetail: attach.detail } : {}),
    });
    for (const event of early.get(s) ?? []) emit(event);
    early.delete(s);
    if (asked && format === 'text') {
      stderr(
        attach.how === 'new'
          ? `agent-host: could not reattach ${oneLine(asked)} (${oneLine(attach.detail ?? 'unknown reason')}): this is a NEW session ${oneLine(s.sessionId)}\n`
          : `agent-host: session ${oneLine(asked)} ${attach.how}\n`,
      );
    }
  };
  announce(session, run.resume);

  // The local index: what earlier runs (and the process before a restart) recorded, then this session's model.
  let earlier: TimelineEntity[] = session.attach.how !== 'new' ? (store.transcript(session.sessionId) ?? []) : [];
  let refused = false;
  const record = () => {
    if (refused) return;
    try {
      store.upsert({ sessionId: session.sessionId, agent: agent.name, cwd, firstPrompt: run.prompt });
      store.saveTranscript(session.sessionId, [...earlier, ...session.model.timeline()]);
    } catch (e) {
      // Another agent's or folder's id: the session runs unrecorded, and says so in its transcript.
      if (e instanceof SessionIdTakenError) {
        refused = true;
        session.model.notice('warning', phrase('notRecorded'), e.message);
      } else logger.warn(`Could not record the session in ${store.dir}: ${(e as Error).message}`);
    }
  };
  record();

  if (run.signals) {
    const { cancel, stop } = run.signals;
    if (cancel.aborted) void life.cancel();
    else cancel.addEventListener('abort', () => void life.cancel(), { once: true });
    if (stop.aborted) void life.stop();
    else stop.addEventListener('abort', () => void life.stop(), { once: true });
  } else {
    let interrupts = 0;
    process.on('SIGINT', () => {
      if (++interrupts === 1) void life.cancel();
      else void life.stop().then(() => process.exit(TURN_EXIT_CODES.cancelled));
    });
    // Killed politely (a service manager, a closed terminal): stop the agent and what it started, then go.
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => void life.stop().finally(() => process.exit(TURN_EXIT_CODES.cancelled)));
    }
  }
  if (run.model) {
    try {
      await chooseModel(session, run.model);
    } catch (e) {
      const message = `could not set the model ${run.model}: ${(e as Error).message}`;
      emit({ type: 'result', outcome: 'error', exitCode: TURN_EXIT_CODES.error, error: message });
      if (format === 'text') stderr(`agent-host: ${message}\n`);
      await life.stop();
      return TURN_EXIT_CODES.error!;
    }
  }

  let outcome: string;
  let error: string | undefined;
  let text = run.prompt;
  let restarted = false;
  for (;;) {
    if (run.signals?.cancel.aborted) {
      outcome = 'cancelled';
      break;
    }
    try {
      outcome = await life.prompt([{ type: 'text', text }]);
      error = undefined;
      break;
    } catch (e) {
      error = (e as Error).message;
      outcome = e instanceof AgentExitedError ? 'agent_exited' : 'error';
      const restart = life.pendingRestart;
      // A task on its own (the agent service) is not sent again: the connection that dropped cut it. Nor is a remote
      // agent's turn: its connection dropped, and the run ends with it (exit 4, one line).
      if (!(e instanceof TurnInterruptedError) || restarted || !restart || session.statelessTasks || e.exit.disconnected !== undefined) break;
      restarted = true;
      record();
      const exit = e.exit;
      emit({ type: 'restart', reason: error, exit: { code: exit.code, signal: exit.signal }, sessionId: session.sessionId });
      stderr(`agent-host: the agent exited mid-turn (${oneLine(error.split('\n')[0] ?? '')}); starting it again once and reattaching session ${oneLine(session.sessionId)}\n`);
      const before = session;
      try {
        session = await restart;
      } catch (failed) {
        error = `${error}\nStarting it again failed: ${(failed as Error).message}`;
        break;
      }
      if (session.sessionId === before.sessionId) earlier = [...earlier, ...before.model.timeline()];
      else earlier = [];
      announce(session, before.sessionId);
      // Reattached, it is asked to go on; a NEW session knows nothing of the turn, so it gets the prompt again.
      text = session.attach.how === 'new' ? run.prompt : CONTINUE_PROMPT;
    }
  }
  const exitCode = TURN_EXIT_CODES[outcome] ?? TURN_EXIT_CODES.error!;
  record();
  emit({ type: 'result', outcome, exitCode, ...(error ? { error } : {}) });
  if (error && format === 'text') stderr(`agent-host: ${error}\n`);
  await life.stop();
  return exitCode;
}
