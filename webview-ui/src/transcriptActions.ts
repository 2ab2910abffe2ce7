/** What a click in the transcript does: links and the actions of cards and code blocks (`data-action`). */
import { codeOf } from './cards';
import { send } from './rpc';
import type { TranscriptHooks } from './transcript';

/** What a click needs of the transcript: a tool card's toggle, and a message's markdown source by its key. */
export interface TranscriptClicks {
  toggleTool: (id: string) => void;
  textOf: (key: string) => string | undefined;
}

export function onTranscriptClick(e: Event, hooks: TranscriptHooks, { toggleTool, textOf }: TranscriptClicks): void {
  const target = (e.target as HTMLElement).closest<HTMLElement>('[data-action], a[href]');
  if (!target) return;
  const action = target.dataset.action;
  if (!action && target.tagName === 'A') {
    e.preventDefault();
    const href = target.getAttribute('href');
    if (href && href !== '#') send('openLink', { href });
    return;
  }
  e.preventDefault();
  switch (action) {
    case 'toggle-tool':
      toggleTool(target.dataset.id!);
      break;
    case 'open-location':
      send('openLocation', { path: target.dataset.path!, line: target.dataset.line ? Number(target.dataset.line) : null });
      break;
    case 'open-diff': {
      const data = (target.closest('.diff-block') as (HTMLElement & { diffData?: { path: string; oldText: string | null; newText: string } }) | null)?.diffData;
      if (data) send('openDiff', data);
      break;
    }
    case 'answer-permission':
      send('answerPermission', { permissionId: target.dataset.permission!, optionId: target.dataset.option!, ...(target.dataset.scope === 'prefix' ? { scope: 'prefix' as const } : {}) });
      break;
    case 'restart':
      send('restart', {});
      break;
    case 'show-log':
      send('showLog', {});
      break;
    case 'copy-message': {
      // The message's markdown source, as the agent wrote it (never the page's text).
      const text = textOf(target.closest<HTMLElement>('.entry')?.dataset.key ?? '');
      if (text === undefined) break;
      send('copy', { text });
      target.setAttribute('title', hooks.strings().copied);
      hooks.announce(hooks.strings().copied);
      break;
    }
    case 'restore-checkpoint':
    case 'edit-resend':
    case 'retry-prompt':
      send('restoreCheckpoint', { key: target.closest<HTMLElement>('.entry')?.dataset.key ?? '', ...(action === 'edit-resend' ? { edit: true } : action === 'retry-prompt' ? { retry: true } : {}) });
      break;
    case 'sandbox-allow':
      send('allowInSandbox', { kind: target.dataset.kind === 'network' ? 'network' : 'write', target: target.dataset.target ?? '' });
      break;
    case 'revoke-rule':
      send('revokeRule', { id: target.dataset.rule! });
      break;
    case 'review-changes':
    case 'undo-changes':
      send(action === 'review-changes' ? 'reviewChanges' : 'undoChanges', { tab: target.dataset.tab!, turn: Number(target.dataset.turn) });
      break;
    case 'show-terminal':
      send('showTerminal', { id: target.dataset.terminal! });
      break;
    case 'copy':
    case 'insert':
    case 'apply':
    case 'run': {
      // The block's code as the markdown source has it, never the DOM's text.
      const code = codeOf(target);
      if (code === undefined) break;
      if (action === 'copy') {
        send('copy', { text: code });
        target.setAttribute('title', hooks.strings().copied);
        hooks.announce(hooks.strings().copied);
      } else if (action === 'insert') send('insertCode', { code });
      else if (action === 'apply') send('applyCode', { code });
      else send('runInTerminal', { code });
      break;
    }
  }
}
