/**
 * What an agent asked the person (askUser, elicit, pi's extension UI) and
 * what they answered, as one line for the transcript: the question stays on record after its dialog closes.
 */
import type { AskUserAnswer, AskUserRequest, ElicitAnswer } from './sessionHost';
import { type Phrase, phrase } from './notices';

export interface QuestionRecord {
  question: string;
  /** The answer as given, or undefined when the person cancelled or declined. */
  answer: string | undefined;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

function shown(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return JSON.stringify(value);
}

/** The record of one answered (or cancelled) question. */
export function askUserRecord(request: AskUserRequest, answer: AskUserAnswer): QuestionRecord {
  const question = text(request.question) ?? text(request.header) ?? '(no question text)';
  return { question, answer: answer.outcome === 'answered' ? answer.text : undefined };
}

/** The record of one form or link request and what became of it. */
export function elicitRecord(request: { message?: string; url?: string }, answer: ElicitAnswer): QuestionRecord {
  const question = text(request.message) ?? request.url ?? '(no message)';
  if (answer.action !== 'accept') return { question, answer: undefined };
  const content = Object.entries(answer.content ?? {});
  return { question, answer: content.length ? content.map(([k, v]) => `${k}: ${shown(v)}`).join(', ') : 'accepted' };
}

/** pi's extension UI dialogs (`select`, `confirm`, `input`, `editor`) and their `extension_ui_response`. */
export function uiQuestionRecord(frame: Record<string, unknown>, answer: { value?: string; confirmed?: boolean; cancelled?: true; timedOut?: boolean }): QuestionRecord | undefined {
  const method = frame.method;
  if (method !== 'select' && method !== 'confirm' && method !== 'input' && method !== 'editor') return undefined;
  const parts = [text(frame.title), method === 'confirm' ? text(frame.message) : undefined].filter((s): s is string => !!s);
  const question = parts.join(' — ') || `(${method})`;
  if (answer.cancelled) return { question, answer: undefined };
  if (typeof answer.confirmed === 'boolean') return { question, answer: answer.confirmed ? 'yes' : 'no' };
  return { question, answer: answer.value ?? '' };
}

/** The transcript notice's title and detail for a record. */
export function questionNotice(agentName: string, record: QuestionRecord): { title: Phrase; detail: Phrase } {
  return { title: phrase('asked', agentName, record.question), detail: record.answer === undefined ? phrase('noAnswer') : phrase('answer', record.answer) };
}
