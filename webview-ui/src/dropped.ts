/**
 * What a drop on the composer carries from VS Code (the Explorer, editor tabs; Shift held, as VS Code asks for
 * drops into a webview): its own URI list first (every item; `text/uri-list` has only the first of several),
 * then `resourceurls` (files only), then `text/uri-list` (other apps).
 */
export function droppedUris(dt: DataTransfer | null): string[] {
  if (!dt) return [];
  const lines = (text: string) =>
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
  const code = lines(dt.getData('application/vnd.code.uri-list'));
  if (code.length) return code;
  try {
    const urls: unknown = JSON.parse(dt.getData('resourceurls') || '[]');
    if (Array.isArray(urls) && urls.length && urls.every((u) => typeof u === 'string')) return urls as string[];
  } catch {
    // not VS Code's list: the standard one below
  }
  return lines(dt.getData('text/uri-list'));
}

/** A size as a chip shows it: 812 B, 4.2 KB, 1.3 MB. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [n, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KB'] : [bytes / (1024 * 1024), 'MB'];
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${unit}`;
}
