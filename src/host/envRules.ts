/** Which environment variables an agent may choose for what the host runs on its behalf. */

/**
 * Variables an agent may set for its terminal commands on its own: colour, terminal size, locale, time zone
 * and the CI switch. Programs read them as plain settings, never as a file, library or command to run.
 */
export const HARMLESS_ENV = /^(CI|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|TERM|COLORTERM|COLUMNS|LINES|LANG|LANGUAGE|LC_[A-Z]+|TZ)$/;

/**
 * A harmless variable's value must be plain too: a locale, terminal or zone name that is a path (`LANG=./x`,
 * `TZ=/tmp/x`) makes the program read a file of the agent's choosing; control characters are never plain.
 */
export function plainValue(name: string, value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
  if (/[\0-\x1f\x7f]/.test(value)) return false;
  if (name === 'TZ') return !value.includes('..') && !/^:?\//.test(value);
  return !value.includes('/');
}
