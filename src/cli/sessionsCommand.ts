/**
 * `agent-host sessions list|show|export|delete|rename`: the headless face of session history. The list is
 * the agent's own (`session/list`) when an agent is named and offers one, else Atrium's local index;
 * show and export print the local transcript copy; delete asks the agent (`session/delete`) when it can and
 * always forgets the local copy.
 */
import { oneLine } from '../core/visibleText';
import type { AgentSessionDirectory } from '../session/agentSession';
import { transcriptMarkdown, type SessionStore } from '../session/sessionStore';

export interface SessionsDeps {
  store: SessionStore;
  /** Reaches the named agent's own store; undefined when no agent was named. */
  openDirectory?: () => Promise<AgentSessionDirectory | undefined>;
  /** Only this agent's local entries (the configured name). */
  agent?: string;
  cwd?: string;
  format: 'text' | 'json';
  out: (text: string) => void;
  err: (text: string) => void;
}

export interface ListedSession {
  sessionId: string;
  title: string;
  cwd: string;
  updatedAt: string;
  source: 'agent' | 'local';
}

export const SESSIONS_USAGE = `Usage: agent-host sessions <verb> [options]

  list                 the agent's sessions (with --config/--agent or --command, when it keeps a list),
                       else Atrium's local index; --cwd DIR narrows either
  show ID              the session's details and Atrium's copy of its transcript
  export ID            the transcript as Markdown on stdout
  rename ID TITLE      a new title in the local index
  delete ID            deleted by the agent when it can (session/delete), and from the local index

Options: --format text|json, --state-dir DIR (default $XDG_STATE_HOME/agent-host or ~/.local/state/agent-host)`;

async function withDirectory<T>(deps: SessionsDeps, use: (d: AgentSessionDirectory) => Promise<T>): Promise<T | undefined> {
  const directory = await deps.openDirectory?.();
  if (!directory) return undefined;
  try {
    return await use(directory);
  } finally {
    await directory.close();
  }
}

/** Runs one verb; resolves with the exit code. */
export async function runSessions(args: string[], deps: SessionsDeps): Promise<number> {
  const [verb, id, ...rest] = args;
  const needId = () => {
    if (!id) {
      deps.err(`sessions ${verb} needs a session id\n\n${SESSIONS_USAGE}`);
      return false;
    }
    return true;
  };
  switch (verb) {
    case 'list': {
      const local = deps.store.list({ ...(deps.agent ? { agent: deps.agent } : {}), ...(deps.cwd ? { cwd: deps.cwd } : {}) });
      const fromAgent = await withDirectory(deps, (d) => d.list(deps.cwd));
      const hidden = deps.store.hidden();
      const rows: ListedSession[] = fromAgent
        ? fromAgent
            .filter((s) => !hidden.has(s.sessionId))
            .map((s) => ({
              sessionId: s.sessionId,
              title: s.title ?? deps.store.get(s.sessionId)?.title ?? '(untitled)',
              cwd: s.cwd,
              updatedAt: s.updatedAt ?? deps.store.get(s.sessionId)?.updatedAt ?? '',
              source: 'agent' as const,
            }))
        : local.map((r) => ({ sessionId: r.sessionId, title: r.title, cwd: r.cwd, updatedAt: r.updatedAt, source: 'local' as const }));
      if (deps.format === 'json') deps.out(`${JSON.stringify(rows)}\n`);
      else if (!rows.length) deps.out('No sessions.\n');
      else for (const r of rows) deps.out(`${oneLine(r.sessionId)}  ${oneLine(r.updatedAt || '-')}  ${oneLine(r.title)}  (${r.source}, ${oneLine(r.cwd)})\n`);
      return 0;
    }
    case 'show':
    case 'export': {
      if (!needId()) return 2;
      const record = deps.store.get(id!);
      const entities = deps.store.transcript(id!);
      if (!record) {
        deps.err(`no session ${id} in the local index (${deps.store.dir})`);
        return 1;
      }
      if (verb === 'show' && deps.format === 'json') deps.out(`${JSON.stringify({ ...record, transcript: entities ?? [] })}\n`);
      else deps.out(transcriptMarkdown(record, entities ?? []));
      return 0;
    }
    case 'rename': {
      if (!needId()) return 2;
      const title = rest.join(' ').trim();
      if (!title) {
        deps.err('sessions rename needs a title');
        return 2;
      }
      if (!deps.store.rename(id!, title)) {
        deps.err(`no session ${id} in the local index (${deps.store.dir})`);
        return 1;
      }
      return 0;
    }
    case 'delete': {
      if (!needId()) return 2;
      const byAgent = (await withDirectory(deps, (d) => d.delete(id!))) ?? false;
      // Named agent that kept it: hidden from its list from now on.
      const local = deps.store.delete(id!, !!deps.openDirectory && !byAgent);
      if (!byAgent && !local) {
        deps.err(`no session ${id} in the local index (${deps.store.dir})${deps.openDirectory ? ', and the agent cannot delete sessions' : ''}`);
        return 1;
      }
      if (deps.format === 'json') deps.out(`${JSON.stringify({ sessionId: id, deletedByAgent: byAgent, deletedLocally: local })}\n`);
      else deps.out(`Deleted ${id}${byAgent ? ' (by the agent too)' : ''}.\n`);
      return 0;
    }
    default:
      deps.err(`unknown sessions verb "${verb ?? ''}"\n\n${SESSIONS_USAGE}`);
      return 2;
  }
}
