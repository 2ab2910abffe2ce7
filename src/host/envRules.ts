/**
 * Which environment variables an agent may choose for what the host runs on its behalf. Terminal commands
 * take an allowlist (HARMLESS_ENV, plus what the user allows by name); the login terminal of a sign-in takes
 * the agent's variables minus UNSAFE_ENV, every value shown to the person before it runs.
 */

/**
 * Variables an agent may set for its terminal commands on its own: colour, terminal size, locale, time zone
 * and the CI switch. Programs read them as plain settings, never as a file, library or command to run.
 */
export const HARMLESS_ENV = /^(CI|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|TERM|COLORTERM|COLUMNS|LINES|LANG|LANGUAGE|LC_[A-Z]+|TZ)$/;

/**
 * A harmless variable's value must be plain too: a locale, terminal or zone name that is a path (`LANG=./x`,
 * `TZ=` an absolute path) makes the program read a file of the agent's choosing; control characters are never plain.
 */
export function plainValue(name: string, value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
  if (/[\0-\x1f\x7f]/.test(value)) return false;
  if (name === 'TZ') return !value.includes('..') && !/^:?\//.test(value);
  return !value.includes('/');
}

/**
 * Variables that make a program run code, load libraries or configuration, or trust servers of the setter's
 * choosing: the loader, interpreters' start-up hooks and search paths, git's and npm's whole families (each
 * has commands in it: `GIT_EXTERNAL_DIFF`, `npm_config_script_shell`), where programs look for their
 * commands and configuration (`PATH`, `HOME`, `XDG_CONFIG_HOME`), commands programs start (`EDITOR`, `PAGER`,
 * `*_ASKPASS`), and TLS trust and proxies (a login's token would go through them).
 */
export const UNSAFE_ENV =
  /^(LD_.*|DYLD_.*|NODE_OPTIONS|NODE_PATH|NODE_EXTRA_CA_CERTS|BASH_ENV|ENV|ZDOTDIR|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS|IFS|SHELL|PATH|HOME|XDG_CONFIG_HOME|XDG_DATA_HOME|XDG_CONFIG_DIRS|XDG_DATA_DIRS|TMPDIR|EDITOR|VISUAL|PAGER|BROWSER|.*_ASKPASS|PYTHON.*|PERL5.*|PERLLIB|RUBYOPT|RUBYLIB|GEM_.*|BUNDLE_.*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|GIT_.*|NPM_CONFIG_.*|YARN_.*|GCONV_PATH|LOCPATH|TERMINFO.*|SSL_CERT_.*|CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE|(HTTPS?|ALL|FTP)_PROXY)$/i;
