/** pi's message and tool-call shapes as the session model's: content parts, tool kinds, titles, locations. */
import type { ContentPart, ToolCallEntity } from '../session/sessionModel';
import type { ImageInput } from './commands';
import { isRecord } from './json';

const TOOL_KINDS: [RegExp, string][] = [
  [/^(read|view|cat)$|^read_/i, 'read'],
  [/^(write|edit|multi_?edit|patch|apply_patch|notebook_edit)$/i, 'edit'],
  [/^(bash|shell|exec|python|eval)$/i, 'execute'],
  [/^(grep|find|glob|ls|search|ast_grep|lsp)$|symbol|definition/i, 'search'],
  [/fetch|web_search|browser/i, 'fetch'],
  [/todo|plan|think/i, 'think'],
];

export function toolKind(name: string): string {
  for (const [re, kind] of TOOL_KINDS) if (re.test(name)) return kind;
  return 'other';
}

export function toolTitle(name: string, args: unknown): string {
  if (!isRecord(args)) return name;
  const target = args.path ?? args.file_path ?? args.abspath ?? args.command ?? args.pattern ?? args.url;
  return typeof target === 'string' && target ? `${name} ${target.length > 120 ? `${target.slice(0, 117)}…` : target}` : name;
}

export function toolLocations(args: unknown): ToolCallEntity['locations'] | undefined {
  if (!isRecord(args)) return undefined;
  const p = args.path ?? args.file_path ?? args.abspath;
  return typeof p === 'string' && p ? [{ path: p }] : undefined;
}

/** Tool result content (pi: `{content:[{type:"text"|"image"}]}`) as ACP tool-call content. */
export function toolContent(result: unknown): unknown[] | undefined {
  if (!isRecord(result) || !Array.isArray(result.content)) return undefined;
  return result.content.filter(isRecord).map((c) => ({ type: 'content', content: c }));
}

/** pi message content (a string or blocks) as content parts. */
export function messageParts(content: unknown): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isRecord).flatMap((c): ContentPart[] => {
    if (c.type === 'text') return [{ type: 'text', text: String(c.text ?? '') }];
    if (c.type === 'image') return [{ type: 'image', data: c.data, mimeType: c.mimeType }];
    return [];
  });
}

export function textOf(content: unknown, type: 'text' | 'thinking'): string {
  if (!Array.isArray(content)) return typeof content === 'string' && type === 'text' ? content : '';
  return content
    .filter(isRecord)
    .filter((c) => c.type === type)
    .map((c) => String((type === 'text' ? c.text : c.thinking) ?? ''))
    .join('');
}

/** Prompt content as pi takes it: one text (resource links as `@path`, embedded resources inline) and images. */
export function splitParts(parts: ContentPart[]): { message: string; images: ImageInput[] } {
  const texts: string[] = [];
  const images: ImageInput[] = [];
  for (const p of parts) {
    if (p.type === 'text') texts.push(p.text ?? '');
    else if (p.type === 'image' && typeof p.data === 'string') images.push({ type: 'image', data: p.data, mimeType: String(p.mimeType ?? 'image/png') });
    else if (p.type === 'resource_link' && typeof p.uri === 'string') texts.push(`@${String(p.uri).replace(/^file:\/\//, '')}`);
    else if (p.type === 'resource' && isRecord(p.resource) && typeof p.resource.text === 'string') texts.push(p.resource.text);
  }
  return { message: texts.join('\n'), images };
}
