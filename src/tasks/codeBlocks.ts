/** Fenced code blocks in an agent's Markdown answer. No vscode. */

export interface CodeBlock {
  /** The info string's first word, lower case ('' when none). */
  lang: string;
  code: string;
}

/** Every fenced block (``` or ~~~, three or more), in order. An unclosed last block runs to the end. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split(/\r?\n/);
  let open: { fence: string; lang: string; body: string[] } | undefined;
  for (const line of lines) {
    if (!open) {
      const m = /^\s{0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
      if (m) open = { fence: m[1] ?? '```', lang: (m[2] ?? '').toLowerCase(), body: [] };
      continue;
    }
    const close = /^\s{0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (close && close[1]?.[0] === open.fence[0] && (close[1]?.length ?? 0) >= open.fence.length) {
      blocks.push({ lang: open.lang, code: open.body.join('\n') });
      open = undefined;
    } else {
      open.body.push(line);
    }
  }
  if (open && open.body.length > 0) blocks.push({ lang: open.lang, code: open.body.join('\n') });
  return blocks;
}

const ALIASES: Record<string, string[]> = {
  python: ['python', 'py', 'python3'],
  typescript: ['typescript', 'ts', 'tsx'],
  typescriptreact: ['tsx', 'typescript', 'ts'],
  javascript: ['javascript', 'js', 'jsx', 'mjs', 'cjs'],
  javascriptreact: ['jsx', 'javascript', 'js'],
  json: ['json', 'jsonc'],
};

/**
 * The block that answers the task: the first one in the document's language (or without a language),
 * else the first block. Undefined when the answer holds no fenced block.
 */
export function pickCodeBlock(markdown: string, languageId?: string): CodeBlock | undefined {
  const blocks = codeBlocks(markdown);
  if (!languageId) return blocks[0];
  const names = ALIASES[languageId] ?? [languageId];
  return blocks.find((b) => names.includes(b.lang)) ?? blocks.find((b) => b.lang === '') ?? blocks[0];
}

/** Keeps the selection's own trailing newline and indentation of its first line when the model dropped them. */
export function fitReplacement(original: string, replacement: string): string {
  let text = replacement.replace(/\s+$/, '');
  const firstIndent = /^[ \t]*/.exec(original)?.[0] ?? '';
  if (firstIndent && !text.startsWith(firstIndent) && !/^[ \t]/.test(text)) {
    // The model dedented the block: re-indent every non-empty line.
    text = text
      .split('\n')
      .map((l) => (l.trim() === '' ? l : firstIndent + l))
      .join('\n');
  }
  const trailing = /\s*$/.exec(original)?.[0] ?? '';
  return text + trailing;
}
