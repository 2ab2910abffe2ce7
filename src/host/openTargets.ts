/**
 * What the host opens on an agent's word, decided here (no vscode): the OS opener runs what it is given
 * (an agent-written `.desktop`, `.command` or `.bat` file; a `file:` or `vscode:` URL), so only a checked
 * target reaches it. The views say the refusal's reason and open nothing.
 */
export type UrlCheck = { ok: true; url: string; host: string } | { ok: false; reason: string };

/** An elicitation's URL (url mode): only an http or https page without a user name or password; `url` is what is shown and opened. */
export function elicitationUrl(raw: string): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'it is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: `only https and http pages are opened, and this is a ${url.protocol} URL` };
  // `https://trusted.example@evil.example/` reads as the first host and goes to the second.
  if (url.username || url.password) return { ok: false, reason: 'a URL with a user name or password before its host is not opened' };
  return { ok: true, url: url.href, host: url.host };
}
