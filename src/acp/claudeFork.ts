/**
 * Going back in a claude-agent-acp conversation: ACP's `session/fork` copies the whole conversation, but this
 * agent passes `_meta.claudeCode.options` to the Claude Agent SDK, whose `resumeSessionAt` forks at a message.
 * The message ids are in the agent's own session file (`<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<folder>/
 * <session id>.jsonl`, one JSON record per line): the fork goes up to the record before the user's prompt.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** claude-agent-acp (and its older name) is the one agent whose fork takes a message. */
export function forksAtMessage(agentName: string): boolean {
  return /^@zed-industries\/claude-(agent|code)-acp$/.test(agentName);
}

/** The agent's config folder as its process sees it (its env over ours when it inherits ours). */
export function claudeConfigDir(env: Record<string, string | undefined>, inherits: boolean): string {
  const pick = (name: string) => env[name] ?? (inherits ? process.env[name] : undefined);
  return pick('CLAUDE_CONFIG_DIR') ?? path.join(pick('HOME') ?? os.homedir(), '.claude');
}

interface SessionRecord {
  type?: string;
  uuid?: string;
  parentUuid?: string | null;
  isMeta?: boolean;
  isSidechain?: boolean;
  message?: { content?: unknown };
}

/** The session's file under `projects/<any folder>/`, or undefined. */
function sessionFile(configDir: string, sessionId: string): string | undefined {
  const projects = path.join(configDir, 'projects');
  let folders: string[];
  try {
    folders = fs.readdirSync(projects);
  } catch {
    return undefined;
  }
  for (const folder of folders) {
    const file = path.join(projects, folder, `${sessionId}.jsonl`);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/** A prompt the person sent: a user record with text and no tool result (not a command's caveat or output). */
function isPrompt(r: SessionRecord): boolean {
  if (r.type !== 'user' || r.isMeta || r.isSidechain || !Array.isArray(r.message?.content)) return false;
  const blocks = r.message.content as { type?: string; text?: string }[];
  if (blocks.some((b) => b.type === 'tool_result')) return false;
  const first = blocks.find((b) => b.type === 'text');
  // Reminders the agent injects are no prompt (the transcript leaves them out too: acpSession.ts).
  return first !== undefined && !/^\s*<system-reminder>/.test(first.text ?? '');
}

export type ResumePoint = { at: string } | { start: true } | { missing: string };

/**
 * Where a fork that drops the `index`-th of the session's last `count` prompts resumes: the record before that
 * prompt, or the start (the first prompt); `missing` says why it is not found. A reattached session's file holds
 * earlier prompts too (counted from the end); one with fewer than `count` is still being written (a moment after
 * a turn ends).
 */
export function claudeResumePoint(configDir: string, sessionId: string, index: number, count: number): ResumePoint {
  const file = sessionFile(configDir, sessionId);
  if (!file) return { missing: `no session file ${sessionId}.jsonl under ${path.join(configDir, 'projects')}` };
  const prompts: SessionRecord[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const record = JSON.parse(line) as SessionRecord;
      if (isPrompt(record)) prompts.push(record);
    } catch {
      // a line being written: the rest is read
    }
  }
  if (prompts.length < count) return { missing: `the session file holds ${prompts.length} of the ${count} prompts yet` };
  const target = prompts[prompts.length - count + index];
  if (!target) return { missing: `no prompt ${index + 1} of ${count} in the session file` };
  return target.parentUuid ? { at: target.parentUuid } : { start: true };
}
