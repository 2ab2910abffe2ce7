/**
 * The scripted model's brain: a pure function from a normalized conversation to what the model answers.
 * It looks only at the request's content (never at how many requests came before), because agents interleave
 * side requests — titles, probes, routers, structured checks — with the turn being tested.
 *
 * Scenario directive, anywhere in the last user turn, on one line (the last one wins):
 *   SCENARIO: answer {"text": "..."}                      plain text, streamed in chunks, even with tools offered
 *   SCENARIO: think  {"text": "...", "answer": "..."}     a reasoning part, then the answer
 *   SCENARIO: write  {"path": "/abs", "content": "..."}   create a file (write tool, else edit / apply_patch / shell)
 *   SCENARIO: edit   {"path": "/abs", "old": "...", "new": "..."}   read first when a read tool is offered, then edit
 *   SCENARIO: shell  {"command": "..."}                   run a command
 *   SCENARIO: tool   {"name": "<substring>", "args": {...}}  call the first tool whose name contains the substring
 *   SCENARIO: flaky  {"fail": 1, "status": 503, "text": "..."}  the server answers the prompt's first `fail` requests
 *                                                         with that HTTP error (scriptedModel.ts counts them), then text
 * Without tools: short text ("Scripted session"), or JSON when the request asks for JSON. With tools and no
 * directive: the answer to an Atrium selection-command prompt (tasks.ts), else "Scripted answer.".
 * After the tool result: "Done: … [scenario: <name>]", or DENIED_TEXT when the result reads as a refusal or error.
 */
import { basename, join } from 'node:path';
import { findKey, isRecord, type JsonSchema, requiredKeys, resolveSchema, sampleObject, schemaProperties, schemaType } from './schemaValues';
import { taskAnswer } from './tasks';

/** A tool as offered to the model, whatever the wire format. */
export interface OfferedTool {
  /** The name the model sees; codex's namespaced MCP tools are joined like `mcp__ide__get_document_symbols`. */
  name: string;
  /** `custom`: a Responses API freeform tool (codex's `apply_patch`) that takes raw text instead of JSON. */
  kind: 'function' | 'custom';
  schema?: JsonSchema;
  /** Codex namespace the tool belongs to; a call then names `callName` and this namespace separately. */
  namespace?: string;
  callName?: string;
}

/** What the decision needs from one request, whatever the wire format. */
export interface Conversation {
  /** All text of the last user turn (the trailing run of user messages that are not tool results). */
  lastUserText: string;
  hasToolResultAfterLastUser: boolean;
  lastToolResultText: string;
  /** The wire format flagged the last tool result as an error (Anthropic `is_error`, Gemini `error`). */
  lastToolResultIsError?: boolean;
  /** Names of the tools the model called after the last user turn, in order. */
  toolCallsAfterLastUser?: string[];
  tools: OfferedTool[];
  /** The request forces a tool call: that tool's name, or `*` for "any tool". */
  forcedTool?: string;
  /** The request asks for a JSON answer: its schema, or `true` when it gives none. */
  jsonAnswer?: JsonSchema | true;
}

export interface Scenario {
  name: string;
  args: Record<string, unknown>;
}

export type ToolInput = { kind: 'json'; args: Record<string, unknown> } | { kind: 'raw'; input: string };

/** `label` is what gets recorded and logged: side-text, json, answer, think, default-answer, tool:<name>, final, … */
export type Decision =
  | { type: 'text'; label: string; text: string; reasoning?: string; scenario?: string | undefined }
  | { type: 'tool'; label: string; tool: OfferedTool; input: ToolInput; scenario?: string | undefined };

export const SIDE_TEXT = 'Scripted session';
/**
 * The answer to a prompt without a directive: how to use this model, with a file in `workspace` when the model
 * was told the workspace (`npm start` does), so the example can be sent as it is.
 */
export function defaultAnswer(workspace?: string): string {
  const file = workspace ? JSON.stringify(join(workspace, 'hello.txt')) : '"/absolute/path/hello.txt"';
  return (
    'Scripted answer. This is the offline demo model of Atrium: it follows one directive per prompt, e.g. ' +
    `\`SCENARIO: write {"path": ${file}, "content": "hi"}\` (also \`edit {"path","old","new"}\`, ` +
    '`shell {"command"}`, `answer {"text"}`).'
  );
}
export const DENIED_TEXT = 'The tool call was not allowed; nothing changed.';
// gemini-cli's model router reads this shape; any other JSON request without a schema gets it too.
const DEFAULT_JSON = { reasoning: 'simple', model_choice: 'flash' };

// ---------------------------------------------------------------------------------------------------------------
// Scenario directive: `SCENARIO: <name> <json-object>` on one line of the last user turn.

function extractObject(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0 || text.slice(0, start).trim() !== '') return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  const raw = extractObject(text);
  if (raw === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The last directive in `text`, or undefined. Its JSON may be missing (`{}`) or JSON-escaped by the agent. */
export function parseScenario(text: string): Scenario | undefined {
  let last: RegExpMatchArray | undefined;
  for (const m of text.matchAll(/SCENARIO:[ \t]*([A-Za-z][\w-]*)/g)) last = m;
  if (!last || last.index === undefined || last[1] === undefined) return undefined;
  const rest = text.slice(last.index + last[0].length).split(/\r?\n/)[0] ?? '';
  // Some agents embed the prompt inside a JSON string, so its quotes arrive as \" .
  const args = parseObject(rest) ?? parseObject(rest.replace(/\\(["\\])/g, '$1')) ?? {};
  return { name: last[1].toLowerCase(), args };
}

// ---------------------------------------------------------------------------------------------------------------
// Tool choice: names differ per agent (write / write_file / Write / mcp__acp__Write), so score by name and require
// the schema to have the keys the call needs.

const PATH_KEYS = ['path', 'file_path', 'filePath', 'absolute_path', 'absolutePath', 'filename', 'file', 'target_file'];
const CONTENT_KEYS = ['content', 'text', 'file_text', 'contents', 'file_content', 'fileContent', 'data', 'body'];
const COMMAND_KEYS = ['command', 'cmd', 'script', 'commandLine', 'command_line'];
const OLD_NEW_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['old_string', 'new_string'],
  ['oldString', 'newString'],
  ['oldText', 'newText'],
  ['old_str', 'new_str'],
  ['old_text', 'new_text'],
  ['old', 'new'],
  ['search', 'replace'],
];

/** The name without MCP/namespace prefixes, lower case: `mcp__acp__Write` → `write`. */
function baseName(name: string): string {
  const parts = name.split(/__|[./:]/).filter((p) => p !== '');
  return (parts[parts.length - 1] ?? name).toLowerCase();
}

interface ToolRule {
  exact: readonly string[];
  words: RegExp;
  exclude: RegExp;
}

function pickTool(tools: OfferedTool[], rule: ToolRule, fits: (t: OfferedTool) => boolean): OfferedTool | undefined {
  let best: OfferedTool | undefined;
  let bestScore = 0;
  for (const tool of tools) {
    const base = baseName(tool.name);
    if (rule.exclude.test(base) || !fits(tool)) continue;
    const score = rule.exact.includes(base) ? 2 : rule.words.test(base) ? 1 : 0;
    if (score > bestScore) [best, bestScore] = [tool, score];
  }
  return best;
}

const WRITE_RULE: ToolRule = {
  exact: ['write', 'write_file', 'writefile', 'create_file', 'create', 'file_write', 'write_to_file'],
  words: /write|create/,
  exclude: /todo|notebook|memory|plan|stdin|dir/,
};
const EDIT_RULE: ToolRule = {
  exact: ['edit', 'edit_file', 'replace', 'str_replace', 'replace_in_file'],
  words: /edit|replace/,
  exclude: /todo|notebook|memory|plan|multi/,
};
const READ_RULE: ToolRule = {
  exact: ['read', 'read_file', 'readfile', 'read_text_file', 'view'],
  words: /read|view/,
  exclude: /many|multiple|notebook|image|media|url|web|stdin|output|todo|memory/,
};
const SHELL_RULE: ToolRule = {
  exact: ['bash', 'shell', 'run_shell_command', 'shell_command', 'exec_command', 'exec', 'execute_command'],
  words: /bash|shell|exec|command|terminal/,
  exclude: /output|kill|stdin/,
};

function schemaOf(tool: OfferedTool): JsonSchema {
  return resolveSchema(tool.schema ?? {}, tool.schema);
}

function propertyType(tool: OfferedTool, key: string): string | undefined {
  return schemaType(resolveSchema(schemaProperties(schemaOf(tool))[key], tool.schema));
}

function findOldNew(schema: JsonSchema): readonly [string, string] | undefined {
  for (const [o, n] of OLD_NEW_KEYS) {
    const oldKey = findKey(schema, [o]);
    const newKey = findKey(schema, [n]);
    if (oldKey && newKey) return [oldKey, newKey];
  }
  return undefined;
}

/** pi's `edit` may take `edits: [{oldText, newText}]` instead of (or besides) top-level keys. */
function findEditsArray(tool: OfferedTool): { key: string; item: JsonSchema; keys: readonly [string, string] } | undefined {
  for (const [key, prop] of Object.entries(schemaProperties(schemaOf(tool)))) {
    const resolved = resolveSchema(prop, tool.schema);
    if (schemaType(resolved) !== 'array') continue;
    const item = resolveSchema(resolved.items, tool.schema);
    const keys = findOldNew(item);
    if (keys) return { key, item, keys };
  }
  return undefined;
}

function isApplyPatch(tool: OfferedTool): boolean {
  return baseName(tool.name) === 'apply_patch' && (tool.kind === 'custom' || findKey(schemaOf(tool), ['input', 'patch']) !== undefined);
}

// ---------------------------------------------------------------------------------------------------------------
// Argument building.

function jsonCall(tool: OfferedTool, args: Record<string, unknown>, label: string, scenario?: string): Decision {
  return { type: 'tool', label: `tool:${tool.name}${label}`, tool, input: { kind: 'json', args }, scenario };
}

function patchCall(tool: OfferedTool, patch: string, scenario: string): Decision {
  if (tool.kind === 'custom') return { type: 'tool', label: `tool:${tool.name}`, tool, input: { kind: 'raw', input: patch }, scenario };
  const key = findKey(schemaOf(tool), ['input', 'patch']) ?? 'input';
  return jsonCall(tool, { ...sampleObject(tool.schema ?? {}), [key]: patch }, '', scenario);
}

function lines(text: string): string[] {
  const all = text.split('\n');
  if (all.length > 1 && all[all.length - 1] === '') all.pop();
  return all;
}

/** Codex's patch grammar: `*** Add File:` lines all start with `+`. */
function addFilePatch(path: string, content: string): string {
  return ['*** Begin Patch', `*** Add File: ${path}`, ...lines(content).map((l) => `+${l}`), '*** End Patch', ''].join('\n');
}

function updateFilePatch(path: string, oldText: string, newText: string): string {
  const body = [...lines(oldText).map((l) => `-${l}`), ...lines(newText).map((l) => `+${l}`)];
  return ['*** Begin Patch', `*** Update File: ${path}`, '@@', ...body, '*** End Patch', ''].join('\n');
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function editArgs(tool: OfferedTool, path: string, oldText: string, newText: string): Record<string, unknown> | undefined {
  const schema = schemaOf(tool);
  const pathKey = findKey(schema, PATH_KEYS);
  const top = findOldNew(schema);
  const array = findEditsArray(tool);
  if (!pathKey || (!top && !array)) return undefined;
  const args: Record<string, unknown> = { ...sampleObject(tool.schema ?? {}), [pathKey]: path };
  const required = requiredKeys(schema);
  // Use the array form when it is the one the schema requires (or the only one there is).
  const useArray = array !== undefined && (!top || required.includes(array.key) || !required.includes(top[0]));
  if (useArray) {
    const [o, n] = array.keys;
    args[array.key] = [{ ...sampleObject(array.item, tool.schema), [o]: oldText, [n]: newText }];
  } else if (top) {
    args[top[0]] = oldText;
    args[top[1]] = newText;
  }
  return args;
}

function shellArgs(tool: OfferedTool, command: string): Record<string, unknown> | undefined {
  const key = findKey(schemaOf(tool), COMMAND_KEYS);
  if (!key) return undefined;
  const args = sampleObject(tool.schema ?? {});
  // codex's `shell` takes an argv array; everyone else a command line.
  args[key] = propertyType(tool, key) === 'array' ? ['bash', '-lc', command] : command;
  if ('description' in args) args.description = 'Run command';
  return args;
}

function noTool(what: string, scenario: string): Decision {
  return { type: 'text', label: 'no-tool', text: `No offered tool can ${what}. [scenario: ${scenario}]`, scenario };
}

function writeFile(tools: OfferedTool[], path: string, content: string): Decision {
  const scenario = 'write';
  const writer = pickTool(tools, WRITE_RULE, (t) => {
    const s = schemaOf(t);
    return t.kind === 'function' && findKey(s, PATH_KEYS) !== undefined && findKey(s, CONTENT_KEYS) !== undefined;
  });
  if (writer) {
    const s = schemaOf(writer);
    const args = sampleObject(writer.schema ?? {});
    args[findKey(s, PATH_KEYS) ?? 'path'] = path;
    args[findKey(s, CONTENT_KEYS) ?? 'content'] = content;
    return jsonCall(writer, args, '', scenario);
  }
  // Fallbacks, best first: an edit tool that creates from empty old text, codex's apply_patch, a shell redirect.
  const editor = pickTool(tools, EDIT_RULE, (t) => t.kind === 'function' && editArgs(t, path, '', content) !== undefined);
  if (editor) return jsonCall(editor, editArgs(editor, path, '', content) ?? {}, '', scenario);
  const patcher = tools.find(isApplyPatch);
  if (patcher) return patchCall(patcher, addFilePatch(path, content), scenario);
  const shell = pickTool(tools, SHELL_RULE, (t) => t.kind === 'function' && shellArgs(t, '') !== undefined);
  if (shell) {
    const command = `printf '%s' ${shellQuote(content)} > ${shellQuote(path)}`;
    return jsonCall(shell, shellArgs(shell, command) ?? {}, '', scenario);
  }
  return noTool('write files', scenario);
}

/** A tool that reads `path`; claude and qwen refuse to edit a file the model has not read first. */
function readFile(tools: OfferedTool[], path: string): Decision | undefined {
  const reader = pickTool(tools, READ_RULE, (t) => t.kind === 'function' && findKey(schemaOf(t), PATH_KEYS) !== undefined);
  if (!reader) return undefined;
  const args = { ...sampleObject(reader.schema ?? {}), [findKey(schemaOf(reader), PATH_KEYS) ?? 'path']: path };
  return jsonCall(reader, args, '', 'edit');
}

function editFile(tools: OfferedTool[], path: string, oldText: string, newText: string): Decision {
  const scenario = 'edit';
  const editor = pickTool(tools, EDIT_RULE, (t) => t.kind === 'function' && editArgs(t, path, oldText, newText) !== undefined);
  if (editor) return jsonCall(editor, editArgs(editor, path, oldText, newText) ?? {}, '', scenario);
  const patcher = tools.find(isApplyPatch);
  if (patcher) return patchCall(patcher, updateFilePatch(path, oldText, newText), scenario);
  return noTool('edit files', scenario);
}

function runShell(tools: OfferedTool[], command: string): Decision {
  const scenario = 'shell';
  const shell = pickTool(tools, SHELL_RULE, (t) => t.kind === 'function' && shellArgs(t, command) !== undefined);
  if (shell) return jsonCall(shell, shellArgs(shell, command) ?? {}, '', scenario);
  return noTool('run shell commands', scenario);
}

function callNamed(tools: OfferedTool[], name: string, given: Record<string, unknown>): Decision {
  const scenario = 'tool';
  const needle = name.toLowerCase();
  const tool = tools.find((t) => t.name.toLowerCase().includes(needle) || (t.callName ?? '').toLowerCase().includes(needle));
  if (!tool) return noTool(`match "${name}" (offered: ${tools.map((t) => t.name).join(', ')})`, scenario);
  if (tool.kind === 'custom') {
    const input = typeof given.input === 'string' ? given.input : JSON.stringify(given);
    return { type: 'tool', label: `tool:${tool.name}`, tool, input: { kind: 'raw', input }, scenario };
  }
  return jsonCall(tool, { ...sampleObject(tool.schema ?? {}), ...given }, '', scenario);
}

// ---------------------------------------------------------------------------------------------------------------
// Answers.

const DENIAL = /\b(denied|reject|not allowed|not permitted|declined|refused|blocked|cancel|abort|error|permission)/i;

/** Tool results that read as a refusal or failure. Gemini prints `Error: (none)` on success, so that is not one. */
export function looksDenied(text: string): boolean {
  return DENIAL.test(text.replace(/\b(error|stderr)s?\s*:\s*\((none|empty)\)/gi, ''));
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A result that is JSON data (a lookup's answer, e.g. diagnostics with severity "Error") is read only by its error flag. */
function lastResultDenied(conv: Conversation): boolean {
  return conv.lastToolResultIsError === true || (!isJsonData(conv.lastToolResultText) && looksDenied(conv.lastToolResultText));
}

function isJsonData(text: string): boolean {
  const t = text.trim();
  if (!t.startsWith('[') && !t.startsWith('{')) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

function finalAnswer(conv: Conversation, scenario: Scenario | undefined): Decision {
  const name = scenario?.name;
  const tag = ` [scenario: ${name ?? 'none'}]`;
  if (lastResultDenied(conv)) {
    return { type: 'text', label: 'final-denied', text: DENIED_TEXT + tag, scenario: name };
  }
  const args = scenario?.args ?? {};
  const file = basename(str(args.path) ?? '');
  let done = 'Done.';
  if (name === 'write') done = `Done: wrote ${file}.`;
  else if (name === 'edit') done = `Done: edited ${file}.`;
  else if (name === 'shell') done = `Done: ran \`${str(args.command) ?? ''}\`.`;
  else if (name === 'tool') {
    const excerpt = conv.lastToolResultText.replace(/\s+/g, ' ').trim().slice(0, 200);
    done = `Done: called ${str(args.name) ?? 'the tool'}. Result: ${excerpt}`;
  }
  return { type: 'text', label: 'final', text: done + tag, scenario: name };
}

function scriptedText(scenario: Scenario, workspace: string | undefined): Decision {
  if (scenario.name === 'think') {
    const reasoning = str(scenario.args.text) ?? 'Thinking it over.';
    const text = str(scenario.args.answer) ?? 'Thought it through. [scenario: think]';
    return { type: 'text', label: 'think', text, reasoning, scenario: 'think' };
  }
  return { type: 'text', label: 'answer', text: str(scenario.args.text) ?? defaultAnswer(workspace), scenario: scenario.name };
}

/** The edit scenario reads first (like a real model); once only reads have been answered, it edits. */
function editAfterRead(conv: Conversation, scenario: Scenario | undefined): Decision | undefined {
  const path = str(scenario?.args.path);
  if (scenario?.name !== 'edit' || !path || lastResultDenied(conv)) return undefined;
  const reader = readFile(conv.tools, path);
  const calls = conv.toolCallsAfterLastUser ?? [];
  if (reader?.type !== 'tool' || calls.length === 0 || calls.some((c) => c !== reader.tool.name)) return undefined;
  return editFile(conv.tools, path, str(scenario.args.old) ?? '', str(scenario.args.new) ?? '');
}

function forcedTool(conv: Conversation): OfferedTool | undefined {
  const forced = conv.forcedTool;
  if (forced === undefined) return undefined;
  if (forced === '*') return conv.tools.length === 1 ? conv.tools[0] : undefined;
  return conv.tools.find((t) => t.name === forced || t.callName === forced);
}

/** `workspace`: the folder the agents work in, for the greeting's example. */
export function decide(conv: Conversation, opts: { workspace?: string | undefined } = {}): Decision {
  const scenario = parseScenario(conv.lastUserText);
  const name = scenario?.name;
  if (conv.tools.length === 0 && conv.jsonAnswer !== undefined) {
    const value = conv.jsonAnswer === true ? DEFAULT_JSON : sampleObject(conv.jsonAnswer, conv.jsonAnswer, true);
    return { type: 'text', label: 'json', text: JSON.stringify(value), scenario: name };
  }
  // A forced tool is a structured side query (qwen's `respond_in_schema`): answer it in the tool's own schema.
  const forced = forcedTool(conv);
  if (forced) {
    if (forced.kind === 'custom') return { type: 'tool', label: `tool:${forced.name}`, tool: forced, input: { kind: 'raw', input: '' } };
    return jsonCall(forced, sampleObject(forced.schema ?? {}, forced.schema, true), ' (forced)');
  }
  if (conv.hasToolResultAfterLastUser) return editAfterRead(conv, scenario) ?? finalAnswer(conv, scenario);
  if (conv.tools.length === 0) {
    if (scenario && (name === 'answer' || name === 'think' || name === 'flaky')) return scriptedText(scenario, opts.workspace);
    return { type: 'text', label: 'side-text', text: SIDE_TEXT, scenario: name };
  }
  if (!scenario) {
    // Atrium's selection commands (`Atrium task: <task>` prompts): answered in text, see tasks.ts.
    const task = taskAnswer(conv.lastUserText);
    if (task) return { type: 'text', label: `task:${task.task}`, text: task.text };
    return { type: 'text', label: 'default-answer', text: defaultAnswer(opts.workspace) };
  }
  const args = scenario.args;
  const path = str(args.path);
  switch (scenario.name) {
    case 'answer':
    case 'flaky':
    case 'think':
      return scriptedText(scenario, opts.workspace);
    case 'write':
      return path ? writeFile(conv.tools, path, str(args.content) ?? '') : badScenario(scenario, '"path"');
    case 'edit':
      if (!path) return badScenario(scenario, '"path"');
      return readFile(conv.tools, path) ?? editFile(conv.tools, path, str(args.old) ?? '', str(args.new) ?? '');
    case 'shell': {
      const command = str(args.command);
      return command ? runShell(conv.tools, command) : badScenario(scenario, '"command"');
    }
    case 'tool': {
      const toolName = str(args.name);
      const given = isRecord(args.args) ? args.args : {};
      return toolName ? callNamed(conv.tools, toolName, given) : badScenario(scenario, '"name"');
    }
    default:
      return { type: 'text', label: 'unknown-scenario', text: `Unknown scenario "${scenario.name}".`, scenario: name };
  }
}

function badScenario(scenario: Scenario, missing: string): Decision {
  const text = `Scenario ${scenario.name} needs ${missing}. [scenario: ${scenario.name}]`;
  return { type: 'text', label: 'bad-scenario', text, scenario: scenario.name };
}
