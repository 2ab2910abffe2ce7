/**
 * The `@` menu's items: the selection, problems, the active terminal's output, the git changes, a link (when
 * the query is an http(s) URL), then the files, folders and workspace symbols the extension finds. Each pick
 * becomes a chip; a source with nothing to give says so instead.
 */
import type { ChatStrings, ContextChip, FileHit } from '../../src/shared/chatProtocol';
import { fmt } from './dom';
import { request } from './rpc';

export interface MenuItem {
  label: string;
  description?: string;
  iconName: string;
  pick: () => void | Promise<void>;
}

let linkCount = 0;

/**
 * `clear` takes the typed `@query` away; `add` adds a chip; `warn` says why nothing was added; `stale` is true
 * once a newer query replaced this one (its answer is not shown).
 */
export async function mentionItems(query: string, s: ChatStrings, clear: () => void, add: (chip: ContextChip) => void, warn: (text: string) => void, stale: () => boolean): Promise<MenuItem[]> {
  const fromEditor = (what: 'selection' | 'problems' | 'terminal' | 'git', none?: string) => async () => {
    clear();
    const chip = await request('editorContext', { what });
    if (chip) add(chip);
    else if (none) warn(none);
  };
  const q = query.toLowerCase();
  const items: MenuItem[] = [];
  const offer = (label: string, iconName: string, pick: () => Promise<void>) => {
    if (!q || label.toLowerCase().includes(q)) items.push({ label, iconName, pick });
  };
  offer(s.addSelection, 'selection', fromEditor('selection'));
  offer(s.addProblems, 'warning', fromEditor('problems'));
  offer(s.addTerminal, 'terminal', fromEditor('terminal', s.noTerminalOutput));
  offer(s.addGitChanges, 'git-compare', fromEditor('git', s.noGitRepository));
  if (/^https?:\/\/\S+$/i.test(query)) {
    items.unshift({
      label: fmt(s.addLink, query),
      iconName: 'link',
      pick: () => {
        clear();
        add({ id: `link-${++linkCount}`, kind: 'url', label: query, uri: query });
      },
    });
    return items;
  }
  let hits: FileHit[] = [];
  try {
    hits = await request('searchFiles', { query });
  } catch {
    hits = [];
  }
  if (stale()) return items;
  for (const f of hits) {
    const kind = f.kind ?? 'file';
    items.push({
      label: f.label,
      description: f.description,
      iconName: kind === 'symbol' ? 'symbol-method' : kind,
      pick: async () => {
        clear();
        if (kind !== 'symbol') add({ id: `hit-${++linkCount}`, kind, label: kind === 'folder' ? `${f.description ? `${f.description}/` : ''}${f.label}` : f.label, uri: f.uri });
        else {
          const chip = await request('symbolContext', { uri: f.uri, label: f.label, startLine: f.range?.startLine ?? 1, endLine: f.range?.endLine ?? 1 });
          if (chip) add(chip);
        }
      },
    });
  }
  return items;
}
