/**
 * Where a message longer than the limit keeps its whole text: a file per message in the session store's
 * folder (`sessions/long/`), named by session and message, while the session model keeps only its head.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type LongTextStore, SessionModel } from './sessionModel';
import { defaultStateDir } from './sessionStore';

/** Characters of a message kept in memory; past them the head stays and the whole text goes to a file. */
export const MESSAGE_TEXT_LIMIT = 16 * 1024 * 1024;

/** Files in `dir` (created on the first long message); `limit` characters of each message kept in memory. */
export function longTextStore(dir = longTextDir(), limit = MESSAGE_TEXT_LIMIT): LongTextStore {
  return { limit, file: (sessionId, messageId) => longTextFile(dir, sessionId, messageId), write: writeLongText };
}

/** The store's folder for long messages: `<state dir>/sessions/long`. */
export function longTextDir(stateDir = defaultStateDir()): string {
  return path.join(stateDir, 'sessions', 'long');
}

const hash = (s: string, n: number) => createHash('sha256').update(s).digest('hex').slice(0, n);

/** The prefix of every long-message file of a session (ids come from agents: hashed, never a path of their own). */
export function longTextPrefix(sessionId: string): string {
  return `${hash(sessionId, 32)}-`;
}

export function longTextFile(dir: string, sessionId: string, messageId: string): string {
  return path.join(dir, `${longTextPrefix(sessionId)}${hash(messageId, 16)}.md`);
}

/** Writes (`append` false) or extends a message's file; the error's message when it could not. */
export function writeLongText(file: string, text: string, append: boolean): string | undefined {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    if (append) fs.appendFileSync(file, text);
    else fs.writeFileSync(file, text, { mode: 0o600 });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Removes a session's long-message files from `dir`. */
export function removeLongTexts(dir: string, sessionId: string): void {
  const prefix = longTextPrefix(sessionId);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix)) fs.rmSync(path.join(dir, name), { force: true });
}

/** A session's model whose messages keep at most MESSAGE_TEXT_LIMIT characters in memory (the rest in the store's folder). */
export function boundedModel(sessionId: string): SessionModel {
  const model = new SessionModel(sessionId);
  model.longText = longTextStore();
  return model;
}
