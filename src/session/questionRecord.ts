/**
 * What an agent asked the person (`_agentao.cn/ask_user`, ACP `elicitation/create`, pi's extension UI) and
 * what they answered, as one line for the transcript: the question stays on record after its dialog closes.
 */
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

/** The record of one answered (or cancelled) question request; undefined for a method that asks nothing. */
export function questionRecord(method: string, params: unknown, result: unknown): QuestionRecord | undefined {
  const p = (params ?? {}) as Record<string, unknown>;
  const r = (result ?? {}) as Record<string, unknown>;
  if (method === '_agentao.cn/ask_user') {
    const question = text(p.question) ?? text(p.header) ?? '(no question text)';
    return { question, answer: r.outcome === 'answered' && typeof r.text === 'string' ? r.text : undefined };
  }
  if (method === 'elicitation/create') {
    const question = text(p.message) ?? (typeof p.url === 'string' ? p.url : '(no message)');
    if (r.action !== 'accept') return { question, answer: undefined };
    const content = r.content && typeof r.content === 'object' ? Object.entries(r.content as Record<string, unknown>) : [];
    return { question, answer: content.length ? content.map(([k, v]) => `${k}: ${shown(v)}`).join(', ') : 'accepted' };
  }
  return undefined;
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
export function questionNotice(agentName: string, record: QuestionRecord): { title: string; detail: string } {
  return { title: `${agentName} asked: ${record.question}`, detail: record.answer === undefined ? 'No answer (cancelled)' : `Answer: ${record.answer}` };
}
