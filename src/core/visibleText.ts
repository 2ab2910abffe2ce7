/**
 * Text from an agent made safe to print on a terminal: no control character reaches it, so no escape
 * sequence (OSC 52 clipboard writes, cursor moves, line erases, title changes) and no carriage return that
 * would overwrite a line. What is escaped is shown as `\u001b`-style text, which is also a valid JSON string
 * escape: the same filter serves the text and the JSON output. Pure, no vscode.
 */

/** C0 controls but tab and newline (a CR too: CRLF is made LF first), DEL, and C1 controls (U+0080–U+009F; U+009B is a one-character CSI). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** For one-line fields: newlines, tabs and every CR too. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL_OR_BREAK = /[\u0000-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const escaped = (c: string) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

// String(): the types say string, but an agent sends what it likes (a number for a title).

/** Multi-line text (messages, thoughts, details, errors, whole output lines) as printable: newline and tab kept, CRLF printed as LF. */
export function visibleControls(text: string): string {
  return String(text).replace(/\r\n/g, '\n').replace(CONTROL, escaped);
}

/** A one-line field (a title, an id, a plan entry, a folder): also its newlines and tabs escaped, so it cannot forge a line of its own. */
export function oneLine(text: string): string {
  return String(text).replace(CONTROL_OR_BREAK, escaped);
}

/**
 * Text from an agent, a registry or a workspace made inert where VS Code renders markup in it: a non-modal
 * notification (and a progress one) and an input box's prompt turn `[label](https:…|command:…|file:…)` into a
 * link (vs/base/common/linkedText.ts, once newlines are spaces) and `$(name)` into an icon. A space after every
 * `]` or `$` that a `(` follows breaks both and keeps the text readable. Modal dialogs, titles and quick pick
 * items show no links: they need none of this.
 */
export function inertMarkup(text: string): string {
  return String(text).replace(/([\]$])\(/g, '$1 (');
}
