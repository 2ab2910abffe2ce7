/**
 * Going back in a conversation to before one of its user messages: the agent branches its own session there
 * (pi RPC `branch`, upstream `fork`; claude-agent-acp's `session/fork` at a message), so the model's next request
 * lacks the later turns, and the transcript drops that message and what followed. Protocol-blind: it goes through
 * the session's command surface or its `forkBefore`.
 */
import type { AgentSession } from './agentSession';
import type { MessageEntity } from './sessionModel';

export interface ConversationFork {
  /** Branches the agent's session before `message` and drops it and the later entries from the transcript. */
  fork(message: MessageEntity): Promise<void>;
}

/** How this session goes back in its conversation, or undefined when the agent offers no way to. */
export function conversationFork(session: AgentSession): ConversationFork | undefined {
  const forkBefore = session.forkBefore;
  if (forkBefore) return { fork: forkBefore };
  const commands = session.commands;
  if (!commands?.supports('branch').supported || !commands.supports('get_branch_messages').supported) return undefined;
  return {
    fork: async (message) => {
      const users = session.model.messages('user');
      const index = users.indexOf(message);
      if (index < 0) throw new Error('That message is not in the running session (the agent was restarted since)');
      const branchable = await commands.run('get_branch_messages', {});
      // Counted from the end: a resumed session's model lacks the earlier messages the agent still has.
      const target = branchable[branchable.length - users.length + index];
      if (!target) throw new Error(`The agent lists ${branchable.length} message(s) to branch from; this is message ${index + 1} of ${users.length}`);
      const result = await commands.run('branch', { entryId: target.entryId });
      if (result.cancelled) throw new Error('The agent cancelled the branch (an extension of the agent refused it)');
      session.model.truncateFrom(message);
    },
  };
}
