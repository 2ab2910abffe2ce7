/**
 * The content blocks of a task prompt: the instructions as text, then each piece of code context — as ACP
 * `resource` blocks when the agent accepts embedded context, else as fenced text (the session layer's one
 * builder does both). No vscode.
 */
import { pathToFileURL } from 'node:url';
import { buildPromptParts as buildParts, spanText, uriWithLines } from '../session/promptParts';
import type { ContentPart } from '../session/sessionModel';

export interface Position {
  line: number;
  character: number;
}

/** A piece of code the prompt carries (the original service's `selected_text` / `visible_text` shape). */
export interface CodeContext {
  /** What it is, for the text form: "selection", "visible code", "definition of Foo", "reference test", … */
  label: string;
  filepath: string;
  /** 0-based, end exclusive (VS Code's convention). */
  range: { start: Position; end: Position };
  text: string;
  languageId: string;
}

function lines(range: CodeContext['range']): { start: number; end: number } {
  const start = range.start.line + 1;
  // A selection ending at column 0 of a line does not include that line.
  const end = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return { start, end };
}

/** `1-4` style, 1-based and inclusive: what a reader of the prompt expects. */
export function lineSpan(range: CodeContext['range']): string {
  return spanText(lines(range));
}

export function contextUri(ctx: CodeContext): string {
  return uriWithLines(pathToFileURL(ctx.filepath).href, lines(ctx.range));
}

export function buildPromptParts(instructions: string, contexts: CodeContext[], embeddedContext: boolean): ContentPart[] {
  const items = contexts.map((ctx) => ({
    kind: 'code' as const,
    label: ctx.label,
    uri: pathToFileURL(ctx.filepath).href,
    path: ctx.filepath,
    lines: lines(ctx.range),
    text: ctx.text,
    languageId: ctx.languageId,
    inline: true,
  }));
  return buildParts(instructions, items, { image: false, embeddedContext }).parts;
}

/**
 * What the chat shows as the user's message for a task prompt: a short label (e.g. "Docstring: cart_total in
 * pricing.py") and the first piece of context (the code the task is about) as a chip — the agent still gets
 * the whole prompt.
 */
export function displayParts(label: string, contexts: CodeContext[]): ContentPart[] {
  const parts: ContentPart[] = [{ type: 'text', text: label }];
  const main = contexts.find((c) => c.text.trim() !== '');
  if (main) {
    const base = main.filepath.split(/[\\/]/).pop() ?? main.filepath;
    parts.push({ type: 'resource_link', uri: contextUri(main), name: `${base}:${lineSpan(main.range)}` });
  }
  return parts;
}
