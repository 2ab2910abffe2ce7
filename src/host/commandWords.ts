import { parse } from 'shell-quote';

/**
 * What a permission rule may name: a line of plain commands, as the maintained parser shell-quote splits it,
 * behind two fences of our own for what it reads differently from a shell (it takes a newline for a space,
 * leaves backticks, `~`, `{a,b}` and `[a]` as text): the line has no control character, backtick, `$` or
 * backslash at all, and every word uses only characters that mean themselves in any shell (POSIX sh, bash,
 * zsh, fish) or that the parser treats as special unquoted (so in a word they were quoted). Anything else —
 * substitutions, redirections, globs, comments, background jobs — is "not plain" and always asks.
 */

/** Characters of a plain word: letters, digits, `_ . / : = @ % + , -`, and (quoted) space and the parser's specials. */
const WORD = /^[A-Za-z0-9_./:=@%+, *?#&|;<>()'"-]*$/;
/** A word that needs no quotes to mean itself in any shell (what `displayWords` leaves bare). */
const BARE_WORD = /^[A-Za-z0-9_./:@%+,-][A-Za-z0-9_./:=@%+,-]*$/;
/** C0, DEL and C1 controls: never part of a plain line, quoted or not. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** Never in a plain line, quoted or not: substitutions (`$(…)`, backticks), variables, `$'…'`, escapes. */
const UNPARSED = /[`$\\]/;
const DOUBLE_QUOTED_SPECIAL = /[$`\\!]/;

export type Parsed = { words: string[] } | { reason: string };
/** A line of one or more plain commands joined by `&&`, `||`, `;` or `|`. */
export type ParsedLine = { commands: string[][] } | { reason: string };

/** The operators that may join plain commands in one line. */
const JOINERS = new Set(['&&', '||', ';', '|']);

/** Splits a line into plain commands joined by `&&`, `||`, `;` or `|` (quotes removed), or says why the line is not such a line. */
function splitLine(line: string): ParsedLine {
  if (/[\n\r]/.test(line)) return { reason: 'several lines' };
  if (CONTROL.test(line)) return { reason: 'a control character' };
  const unparsed = line.match(UNPARSED)?.[0];
  if (unparsed) return { reason: `"${unparsed}" (a substitution, variable or escape)` };
  if (unclosedQuote(line)) return { reason: 'an unclosed quote' }; // the parser would read on to the line's end
  const commands: string[][] = [[]];
  for (const token of parse(line)) {
    const words = commands[commands.length - 1]!;
    if (typeof token === 'string') {
      if (!WORD.test(token) || token.startsWith('=')) return { reason: `the word ${JSON.stringify(token)} (an expansion or pattern in some shell)` };
      words.push(token);
    } else if ('comment' in token) return { reason: 'a comment' };
    else if (token.op === 'glob') return { reason: `"${token.pattern}" (a pattern)` };
    else if (!JOINERS.has(token.op)) return { reason: `"${token.op}" (a redirection, subshell or background job)` };
    else if (!words.length) return { reason: `"${token.op}" with no command before it` };
    else commands.push([]);
  }
  if (!commands[commands.length - 1]!.length) return { reason: commands.length > 1 ? 'an operator with no command after it' : 'no command' };
  return { commands };
}

/** True when a quote is left open (no backslash can escape one: the line has none). */
function unclosedQuote(line: string): boolean {
  let open: string | undefined;
  for (const c of line) if (c === "'" || c === '"') open = open === undefined ? c : open === c ? undefined : open;
  return open !== undefined;
}

/** Splits a line of one command into its plain words (quotes removed), or says why it is not one. */
export function plainWords(line: string): Parsed {
  const parsed = splitLine(line);
  if ('reason' in parsed) return parsed;
  return parsed.commands.length === 1 ? { words: parsed.commands[0]! } : { reason: 'several commands in one line' };
}

/** Shells and programs that run the command their arguments name: a rule never answers them. */
const RUNS_ITS_ARGUMENTS = new Set(
  ['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'csh', 'tcsh', 'eval', 'exec', 'source', '.', 'env', 'xargs', 'sudo', 'doas', 'su'].concat([
    'time',
    'nohup',
    'nice',
    'timeout',
    'watch',
    'command',
    'builtin',
    'parallel',
    'ssh',
    'stdbuf',
    'setsid',
    'chroot',
    'flock',
    'script',
    'busybox',
    'awk',
    'gawk',
    'mawk',
    'nawk',
  ]),
);
/** Interpreters: they run code given inline (`-e`, `-c`, `-p`, `-r`, `--eval`…) or from standard input (no script named). */
const INTERPRETERS = new Set(['node', 'python', 'perl', 'ruby', 'php', 'deno', 'bun', 'npx', 'pnpx', 'bunx']);
const INLINE_CODE = /^(-[A-Za-z]*[ceEpr][A-Za-z]*|--(eval|print|require|import|loader|experimental-loader|command|call)(=.*)?)$/;
/** First arguments of `deno` / `bun` that run code given inline or fetched: `deno eval`, `bun x`, `deno repl`. */
const INLINE_SUBCOMMANDS = new Set(['eval', 'repl', 'x']);
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** Why a command runs code its arguments give (a wrapper: `bash -c`, `env`, `sudo`, `node -e`, `find -exec`…), or undefined. */
export function wrapperReason(words: readonly string[]): string | undefined {
  const [first = '', ...args] = words;
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) return `\`${first}\` (it changes what the command runs with, like env)`;
  const base = first.split('/').pop() ?? '';
  const program = base.replace(/[0-9.]+$/, '') || base; // python3.12 is python; `.` stays `.`
  const runs =
    RUNS_ITS_ARGUMENTS.has(program) ||
    (program === 'find' && args.some((a) => FIND_EXEC.has(a))) ||
    (INTERPRETERS.has(program) && (args.some((a) => INLINE_CODE.test(a)) || INLINE_SUBCOMMANDS.has(args[0] ?? '') || args.every((a) => a.startsWith('-'))));
  return runs ? `\`${first}\` runs code its arguments or input give` : undefined;
}

/**
 * Splits a line into plain commands joined by `&&`, `||`, `;` or `|` (see splitLine), or says why it is not
 * such a line; a line with a wrapper (wrapperReason) is not one: it always asks.
 */
export function plainCommands(line: string): ParsedLine {
  const parsed = splitLine(line);
  if ('reason' in parsed) return parsed;
  const wrapper = parsed.commands.map(wrapperReason).find((r) => r !== undefined);
  return wrapper ? { reason: wrapper } : parsed;
}

/** Argv as given (no shell reads it): plain when the line a person is shown splits back into the same words. */
export function plainArgv(argv: readonly string[]): Parsed {
  if (argv.length === 0) return { reason: 'no command' };
  const back = plainWords(displayWords(argv));
  if (!('words' in back)) return back;
  return back.words.length === argv.length && back.words.every((w, i) => w === argv[i]) ? back : { reason: 'a word no quoting can show plainly' };
}

/** A tool call's command line as plain commands (see plainCommands); argv is one command. */
export function commandsOf(rawInput: unknown): ParsedLine | undefined {
  const o = rawInput && typeof rawInput === 'object' ? (rawInput as Record<string, unknown>) : undefined;
  const c = o?.command ?? o?.cmd;
  if (typeof c === 'string' && c.trim()) return plainCommands(c.trim());
  const single = commandWordsOf(rawInput);
  if (!single || 'reason' in single) return single;
  const wrapper = wrapperReason(single.words);
  return wrapper ? { reason: wrapper } : { commands: [single.words] };
}

/** The plain words of a tool call's command (`command`/`cmd`, a line or argv), or why there are none. */
export function commandWordsOf(rawInput: unknown): Parsed | undefined {
  if (!rawInput || typeof rawInput !== 'object') return undefined;
  const o = rawInput as Record<string, unknown>;
  const c = o.command ?? o.cmd;
  if (Array.isArray(c)) return plainArgv(c.map(String));
  return typeof c === 'string' && c.trim() ? plainWords(c.trim()) : undefined;
}

/** Words as one line a person reads and a shell splits back into the same words (visible escapes where none can). */
export function displayWords(words: readonly string[]): string {
  return words
    .map((w) => {
      if (BARE_WORD.test(w)) return w;
      if (CONTROL.test(w)) return JSON.stringify(w);
      if (!w.includes("'") && !w.includes('\\')) return `'${w}'`;
      return DOUBLE_QUOTED_SPECIAL.test(w) || w.includes('"') ? JSON.stringify(w) : `"${w}"`;
    })
    .join(' ');
}

/**
 * Programs whose first word is a sub-command and whose later plain words are only arguments: the only ones
 * a "commands starting with" rule may name. Everything else — shells, `env`, `xargs`, `sudo`, interpreters,
 * `find`, `make` (later words are more targets) — is approved one exact line at a time.
 */
const SUBCOMMAND_PROGRAMS = new Set(['git', 'npm', 'pnpm', 'yarn', 'cargo', 'go', 'dotnet']);
/** Sub-commands that run, install or configure code named in their arguments: exact lines only. */
const EXACT_ONLY: Record<string, ReadonlySet<string>> = {
  git: new Set([
    'config',
    'submodule',
    'bisect',
    'filter-branch',
    'hook',
    'daemon',
    'difftool',
    'mergetool',
    'credential',
    'alias',
    'clone',
    'archive',
    'instaweb',
    'web--browse',
    'p4',
    'svn',
    'send-email',
  ]),
  npm: new Set([
    'exec',
    'x',
    'explore',
    'config',
    'c',
    'set',
    'init',
    'create',
    'innit',
    'install',
    'i',
    'add',
    'isntall',
    'in',
    'ins',
    'inst',
    'insta',
    'instal',
    'isnt',
    'isnta',
    'isntal',
    'install-test',
    'it',
    'install-ci-test',
    'cit',
    'link',
    'ln',
    'update',
    'up',
    'upgrade',
    'publish',
    'pack',
    'rebuild',
    'edit',
  ]),
  pnpm: new Set(['exec', 'dlx', 'x', 'config', 'c', 'set', 'init', 'create', 'install', 'i', 'add', 'link', 'update', 'up', 'publish', 'pack', 'rebuild', 'env']),
  yarn: new Set(['exec', 'dlx', 'config', 'set', 'init', 'create', 'install', 'add', 'link', 'upgrade', 'up', 'publish', 'pack', 'rebuild', 'node', 'plugin']),
  cargo: new Set(['install', 'config', 'new', 'init', 'publish', 'login']),
  go: new Set(['run', 'install', 'get', 'generate', 'env', 'tool', 'work', 'mod']),
  dotnet: new Set(['exec', 'tool', 'new', 'add', 'nuget', 'msbuild']),
};
/** Sub-commands that run a named script: the script's name belongs to the prefix (`npm run lint`). */
const RUNNERS: Record<string, ReadonlySet<string>> = {
  npm: new Set(['run', 'run-script', 'rum', 'urn']),
  pnpm: new Set(['run', 'run-script']),
  yarn: new Set(['run']),
};
const isArgument = (w: string | undefined): w is string => w !== undefined && w !== '' && !w.startsWith('-') && BARE_WORD.test(w);

/**
 * The words a "commands starting with" rule made from this command would keep — the program and its
 * sub-command (and a runner's script name) — or undefined where no prefix is safe.
 */
export function safePrefixOf(words: readonly string[]): string[] | undefined {
  const [program, sub, script] = words;
  if (!program || !SUBCOMMAND_PROGRAMS.has(program) || !isArgument(sub) || EXACT_ONLY[program]?.has(sub)) return undefined;
  if (RUNNERS[program]?.has(sub)) return isArgument(script) ? [program, sub, script] : undefined;
  return [program, sub];
}

/** True when `words` start with `prefix` and go on only with plain arguments: no option, nothing quoted. */
export function coveredByPrefix(words: readonly string[], prefix: readonly string[]): boolean {
  if (words.length < prefix.length || prefix.some((p, i) => words[i] !== p)) return false;
  return words.slice(prefix.length).every(isArgument);
}
