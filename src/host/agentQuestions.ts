/**
 * The askUser and elicit services: what the agent asks goes to the person through QuestionPrompts, which a
 * view implements (src/views/questionDialogs.ts), as permissions go through their presenter. What is decided
 * here, without showing anything: a link is offered only as a checked http(s) page, any other is declined,
 * logged with the link and said without it.
 */
import type { Logger } from '../core/log';
import type { AgentStartOptions, AskUserAnswer, AskUserRequest, ElicitAnswer, ElicitRequest } from '../session/sessionHost';
import { elicitationUrl } from './openTargets';

/** The dialogs a question needs; `agent` is the asking agent's name. */
export interface QuestionPrompts {
  askUser(agent: string, request: AskUserRequest, signal: AbortSignal): Promise<AskUserAnswer>;
  /** One input per field; `cancel` when the person dismisses one. */
  fillForm(agent: string, request: Extract<ElicitRequest, { mode: 'form' }>, signal: AbortSignal): Promise<ElicitAnswer>;
  /** Shows the whole (checked) URL and opens it only when the person agrees; true when it was opened. */
  openLink(agent: string, message: string, target: { url: string; host: string }): Promise<boolean>;
  /** Says that a link was not opened, and why (never the link itself: it may be made to look like something else). */
  linkRefused(agent: string, reason: string): void;
}

/** The askUser / elicit services of one agent's start. */
export function questionServices(prompts: QuestionPrompts, agent: string, log: Logger): Required<Pick<AgentStartOptions, 'askUser' | 'elicit'>> {
  return {
    askUser: (request, signal) => prompts.askUser(agent, request, signal),
    elicit: async (request, signal) => {
      if (request.mode === 'form') return prompts.fillForm(agent, request, signal);
      const target = elicitationUrl(request.url);
      if (!target.ok) {
        log.warn(`${agent} asked to open ${JSON.stringify(request.url)}; declined: ${target.reason}`);
        prompts.linkRefused(agent, target.reason);
        return { action: 'decline' };
      }
      return (await prompts.openLink(agent, request.message, target)) ? { action: 'accept' } : { action: 'decline' };
    },
  };
}
