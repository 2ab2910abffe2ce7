/**
 * Every command the extension contributes, declared once with its arguments and result (js-debug's typed
 * registry), and the context keys its `enablement` clauses read. Type-only use of vscode: plain Node (the
 * unit test that holds this list against package.json) loads it too.
 */
import type * as vscode from 'vscode';

/** Command id → [arguments, result]. */
export interface CommandMap {
  'agentHost.start': [[], void];
  'agentHost.restart': [[], void];
  'agentHost.stop': [[], void];
  'agentHost.signIn': [[], void];
  'agentHost.selectAgent': [[], void];
  'agentHost.showLog': [[], void];
  /** Ask the agent: the prompt text, or an input box when none is given. */
  'agentHost.prompt': [[text?: string], void];
  'agentHost.cancel': [[], void];
  /** A running turn heard nothing for a while: cancel it, show the log, or keep waiting. */
  'agentHost.noOutput': [[], void];
  'agentHost.agentCommands': [[], void];
  /** With a rule's id (a tool card's "Revoke rule"): that rule is revoked; without: a picker of them all. */
  'agentHost.managePermissionRules': [[ruleId?: string], void];
  /** The rules view's inline Revoke: its node (none: the picker of agentHost.managePermissionRules). */
  'agentHost.revokeRule': [[node?: unknown], void];
  'agentHost.addRule': [[], void];
  'agentHost.filterRules': [[], void];
  /** Shows the Permission Rules view (hidden until asked for, so the chat keeps the sidebar's title bar). */
  'agentHost.showPermissionRules': [[], void];
  /** A tool card's or notice's "Allow" on what the sandbox blocked: a modal, then the user's agentHost.sandbox.allow. */
  'agentHost.allowInSandbox': [[kind?: 'write' | 'network', target?: string], void];
  'agentHost.showTurnChanges': [[], void];
  /** `true` skips the confirmation; `tab` whose last turn (the active tab's by default; `turn`: only while it is that tab's last); the result lists the files that could not be restored. */
  'agentHost.revertTurnChanges': [[confirmed?: boolean, tab?: string, turn?: number], string[] | undefined];
  /** The multi-file diff of a tab's last turn (`turn`: only while it is that tab's last); the result is how many files it shows. */
  'agentHost.reviewTurnChanges': [[tab?: string, turn?: number], number];
  /** A file of the review (the focused one, else picked): accept keeps it as it is, reject restores it. */
  'agentHost.acceptTurnFile': [[uri?: vscode.Uri], void];
  'agentHost.rejectTurnFile': [[uri?: vscode.Uri], void];
  /** The change at `line` (0-based) of `uri`, the cursor's by default, goes back to its content before the turn. */
  'agentHost.rejectTurnHunk': [[uri?: vscode.Uri, line?: number], void];
  'agentHost.followAgent': [[], void];
  'agentHost.stopFollowingAgent': [[], void];
  'agentHost.focusChat': [[], void];
  'agentHost.addSelectionToChat': [[], void];
  'agentHost.newChat': [[], void];
  'agentHost.newChatTab': [[], void];
  'agentHost.sessionHistory': [[], void];
  /** The entry added to agentHost.agents, or undefined when the person gave up. */
  'agentHost.addAgent': [[], unknown];
  'agentHost.manageInstalledAgents': [[], void];
  /** The report shown, or undefined when none was made. */
  'agentHost.checkCompatibility': [[], unknown];
  /** Opens the walkthrough "Get started with Atrium". */
  'agentHost.getStarted': [[], void];
  'agentHost.showTraffic': [[], void];
  'agentHost.explainSelection': [[uri?: vscode.Uri, range?: vscode.Range], void];
  'agentHost.generateDocstring': [[uri?: vscode.Uri, range?: vscode.Range], void];
  'agentHost.optimizeSelection': [[uri?: vscode.Uri, range?: vscode.Range], void];
  'agentHost.fixSelection': [[uri?: vscode.Uri, range?: vscode.Range], void];
  'agentHost.generateUnitTests': [[uri?: vscode.Uri, range?: vscode.Range], void];
  'agentHost.askAboutSelection': [[uri?: vscode.Uri, range?: vscode.Range], void];
  'agentHost.proposal.accept': [[uri?: vscode.Uri], void];
  'agentHost.proposal.reject': [[uri?: vscode.Uri], void];
  /** One prompt on several agents, each in a git worktree (docs/fanout.md): the prompt, else an input box. */
  'agentHost.runOnSeveralAgents': [[prompt?: string], void];
  'agentHost.setRunsCheckCommand': [[], void];
  /** The Runs view's actions on a run (its tree node). */
  'agentHost.openRunChat': [[node?: unknown], unknown];
  'agentHost.diffRun': [[node?: unknown], void];
  'agentHost.compareRuns': [[node?: unknown], void];
  'agentHost.applyRun': [[node?: unknown], void];
  'agentHost.applyRunAsBranch': [[node?: unknown], void];
  'agentHost.keepRun': [[node?: unknown], void];
  'agentHost.discardRun': [[node?: unknown], void];
  /** Shows a tab in the sidebar chat (VS Code's Chat view: "Continue in Atrium's Chat"); a closed one: the session history. */
  'agentHost.openChatTab': [[tab?: string], void];
}

export type CommandId = keyof CommandMap;

/** The ids, for code that lists them (tests hold them against package.json). */
export const COMMAND_IDS: readonly CommandId[] = [
  'agentHost.start',
  'agentHost.restart',
  'agentHost.stop',
  'agentHost.signIn',
  'agentHost.selectAgent',
  'agentHost.showLog',
  'agentHost.prompt',
  'agentHost.cancel',
  'agentHost.noOutput',
  'agentHost.agentCommands',
  'agentHost.managePermissionRules',
  'agentHost.revokeRule',
  'agentHost.addRule',
  'agentHost.filterRules',
  'agentHost.showPermissionRules',
  'agentHost.allowInSandbox',
  'agentHost.showTurnChanges',
  'agentHost.revertTurnChanges',
  'agentHost.reviewTurnChanges',
  'agentHost.acceptTurnFile',
  'agentHost.rejectTurnFile',
  'agentHost.rejectTurnHunk',
  'agentHost.followAgent',
  'agentHost.stopFollowingAgent',
  'agentHost.focusChat',
  'agentHost.addSelectionToChat',
  'agentHost.newChat',
  'agentHost.newChatTab',
  'agentHost.sessionHistory',
  'agentHost.addAgent',
  'agentHost.manageInstalledAgents',
  'agentHost.checkCompatibility',
  'agentHost.getStarted',
  'agentHost.showTraffic',
  'agentHost.explainSelection',
  'agentHost.generateDocstring',
  'agentHost.optimizeSelection',
  'agentHost.fixSelection',
  'agentHost.generateUnitTests',
  'agentHost.askAboutSelection',
  'agentHost.proposal.accept',
  'agentHost.proposal.reject',
  'agentHost.runOnSeveralAgents',
  'agentHost.setRunsCheckCommand',
  'agentHost.openRunChat',
  'agentHost.diffRun',
  'agentHost.compareRuns',
  'agentHost.applyRun',
  'agentHost.applyRunAsBranch',
  'agentHost.keepRun',
  'agentHost.discardRun',
  'agentHost.openChatTab',
];

/** Context keys package.json's `enablement` and `when` clauses read. */
export interface ContextKeyValues {
  /** An agent process is up or starting (Stop has something to stop). */
  'agentHost.agentRunning': boolean;
  /** A turn is running (Cancel has something to cancel). */
  'agentHost.turnRunning': boolean;
  /** The running agent has a command surface ("Agent Commands…"). */
  'agentHost.agentHasCommands': boolean;
  /** A running turn has heard nothing from the agent past `agentHost.silenceWarningSeconds`. */
  'agentHost.agentSilent': boolean;
  /** Follow Agent is on (src/views/chat/followAgent.ts): the chat's title bar shows its off switch. */
  'agentHost.followingAgent': boolean;
}

export const CONTEXT_KEYS: readonly (keyof ContextKeyValues)[] = ['agentHost.agentRunning', 'agentHost.turnRunning', 'agentHost.agentHasCommands', 'agentHost.agentSilent', 'agentHost.followingAgent'];
