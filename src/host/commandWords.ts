/**
 * What a permission rule may name: a command line made only of plain words. Decided by an allowlist, so no
 * shell's syntax (POSIX sh, bash, zsh, fish) can hide a second command or an expansion in a line a rule
 * approves: unquoted words use letters, digits and `_ . / : = @ % + , -` (not `=` first: zsh's `=cmd`);
 * quoted strings never expand (single quotes: no backslash; double quotes: no `$`, backtick, backslash, `!`);
 * no control character anywhere. Anything else is "not plain" and always asks.
 */

/** Characters of an unquoted plain word. */
const PLAIN_CHAR = /[A-Za-z0-9_./:=@%+,-]/;
/** A word that needs no quotes to mean itself in any shell (what `displayWords` leaves bare). */
const BARE_WORD = /^[A-Za-z0-9_./:@%+,-][A-Za-z0-9_./:=@%+,-]*$/;
/** C0, DEL and C1 controls: never part of a plain line, quoted or not. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DOUBLE_QUOTED_SPECIAL = /[$`\\!]/;

export type Parsed = { words: string[] } | { reason: string };
/** A line of one or more plain commands joined by `&&`, `||`, `;` or `|`. */
export type ParsedLine = { commands: string[][] } | { reason: string };

/** The operators that may join plain commands in one line (longest first). */
const JOINERS = ['&&', '||', ';', '|'];
/**
 * Programs that run what their arguments say (a shell's `-c`, `eval`, interpreters' `-e`/`-c`, `env`, `xargs`,
 * `sudo`, `find -exec`, `time`, `nohup`…): a line that joins commands and has one of them always asks.
 */
const RUNS_ITS_ARGUMENTS = new Set([
  ...['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'eval', 'exec', 'source', '.', 'env', 'xargs', 'sudo', 'doas', 'su', 'find', 'time', 'nohup', 'nice', 'timeout', 'watch'],
  ...['node', 'python', 'python3', 'perl', 'ruby', 'php', 'deno', 'bun', 'npx', 'pnpx', 'bunx', 'ssh', 'awk', 'sed', 'parallel', 'command', 'builtin'],
]);

/** Splits a line into its plain words (quotes removed), or says why the line is not plain. */
export function plainWords(line: string): Parsed {
  const parsed = plainLine(line, false);
  return 'reason' in parsed ? parsed : { words: parsed.commands[0]! };
}

/**
 * Splits a line into plain commands joined by `&&`, `||`, `;` or `|` (each one plain words, see plainWords),
 * or says why it is not such a line. A line that joins commands and runs a program that runs its arguments
 * (RUNS_ITS_ARGUMENTS) is not one: it always asks.
 */
export function plainCommands(line: string): ParsedLine {
  const parsed = plainLine(line, true);
  if ('reason' in parsed || parsed.commands.length < 2) return parsed;
  const runner = parsed.commands.find((c) => RUNS_ITS_ARGUMENTS.has(c[0]!));
  return runner ? { reason: `\`${runner[0]}\` in a line of several commands (it runs what its arguments say)` } : parsed;
}

function plainLine(line: string, joined: boolean): ParsedLine {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    const joiner = joined ? JOINERS.find((j) => line.startsWith(j, i)) : undefined;
    if (joiner) {
      if (word !== undefined) words.push(word);
      word = undefined;
      if (!words.length) return { reason: `"${joiner}" with no command before it` };
      commands.push(words);
      words = [];
      i += joiner.length - 1;
    } else if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) return { reason: 'an unclosed quote' };
      const inner = line.slice(i + 1, end);
      if (CONTROL.test(inner)) return { reason: 'a control character' };
      if (c === "'" && inner.includes('\\')) return { reason: 'a backslash in quotes' };
      if (c === '"' && DOUBLE_QUOTED_SPECIAL.test(inner)) return { reason: `"${inner.match(DOUBLE_QUOTED_SPECIAL)![0]}" in double quotes (an expansion)` };
      word = (word ?? '') + inner;
      i = end;
    } else if (PLAIN_CHAR.test(c) && !(c === '=' && word === undefined)) {
      word = (word ?? '') + c;
    } else {
      return { reason: CONTROL.test(c) ? 'a control character (a second line?)' : `"${c}" (a shell operator, expansion or pattern)` };
    }
  }
  if (word !== undefined) words.push(word);
  if (!words.length) return { reason: commands.length ? 'an operator with no command after it' : 'no command' };
  commands.push(words);
  return { commands };
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
  return single && ('words' in single ? { commands: [single.words] } : single);
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
