/** The page's requests that need nothing of the controller: a tool card's Revoke rule, a turn summary's Review and Undo all, a drop's files. */
import type { ChatRequests } from '../../shared/chatProtocol';
import { runCommand } from '../commandRegistry';
import { firstStepCommand } from '../firstSteps';
import { droppedChips } from './droppedFiles';

type Params<M extends keyof ChatRequests> = ChatRequests[M][0];

export const commandHandlers = {
  runCommand: async ({ command }: Params<'runCommand'>) => void (await runCommand(firstStepCommand(command))),
  revokeRule: ({ id }: Params<'revokeRule'>) => runCommand('agentHost.managePermissionRules', id),
  allowInSandbox: ({ kind, target }: Params<'allowInSandbox'>) => runCommand('agentHost.allowInSandbox', kind === 'network' ? 'network' : 'write', String(target)),
  runOnSeveralAgents: async ({ text }: Params<'runOnSeveralAgents'>) => void (await runCommand('agentHost.runOnSeveralAgents', typeof text === 'string' ? text : '')),
  reviewChanges: async ({ tab, turn }: Params<'reviewChanges'>) => void (await runCommand('agentHost.reviewTurnChanges', tab, turn)),
  // Undo all asks first (the same modal as the palette's Revert).
  droppedUris: ({ uris }: Params<'droppedUris'>) => droppedChips(uris),
  undoChanges: async ({ tab, turn }: Params<'undoChanges'>) => void (await runCommand('agentHost.revertTurnChanges', false, tab, turn)),
};
