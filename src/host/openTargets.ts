/**
 * What the host opens on an agent's word, decided here (no vscode): the OS opener runs what it is given
 * (an agent-written `.desktop`, `.command` or `.bat` file; a `file:` or `vscode:` URL), so only a checked
 * target reaches it. The views say the refusal's reason and open nothing.
 */
import { mkdtemp, realpath, stat } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentCommands } from '../session/agentCommands';

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

/** A refusal's `reason` holds none of the agent's text (a notification renders `[label](command:…)` as a link); the log shows `answer`. */
export type ExportCheck = { ok: true; file: string } | { ok: false; reason: string; answer: unknown; real?: string };

/** The file the agent answered an export with, opened only when it is an .html file directly in `folder` (symlinks resolved); `file` is its real path. */
export async function checkExportedHtml(folder: string, answer: unknown): Promise<ExportCheck> {
  if (typeof answer !== 'string' || !answer) return { ok: false, reason: 'its answer is not a file path', answer };
  if (!path.isAbsolute(answer)) return { ok: false, reason: 'its answer is a relative path', answer };
  let real: string;
  try {
    real = await realpath(answer);
  } catch {
    return { ok: false, reason: 'the file it answered does not exist', answer };
  }
  const refuse = (reason: string): ExportCheck => ({ ok: false, reason, answer, ...(real === answer ? {} : { real }) });
  if (path.dirname(real) !== (await realpath(folder))) return refuse(real === answer ? 'the file it answered is not in the export folder' : 'the file it answered leads out of the export folder');
  if (path.extname(real).toLowerCase() !== '.html') return refuse('the file it answered is not an .html file');
  if (!(await stat(real)).isFile()) return refuse('what it answered is not a file');
  return { ok: true, file: real };
}

/** Asks the agent to write the session as HTML into a fresh private folder under `base` (mkdtemp), then checks its answer. */
export async function exportSessionHtml(commands: AgentCommands, base = os.tmpdir()): Promise<ExportCheck & { requested: string }> {
  const folder = await mkdtemp(path.join(base, 'agent-host-export-'));
  const requested = path.join(folder, 'session.html');
  const answer: unknown = await commands.run('export_html', { outputPath: requested });
  return { ...(await checkExportedHtml(folder, answer)), requested };
}
