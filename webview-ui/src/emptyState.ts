/**
 * The empty chat's first steps: the walkthrough "Get started with Atrium" in short — choose or add an
 * agent, sign in, ask the first question (the composer takes the focus), try a command on selected code (a
 * hint, and the walkthrough). Quiet links in the theme's colours; the transcript hides them once the
 * conversation has a message. The commands run through the extension, which runs only these.
 */
import type { FirstStepCommand, FirstStepStrings } from '../../src/shared/chatProtocol';
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
