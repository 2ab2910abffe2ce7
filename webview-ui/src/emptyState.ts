/**
 * The empty chat's first steps: the walkthrough "Get started with Atrium" in short — choose or add an
 * agent, sign in, ask the first question (the composer takes the focus), try a command on selected code (a
 * hint, and the walkthrough). Quiet links in the theme's colours; the transcript hides them once the
 * conversation has a message. The commands run through the extension, which runs only these.
 */
import type { ChatStrings, FirstStepCommand, FirstStepStrings, HeaderState } from '../../src/shared/chatProtocol';
import { h, icon } from './dom';
import { send } from './rpc';

export function firstSteps(s: FirstStepStrings, focusComposer: () => void): HTMLElement {
  const link = (label: string, testid: string, onClick: () => void) => h('button', { type: 'button', className: 'step-link', 'data-testid': testid, onClick }, label);
  const run = (command: FirstStepCommand, label: string, testid: string) => link(label, testid, () => send('runCommand', { command }));
  const step = (name: string, ...body: (Node | string)[]) => h('li', null, icon(name, 'step-icon'), h('span', { className: 'step-body' }, ...body));
  return h(
    'section',
    { className: 'first-steps', 'aria-labelledby': 'first-steps-title', 'data-testid': 'first-steps' },
    h('h2', { id: 'first-steps-title' }, s.title),
    h(
      'ol',
      null,
      step(
        'robot',
        run('agentHost.selectAgent', s.chooseAgent, 'step-choose-agent'),
        h('span', { className: 'step-sep', 'aria-hidden': 'true' }, '·'),
        run('agentHost.addAgent', s.addAgent, 'step-add-agent'),
      ),
      step('account', run('agentHost.signIn', s.signIn, 'step-sign-in')),
      step('comment-discussion', link(s.ask, 'step-ask', focusComposer)),
      step('selection', h('span', { className: 'step-hint' }, s.selectionHint), ' ', run('agentHost.getStarted', s.walkthrough, 'step-walkthrough')),
    ),
  );
}

/** The empty chat's message and first steps while there is no entry (`empty`), else hidden. */
export function showEmpty(el: HTMLElement, empty: boolean, s: ChatStrings, tabs: HeaderState['tabs'], focusComposer: () => void): void {
  el.hidden = !empty;
  if (!empty) return;
  // Built once: a new snapshot (e.g. the warm-started session) must not take the focus from a step.
  if (!el.firstChild) el.replaceChildren(icon('hubot', 'empty-icon'), h('p', null, s.empty), h('p', { className: 'hint' }, s.emptyHint), firstSteps(s.firstSteps, focusComposer));
  // The first steps belong to the first conversation: another tab is not someone's first hour.
  el.querySelector<HTMLElement>('.first-steps')!.hidden = tabs.length > 0 && !tabs[0]!.active;
}
