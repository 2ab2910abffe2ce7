/**
 * The local session index shared by the CLI and the editor: one JSON index of the sessions Atrium has
 * run (title, agent, cwd, times, first prompt) and a slim copy of each transcript, in a user-level state
 * folder (`$XDG_STATE_HOME/agent-host`, else `~/.local/state/agent-host`; the CLI's `--state-dir` and the
 * `agentHost.sessions.stateDir` setting change it). Writes go to a temporary file and are renamed into
 * place, so a reader never sees half a file; two writers at the same instant can lose one update of the
 * index (last writer wins), never corrupt it. No vscode import: plain Node, unit-tested.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { visibleControls } from '../core/visibleText';
import type { TimelineEntity } from './sessionModel';
import { longTextDir, removeLongTexts } from './longText';
import { boundedHistory } from './transcriptCopy';

export interface SessionRecord {
  sessionId: string;
  /** The configured agent's name. */
  agent: string;
  title: string;
  cwd: string;
  createdAt: string;
  updatedAt: string;
  firstPrompt?: string;
}

/**
 * Refused by upsert: the id is recorded for another agent or folder. Ids come from agents, so one agent could
 * name another's session; that record and its transcript copy stay as they are, and this session goes unrecorded.
 */
export class SessionIdTakenError extends Error {
  constructor(readonly owner: SessionRecord) {
    super(`The id ${owner.sessionId} is already recorded for agent "${owner.agent}" in ${owner.cwd}: that session's record and transcript copy are kept, and this session is not recorded.`);
  }
}

const INDEX_VERSION = 1;
const MAX_RECORDS = 2000;

/** `$XDG_STATE_HOME/agent-host`, else `~/.local/state/agent-host`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'agent-host');
}

/** A title from a prompt: its first line, at most 80 characters. */
export function titleFrom(prompt: string): string {
  const line = prompt.trim().split('\n')[0]!.trim();
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}

function writeAtomic(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** How long a turn's transcript copy may wait (saveTranscriptSoon): the turns of that time cost one write. */
export const TRANSCRIPT_DELAY_MS = 5000;

export class SessionStore {
  private readonly indexFile: string;
  private readonly transcripts: string;
  /** Transcript copies waiting to be written (saveTranscriptSoon), by session id. */
  private readonly due = new Map<string, TimelineEntity[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private onWriteError: ((sessionId: string, error: Error) => void) | undefined;

  constructor(readonly dir: string) {
    this.indexFile = path.join(dir, 'sessions', 'index.json');
    this.transcripts = path.join(dir, 'sessions', 'transcripts');
  }

  /** Newest first; `agent` and `cwd` narrow the list. */
  list(filter: { agent?: string; cwd?: string } = {}): SessionRecord[] {
    return this.read()
      .filter((r) => (!filter.agent || r.agent === filter.agent) && (!filter.cwd || r.cwd === filter.cwd))
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.read().find((r) => r.sessionId === sessionId);
  }

  /** Deleted here while the agent keeps it (it cannot delete): left out of every list. */
  hidden(): Set<string> {
    return new Set(this.readIndex().hidden);
  }

  /**
   * Records a session (new or seen again): fields given win, `updatedAt` becomes now. A record keeps its agent
   * and folder: an id recorded for another throws SessionIdTakenError (call before saveTranscript).
   */
  upsert(entry: Pick<SessionRecord, 'sessionId' | 'agent' | 'cwd'> & Partial<SessionRecord>): SessionRecord {
    const { sessions: records, hidden } = this.readIndex();
    const now = new Date().toISOString();
    const i = records.findIndex((r) => r.sessionId === entry.sessionId);
    const before = i >= 0 ? records[i]! : undefined;
    if (before && (before.agent !== entry.agent || before.cwd !== entry.cwd)) throw new SessionIdTakenError(before);
    const record: SessionRecord = {
      createdAt: now,
      title: entry.firstPrompt ? titleFrom(entry.firstPrompt) : '(untitled)',
      ...before,
      ...entry,
      ...(before?.firstPrompt ? { firstPrompt: before.firstPrompt } : {}),
      ...(before && before.title !== '(untitled)' && !entry.title ? { title: before.title } : {}),
      updatedAt: now,
    };
    if (i >= 0) records.splice(i, 1);
    records.push(record);
    this.write(records.slice(-MAX_RECORDS), hidden);
    return record;
  }

  rename(sessionId: string, title: string): boolean {
    const { sessions: records, hidden } = this.readIndex();
    const r = records.find((x) => x.sessionId === sessionId);
    if (!r) return false;
    r.title = title.trim() || r.title;
    this.write(records, hidden);
    return true;
  }

  /**
   * Forgets a session, its transcript copy and its long messages' files; false when it was not in the index. `hide`: the agent still
   * keeps it (it cannot delete), so lists leave it out from now on.
   */
  delete(sessionId: string, hide = false): boolean {
    const { sessions: records, hidden } = this.readIndex();
    const kept = records.filter((r) => r.sessionId !== sessionId);
    this.due.delete(sessionId);
    fs.rmSync(this.transcriptFile(sessionId), { force: true });
    removeLongTexts(longTextDir(this.dir), sessionId);
    const nextHidden = hide && !hidden.includes(sessionId) ? [...hidden, sessionId].slice(-MAX_RECORDS) : hidden;
    if (kept.length === records.length && nextHidden === hidden) return false;
    this.write(kept, nextHidden);
    return kept.length !== records.length || hide;
  }

  /** Keeps a slim copy of the transcript (text and small metadata, bounded). */
  saveTranscript(sessionId: string, entities: TimelineEntity[]): void {
    this.due.delete(sessionId);
    writeAtomic(this.transcriptFile(sessionId), JSON.stringify(boundedHistory([], entities)));
  }

  /**
   * saveTranscript within `delayMs`: a copy costs its whole size (up to HISTORY_LIMITS), so the turns of that time
   * cost one write. This store reads a waiting copy as written; another process sees it once written; flush()
   * writes what waits (a process that ends, the window closing).
   */
  saveTranscriptSoon(sessionId: string, entities: TimelineEntity[], onError?: (sessionId: string, error: Error) => void, delayMs = TRANSCRIPT_DELAY_MS): void {
    this.due.set(sessionId, entities);
    this.onWriteError = onError;
    this.timer ??= setTimeout(() => this.flush(), delayMs);
  }

  /** Writes the transcript copies saveTranscriptSoon keeps waiting. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const [sessionId, entities] of [...this.due]) {
      try {
        this.saveTranscript(sessionId, entities);
      } catch (error) {
        this.due.delete(sessionId);
        this.onWriteError?.(sessionId, error as Error);
      }
    }
  }

  transcript(sessionId: string): TimelineEntity[] | undefined {
    const waiting = this.due.get(sessionId);
    if (waiting) return boundedHistory([], waiting);
    try {
      const parsed = JSON.parse(fs.readFileSync(this.transcriptFile(sessionId), 'utf8')) as unknown;
      return Array.isArray(parsed) ? (parsed as TimelineEntity[]) : undefined;
    } catch {
      return undefined;
    }
  }

  private transcriptFile(sessionId: string): string {
    // Session ids come from agents: hashed, so no id names a path of its own.
    return path.join(this.transcripts, `${createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}.json`);
  }

  private read(): SessionRecord[] {
    return this.readIndex().sessions;
  }

  private readIndex(): { sessions: SessionRecord[]; hidden: string[] } {
    let text: string;
    try {
      text = fs.readFileSync(this.indexFile, 'utf8');
    } catch {
      return { sessions: [], hidden: [] };
    }
    try {
      const parsed = JSON.parse(text) as { version?: number; sessions?: unknown; hidden?: unknown };
      if (parsed.version !== INDEX_VERSION || !Array.isArray(parsed.sessions)) throw new Error(`unknown index version ${String(parsed.version)}`);
      return {
        sessions: parsed.sessions.filter((r): r is SessionRecord => typeof r === 'object' && r !== null && typeof (r as SessionRecord).sessionId === 'string'),
        hidden: Array.isArray(parsed.hidden) ? parsed.hidden.filter((h): h is string => typeof h === 'string') : [],
      };
    } catch (error) {
      // A damaged index is kept aside, not overwritten silently.
      const aside = `${this.indexFile}.damaged-${Date.now()}`;
      fs.renameSync(this.indexFile, aside);
      // Node prints warnings on stderr itself, past the CLI's filter; the parse error quotes the damaged text.
      process.emitWarning(visibleControls(`agent-host: the session index was unreadable (${(error as Error).message}); moved to ${aside}`));
      return { sessions: [], hidden: [] };
    }
  }

  private write(records: SessionRecord[], hidden: string[]): void {
    writeAtomic(this.indexFile, `${JSON.stringify({ version: INDEX_VERSION, sessions: records, hidden }, null, 1)}\n`);
  }
}

/** The file name an export suggests: the title's words joined by `-`, nothing dangling at either end (`Fix it?` → `Fix-it.md`). */
export function exportFileName(title: string): string {
  const words = title.replace(/[^\p{L}\p{N}_.-]+/gu, '-').slice(0, 60);
  return `${words.replace(/^[-.]+|[-.]+$/g, '') || 'session'}.md`;
}

/** A transcript as Markdown: user and agent messages, tool calls as one line each, notices as quotes. */
export function transcriptMarkdown(record: Pick<SessionRecord, 'title' | 'agent' | 'cwd' | 'sessionId' | 'updatedAt'>, entities: TimelineEntity[]): string {
  const out = [`# ${record.title}`, '', `- Agent: ${record.agent}`, `- Session: \`${record.sessionId}\``, `- Folder: \`${record.cwd}\``, `- Updated: ${record.updatedAt}`, ''];
  for (const e of entities) {
    switch (e.kind) {
      case 'message':
        if (!e.text.trim()) break;
        out.push(e.role === 'user' ? '## User' : e.role === 'agent' ? '## Agent' : '### Thinking', '', e.text.trim(), '');
        break;
      case 'tool_call':
        out.push(`- Tool \`${e.toolKind}\`: ${e.title} (${e.status}${e.permission?.optionId ? `, ${e.permission.optionId}` : ''})`, '');
        break;
      case 'notice':
        out.push(`> **${e.title}**${e.detail ? ` ${e.detail.split('\n')[0]}` : ''}`, '');
        break;
      case 'permission':
        break;
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
