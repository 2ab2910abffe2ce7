/**
 * The one builder of prompt content blocks (ACP ContentBlock shapes; the pi adapter flattens them): the text
 * first, then each piece of context — a file as a `resource_link`, code as an embedded `resource` when the
 * agent takes embedded context (else a link, or fenced text when the agent must see this exact text), an
 * image only when the agent takes images. Used by the chat composer and the selection commands.
 */
import type { PromptCapabilities } from './agentSession';
import type { ContentPart } from './sessionModel';

export interface PromptContext {
  /** file: a link to a whole file; code: lines of a file; text: a labelled body (e.g. problems); image: base64. */
  kind: 'file' | 'code' | 'text' | 'image';
  label: string;
  /** file / code: the file's URI; text: the URI an embedded body gets. */
  uri?: string;
  /** code: 1-based, inclusive. */
  lines?: { start: number; end: number };
  /** code / text: the body; image: base64 data. */
  text?: string;
  /** image: its type; otherwise derived from the URI or the language. */
  mimeType?: string;
  /** code: the editor's language id (fence and MIME type). */
  languageId?: string;
  /** code: the agent must see this text (it may differ from the file, e.g. a body elided): fenced when not embedded. */
  inline?: boolean;
  /** code, inline: the file's path as the fenced text names it. */
  path?: string;
}

const MIME_BY_EXT: Record<string, string> = {
  ts: 'text/x-typescript',
  tsx: 'text/x-typescript',
  js: 'text/javascript',
  mjs: 'text/javascript',
  py: 'text/x-python',
  md: 'text/markdown',
  json: 'application/json',
};
const MIME_BY_LANGUAGE: Record<string, string> = {
  python: 'text/x-python',
  typescript: 'text/x-typescript',
  typescriptreact: 'text/x-typescript',
  javascript: 'text/javascript',
  json: 'application/json',
  markdown: 'text/markdown',
};

export function mimeTypeOf(uri: string | undefined, languageId?: string): string | undefined {
  if (languageId && MIME_BY_LANGUAGE[languageId]) return MIME_BY_LANGUAGE[languageId];
  const ext = /\.([A-Za-z0-9]+)$/.exec((uri ?? '').split(/[?#]/)[0] ?? '')?.[1]?.toLowerCase();
  return ext ? MIME_BY_EXT[ext] : undefined;
}

/** `3-5` for a span, `3` for one line (1-based, inclusive). */
export function spanText(lines: { start: number; end: number }): string {
  return lines.start === lines.end ? `${lines.start}` : `${lines.start}-${lines.end}`;
}

/** A file URI with its line span as a GitHub-style fragment: `#L3-L5`, `#L3`. */
export function uriWithLines(uri: string, lines: { start: number; end: number } | undefined): string {
  if (!lines) return uri;
  return `${uri}#L${lines.start}${lines.end !== lines.start ? `-L${lines.end}` : ''}`;
}

export function buildPromptParts(text: string, contexts: PromptContext[], caps: PromptCapabilities): { parts: ContentPart[]; dropped: PromptContext[] } {
  const parts: ContentPart[] = [];
  const dropped: PromptContext[] = [];
  if (text.trim()) parts.push({ type: 'text', text });
  for (const ctx of contexts) {
    switch (ctx.kind) {
      case 'file': {
        if (!ctx.uri) break;
        const mimeType = mimeTypeOf(ctx.uri);
        parts.push({ type: 'resource_link', uri: ctx.uri, name: ctx.label, ...(mimeType ? { mimeType } : {}) });
        break;
      }
      case 'code': {
        if (!ctx.uri || (ctx.inline && !ctx.text?.trim())) break;
        const uri = uriWithLines(ctx.uri, ctx.lines);
        const mimeType = mimeTypeOf(ctx.uri, ctx.languageId);
        if (caps.embeddedContext && ctx.text !== undefined) {
          parts.push({ type: 'resource', resource: { uri, text: ctx.text, ...(mimeType ? { mimeType } : { mimeType: 'text/plain' }) } });
        } else if (ctx.inline && ctx.text !== undefined) {
          const fence = ctx.text.includes('```') ? '~~~~' : '```';
          const where = ctx.lines ? ` (lines ${spanText(ctx.lines)})` : '';
          parts.push({ type: 'text', text: `\n\n${ctx.label}: ${ctx.path ?? ctx.uri}${where}\n${fence}${ctx.languageId ?? ''}\n${ctx.text}\n${fence}` });
        } else {
          parts.push({ type: 'resource_link', uri, name: ctx.label, ...(mimeType ? { mimeType } : {}) });
        }
        break;
      }
      case 'text': {
        const body = ctx.text ?? '';
        if (caps.embeddedContext && ctx.uri) parts.push({ type: 'resource', resource: { uri: ctx.uri, text: body, mimeType: ctx.mimeType ?? 'text/plain' } });
        else parts.push({ type: 'text', text: `\n\n${ctx.label}:\n${body}` });
        break;
      }
      case 'image': {
        if (caps.image && ctx.text) parts.push({ type: 'image', data: ctx.text, mimeType: ctx.mimeType ?? 'image/png' });
        else dropped.push(ctx);
        break;
      }
    }
  }
  return { parts, dropped };
}
