/**
 * The scripted model server over real HTTP: each wire format with the tool sets real agents send.
 * Run: npx tsc -p . && node --test out/test/unit/model.test.js
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ScriptedModel, startScriptedModel } from '../../src/scriptedModel/scriptedModel';

// biome-ignore lint/suspicious/noExplicitAny: the wire formats' JSON, read deep in ~50 assertions that would otherwise each cast
type Json = Record<string, any>;

let model: ScriptedModel;
before(async () => {
  model = await startScriptedModel();
});
after(async () => {
  await model.close();
});

async function post(urlPath: string, body: unknown): Promise<Response> {
  return fetch(model.url + urlPath, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

interface SseEvent {
  event?: string;
  // biome-ignore lint/suspicious/noExplicitAny: as Json above
  data: any;
}

async function sse(urlPath: string, body: unknown): Promise<SseEvent[]> {
  const res = await post(urlPath, body);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const events: SseEvent[] = [];
  for (const frame of (await res.text()).split(/\r?\n\r?\n/)) {
    if (frame.trim() === '') continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    const text = data.join('\n');
    events.push({ ...(event ? { event } : {}), data: text === '[DONE]' ? text : JSON.parse(text) });
  }
  return events;
}

function lastRecord() {
  const r = model.requests[model.requests.length - 1];
  assert.ok(r, 'a request was recorded');
  return r;
}

// An agent-style wrapped prompt: the directive sits inside other context, on its own line.
function prompt(directive: string): string {
  return `<context>\nThe user is working in /ws.\n</context>\nPlease do this.\n${directive}\n<reminder>be brief</reminder>`;
}

const FILE = '/ws/project/hello.txt';
const WRITE = `SCENARIO: write {"path": "${FILE}", "content": "hello\\nworld\\n"}`;
const EDIT = `SCENARIO: edit {"path": "${FILE}", "old": "hello", "new": "goodbye"}`;
const SHELL = 'SCENARIO: shell {"command": "echo hi > out.txt"}';

// ------------------------------------------------------------------------------------------------------------
// OpenAI chat completions: opencode, qwen, pi.

const S = { type: 'string' };
const N = { type: 'number' };
const B = { type: 'boolean' };
const obj = (properties: Json, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const fn = (name: string, parameters: Json) => ({ type: 'function', function: { name, description: name, parameters } });

const OPENCODE_TOOLS = [
  fn('todowrite', obj({ todos: { type: 'array', items: obj({ content: S }, ['content']) } }, ['todos'])),
  fn('bash', obj({ command: S, timeout: N, workdir: S, description: S }, ['command', 'description'])),
  fn('edit', obj({ filePath: S, oldString: S, newString: S, replaceAll: B }, ['filePath', 'oldString', 'newString'])),
  fn('write', obj({ content: S, filePath: S }, ['content', 'filePath'])),
];

const PI_TOOLS = [
  fn('read', obj({ path: S, offset: N, limit: N }, ['path'])),
  fn('bash', obj({ command: S, timeout: N }, ['command'])),
  fn('edit', obj({ path: S, edits: { type: 'array', items: obj({ oldText: S, newText: S }, ['oldText', 'newText']) } }, ['path', 'edits'])),
  fn('write', obj({ path: S, content: S }, ['path', 'content'])),
];

function chatBody(messages: Json[], tools: Json[] = OPENCODE_TOOLS, extra: Json = {}): Json {
  return { model: 'scripted-model', stream: true, stream_options: { include_usage: true }, messages, tools, ...extra };
}

function chatToolCall(events: SseEvent[]): { name: string; args: Json; fragments: number } {
  const deltas = events.filter((e) => e.data !== '[DONE]').flatMap((e) => e.data.choices.map((c: Json) => c.delta));
  const calls = deltas.flatMap((d: Json) => d.tool_calls ?? []);
  const name = calls.find((c: Json) => c.function?.name)?.function.name;
  const fragments = calls.map((c: Json) => c.function?.arguments ?? '').filter((a: string) => a !== '');
  return { name, args: JSON.parse(fragments.join('')), fragments: fragments.length };
}

function chatText(events: SseEvent[], field = 'content'): string {
  return events
    .filter((e) => e.data !== '[DONE]')
    .flatMap((e) => e.data.choices.map((c: Json) => c.delta?.[field] ?? ''))
    .join('');
}

describe('OpenAI chat completions', () => {
  it('answers a request without tools with short text (a title request)', async () => {
    const messages = [
      { role: 'system', content: 'Generate a title' },
      { role: 'user', content: prompt(WRITE) },
    ];
    const events = await sse('/v1/chat/completions', chatBody(messages, []));
    assert.equal(chatText(events), 'Scripted session');
    assert.equal(events[events.length - 1]?.data, '[DONE]');
    assert.ok(
      events.some((e) => e.data !== '[DONE]' && e.data.usage?.total_tokens > 0),
      'a usage chunk',
    );
    assert.equal(lastRecord().decision, 'side-text');
  });

  it('calls opencode `write` with filePath/content, arguments streamed in fragments', async () => {
    const messages = [
      { role: 'system', content: 'You are opencode' },
      { role: 'user', content: [{ type: 'text', text: prompt(WRITE) }] },
    ];
    const events = await sse('/v1/chat/completions', chatBody(messages));
    const call = chatToolCall(events);
    assert.equal(call.name, 'write');
    assert.deepEqual(call.args, { content: 'hello\nworld\n', filePath: FILE });
    assert.ok(call.fragments >= 2);
    const finish = events.flatMap((e) => (e.data === '[DONE]' ? [] : e.data.choices.map((c: Json) => c.finish_reason))).filter(Boolean);
    assert.deepEqual(finish, ['tool_calls']);
    assert.equal(lastRecord().decision, 'tool:write');
    assert.equal(lastRecord().scenario, 'write');
  });

  it('answers with final text once a tool result follows the last user message', async () => {
    const messages = [
      { role: 'user', content: prompt(WRITE) },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Wrote file successfully.' },
    ];
    const text = chatText(await sse('/v1/chat/completions', chatBody(messages)));
    assert.equal(text, 'Done: wrote hello.txt. [scenario: write]');
    assert.equal(lastRecord().decision, 'final');
  });

  it('says the call was not allowed when the tool result is a denial', async () => {
    const messages = [
      { role: 'user', content: prompt(WRITE) },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'The user rejected permission to use this specific tool call.' },
    ];
    const text = chatText(await sse('/v1/chat/completions', chatBody(messages)));
    assert.equal(text, 'The tool call was not allowed; nothing changed. [scenario: write]');
    assert.equal(lastRecord().decision, 'final-denied');
  });

  it('runs a shell command through opencode `bash`, filling the required description', async () => {
    const call = chatToolCall(await sse('/v1/chat/completions', chatBody([{ role: 'user', content: prompt(SHELL) }])));
    assert.equal(call.name, 'bash');
    assert.deepEqual(call.args, { command: 'echo hi > out.txt', description: 'Run command' });
  });

  it('edits through opencode `edit` with oldString/newString', async () => {
    const call = chatToolCall(await sse('/v1/chat/completions', chatBody([{ role: 'user', content: prompt(EDIT) }])));
    assert.equal(call.name, 'edit');
    assert.deepEqual(call.args, { filePath: FILE, oldString: 'hello', newString: 'goodbye' });
  });

  it('edits with pi: `read` first, then `edit` with an edits array, then final text', async () => {
    const user = { role: 'user', content: prompt(EDIT) };
    const read = chatToolCall(await sse('/v1/chat/completions', chatBody([user], PI_TOOLS)));
    assert.deepEqual(read, { name: 'read', args: { path: FILE }, fragments: read.fragments });
    const called = (id: string, name: string) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name, arguments: '{}' } }],
    });
    const afterRead = [user, called('r1', 'read'), { role: 'tool', tool_call_id: 'r1', content: 'hello\n' }];
    const edit = chatToolCall(await sse('/v1/chat/completions', chatBody(afterRead, PI_TOOLS)));
    assert.equal(edit.name, 'edit');
    assert.deepEqual(edit.args, { path: FILE, edits: [{ oldText: 'hello', newText: 'goodbye' }] });
    const afterEdit = [...afterRead, called('e1', 'edit'), { role: 'tool', tool_call_id: 'e1', content: 'Successfully replaced text.' }];
    assert.equal(chatText(await sse('/v1/chat/completions', chatBody(afterEdit, PI_TOOLS))), 'Done: edited hello.txt. [scenario: edit]');
  });

  it('writes with pi `write`', async () => {
    const write = chatToolCall(await sse('/v1/chat/completions', chatBody([{ role: 'user', content: prompt(WRITE) }], PI_TOOLS)));
    assert.deepEqual(write, { name: 'write', args: { path: FILE, content: 'hello\nworld\n' }, fragments: write.fragments });
  });

  it('uses top-level oldText/newText when pi `edit` has no edits array', async () => {
    const tools = [fn('edit', obj({ path: S, oldText: S, newText: S }, ['path', 'oldText', 'newText']))];
    const call = chatToolCall(await sse('/v1/chat/completions', chatBody([{ role: 'user', content: prompt(EDIT) }], tools)));
    assert.deepEqual(call.args, { path: FILE, oldText: 'hello', newText: 'goodbye' });
  });

  it('streams an answer scenario in several chunks even with tools offered', async () => {
    const directive = 'SCENARIO: answer {"text": "The answer is forty-two, as always."}';
    const events = await sse('/v1/chat/completions', chatBody([{ role: 'user', content: prompt(directive) }]));
    const pieces = events
      .filter((e) => e.data !== '[DONE]')
      .flatMap((e) => e.data.choices.map((c: Json) => c.delta?.content))
      .filter(Boolean);
    assert.ok(pieces.length >= 2, `chunks: ${JSON.stringify(pieces)}`);
    assert.equal(pieces.join(''), 'The answer is forty-two, as always.');
  });

  it('answers "Scripted answer." (with how to use it) without a directive', async () => {
    assert.match(chatText(await sse('/v1/chat/completions', chatBody([{ role: 'user', content: 'hello there' }]))), /^Scripted answer\. .*SCENARIO: write/);
    assert.equal(lastRecord().decision, 'default-answer');
  });

  it('emits reasoning_content before the answer for a think scenario', async () => {
    const events = await sse('/v1/chat/completions', chatBody([{ role: 'user', content: 'SCENARIO: think {"text": "Let me consider this."}' }]));
    assert.equal(chatText(events, 'reasoning_content'), 'Let me consider this.');
    assert.equal(chatText(events), 'Thought it through. [scenario: think]');
  });

  it('answers without streaming when stream is false', async () => {
    const res = await post('/v1/chat/completions', chatBody([{ role: 'user', content: prompt(WRITE) }], OPENCODE_TOOLS, { stream: false }));
    const body = (await res.json()) as Json;
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.choices[0].finish_reason, 'tool_calls');
    assert.equal(body.choices[0].message.tool_calls[0].function.name, 'write');
    assert.deepEqual(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments), { content: 'hello\nworld\n', filePath: FILE });
  });

  it("fills qwen's forced `respond_in_schema` call from its schema (next-speaker check)", async () => {
    const schema = obj({ reasoning: S, next_speaker: { type: 'string', enum: ['user', 'model'] } }, ['reasoning', 'next_speaker']);
    const messages = [
      { role: 'user', content: prompt(WRITE) },
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'Who speaks next?' },
    ];
    const body = chatBody(messages, [fn('respond_in_schema', schema)], { tool_choice: 'required' });
    const call = chatToolCall(await sse('/v1/chat/completions', body));
    assert.equal(call.name, 'respond_in_schema');
    assert.deepEqual(call.args, { reasoning: 'simple', next_speaker: 'user' });
  });

  it('lists models', async () => {
    const res = await fetch(`${model.url}/v1/models`);
    const body = (await res.json()) as Json;
    assert.equal(body.object, 'list');
    assert.ok(body.data.length > 0 && typeof body.data[0].id === 'string');
  });
});

// ------------------------------------------------------------------------------------------------------------
// OpenAI Responses: codex.

const APPLY_PATCH = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Use the `apply_patch` tool to edit files.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
};
const CODEX_SHELL = {
  type: 'function',
  name: 'shell',
  description: 'Runs a shell command and returns its output.',
  strict: false,
  parameters: obj({ command: { type: 'array', items: S }, workdir: S, timeout_ms: N }, ['command']),
};
const UPDATE_PLAN = { type: 'function', name: 'update_plan', strict: false, parameters: obj({ plan: { type: 'array' } }, ['plan']) };
const IDE_NAMESPACE = {
  type: 'namespace',
  name: 'mcp__ide',
  description: 'Tools in the mcp__ide namespace.',
  tools: [{ type: 'function', name: 'get_document_symbols', strict: false, parameters: obj({ uri: S }, ['uri']) }],
};
const CODEX_TOOLS = [CODEX_SHELL, UPDATE_PLAN, APPLY_PATCH, { type: 'web_search' }, IDE_NAMESPACE];

function codexBody(input: Json[], tools: Json[] = CODEX_TOOLS): Json {
  const options = { tool_choice: 'auto', parallel_tool_calls: false, stream: true, store: false };
  return { model: 'gpt-5.2-codex', instructions: 'You are Codex.', input, tools, ...options };
}
const userItem = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
// Codex sends its environment context as its own user message before the prompt.
const codexInput = (directive: string) => [
  { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>' }] },
  userItem('<environment_context>\n  <cwd>/ws/project</cwd>\n</environment_context>'),
  userItem(prompt(directive)),
];

function outputItems(events: SseEvent[]): Json[] {
  return events.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item);
}

describe('OpenAI Responses (codex)', () => {
  it('streams a text answer with the full event sequence', async () => {
    const events = await sse('/v1/responses', codexBody([userItem('Generate a title')], []));
    const types = events.map((e) => e.event);
    assert.equal(types[0], 'response.created');
    for (const t of ['response.output_item.added', 'response.output_text.delta', 'response.output_text.done', 'response.output_item.done']) {
      assert.ok(types.includes(t), t);
    }
    assert.equal(types[types.length - 1], 'response.completed');
    assert.ok(
      events.every((e) => e.data.type === e.event),
      'data.type matches the event name',
    );
    const completed = events[events.length - 1]?.data.response;
    assert.equal(completed.status, 'completed');
    assert.ok(completed.usage.input_tokens > 0 && completed.usage.output_tokens > 0 && completed.usage.total_tokens > 0);
    assert.equal(outputItems(events)[0]?.content[0].text, 'Scripted session');
  });

  it('writes through the custom apply_patch tool with a raw Add File patch', async () => {
    const events = await sse('/v1/responses', codexBody(codexInput(WRITE)));
    const deltas = events.filter((e) => e.event === 'response.custom_tool_call_input.delta').map((e) => e.data.delta);
    const patch = `*** Begin Patch\n*** Add File: ${FILE}\n+hello\n+world\n*** End Patch\n`;
    assert.ok(deltas.length >= 2);
    assert.equal(deltas.join(''), patch);
    const done = events.find((e) => e.event === 'response.custom_tool_call_input.done');
    assert.equal(done?.data.input, patch);
    const [item] = outputItems(events);
    assert.equal(item?.type, 'custom_tool_call');
    assert.equal(item?.name, 'apply_patch');
    assert.equal(item?.input, patch);
    assert.ok(typeof item?.call_id === 'string');
    assert.deepEqual(events[events.length - 1]?.data.response.output, [item]);
  });

  it('edits through apply_patch with an Update File hunk', async () => {
    const [item] = outputItems(await sse('/v1/responses', codexBody(codexInput(EDIT))));
    assert.equal(item?.input, `*** Begin Patch\n*** Update File: ${FILE}\n@@\n-hello\n+goodbye\n*** End Patch\n`);
  });

  it('puts the patch in `input` when apply_patch is a JSON function', async () => {
    const jsonPatch = { type: 'function', name: 'apply_patch', strict: false, parameters: obj({ input: S }, ['input']) };
    const [item] = outputItems(await sse('/v1/responses', codexBody(codexInput(WRITE), [CODEX_SHELL, jsonPatch])));
    assert.equal(item?.type, 'function_call');
    assert.equal(JSON.parse(item?.arguments).input.startsWith(`*** Begin Patch\n*** Add File: ${FILE}\n`), true);
  });

  it('runs codex `shell` with an argv array, arguments streamed in fragments', async () => {
    const events = await sse('/v1/responses', codexBody(codexInput(SHELL)));
    const deltas = events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta);
    assert.ok(deltas.length >= 2);
    const [item] = outputItems(events);
    assert.equal(item?.type, 'function_call');
    assert.equal(item?.name, 'shell');
    assert.deepEqual(JSON.parse(deltas.join('')), { command: ['bash', '-lc', 'echo hi > out.txt'] });
    assert.equal(events.find((e) => e.event === 'response.function_call_arguments.done')?.data.arguments, item?.arguments);
  });

  it('calls a namespaced MCP tool by substring, naming tool and namespace separately', async () => {
    const directive = 'SCENARIO: tool {"name": "document_symbols", "args": {"uri": "file:///ws/a.ts"}}';
    const [item] = outputItems(await sse('/v1/responses', codexBody(codexInput(directive))));
    assert.equal(item?.type, 'function_call');
    assert.equal(item?.name, 'get_document_symbols');
    assert.equal(item?.namespace, 'mcp__ide');
    assert.deepEqual(JSON.parse(item?.arguments), { uri: 'file:///ws/a.ts' });
    assert.equal(lastRecord().tool, 'mcp__ide__get_document_symbols');
  });

  it('answers with final text after a tool output, and the denial text after a rejection', async () => {
    const call = { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '…' };
    const output = { type: 'custom_tool_call_output', call_id: 'c1', output: 'Success. Updated the following files:\nA hello.txt' };
    const ok = [...codexInput(WRITE), call, output];
    assert.equal(outputItems(await sse('/v1/responses', codexBody(ok)))[0]?.content[0].text, 'Done: wrote hello.txt. [scenario: write]');
    const denied = [
      ...codexInput(SHELL),
      { type: 'function_call', call_id: 'c2', name: 'shell', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c2', output: 'exec command rejected by user' },
    ];
    const deniedText = outputItems(await sse('/v1/responses', codexBody(denied)))[0]?.content[0].text;
    assert.equal(deniedText, 'The tool call was not allowed; nothing changed. [scenario: shell]');
  });

  it('emits a reasoning item before the message for a think scenario', async () => {
    const events = await sse('/v1/responses', codexBody(codexInput('SCENARIO: think {"text": "Pondering.", "answer": "Pondered."}')));
    const items = outputItems(events);
    assert.deepEqual(
      items.map((i) => i.type),
      ['reasoning', 'message'],
    );
    assert.equal(
      events
        .filter((e) => e.event === 'response.reasoning_summary_text.delta')
        .map((e) => e.data.delta)
        .join(''),
      'Pondering.',
    );
    assert.equal(items[1]?.content[0].text, 'Pondered.');
  });
});

// ------------------------------------------------------------------------------------------------------------
// Anthropic Messages: claude-agent-acp.

const tool = (name: string, input_schema: Json) => ({ name, description: name, input_schema });
const CLAUDE_TOOLS = [
  tool('Read', obj({ file_path: S, offset: N, limit: N }, ['file_path'])),
  tool('Bash', obj({ command: S, timeout: N, description: S, run_in_background: B }, ['command'])),
  tool('BashOutput', obj({ bash_id: S }, ['bash_id'])),
  tool('TodoWrite', obj({ todos: { type: 'array' } }, ['todos'])),
  tool('Edit', obj({ file_path: S, old_string: S, new_string: S, replace_all: { type: 'boolean', default: false } }, ['file_path', 'old_string', 'new_string'])),
  tool('Write', obj({ file_path: S, content: S }, ['file_path', 'content'])),
];

function claudeBody(messages: Json[], tools: Json[] = CLAUDE_TOOLS): Json {
  return { model: 'claude-sonnet-4-5', max_tokens: 32000, stream: true, system: [{ type: 'text', text: 'You are Claude Code' }], messages, tools };
}
// Claude Code wraps the prompt with system reminders as extra text blocks of the same message.
const claudeUser = (directive: string) => ({
  role: 'user',
  content: [
    { type: 'text', text: '<system-reminder>context</system-reminder>' },
    { type: 'text', text: prompt(directive) },
  ],
});

function claudeToolUse(events: SseEvent[]): { name: string; input: Json; fragments: number } {
  const start = events.find((e) => e.event === 'content_block_start' && e.data.content_block.type === 'tool_use');
  const parts = events.filter((e) => e.event === 'content_block_delta' && e.data.delta.type === 'input_json_delta').map((e) => e.data.delta.partial_json);
  return { name: start?.data.content_block.name, input: JSON.parse(parts.join('')), fragments: parts.length };
}

function claudeText(events: SseEvent[], type = 'text_delta', field = 'text'): string {
  return events
    .filter((e) => e.event === 'content_block_delta' && e.data.delta.type === type)
    .map((e) => e.data.delta[field])
    .join('');
}

describe('Anthropic Messages (claude)', () => {
  it('answers the HEAD / and GET / probes', async () => {
    assert.equal((await fetch(`${model.url}/`, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(`${model.url}/`)).status, 200);
  });

  it('counts tokens', async () => {
    const res = await post('/v1/messages/count_tokens', { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(((await res.json()) as Json).input_tokens > 0);
  });

  it('streams text without tools, with the message event sequence', async () => {
    const events = await sse('/v1/messages', claudeBody([claudeUser(WRITE)], []));
    const types = events.map((e) => e.event).filter((t) => t !== 'ping');
    const deltas = types.filter((t) => t === 'content_block_delta').length;
    assert.ok(deltas >= 1);
    const expected = ['message_start', 'content_block_start', ...new Array<string>(deltas).fill('content_block_delta'), 'content_block_stop'];
    assert.deepEqual(types, [...expected, 'message_delta', 'message_stop']);
    assert.equal(claudeText(events), 'Scripted session');
    assert.equal(events.find((e) => e.event === 'message_delta')?.data.delta.stop_reason, 'end_turn');
  });

  it('calls Write (not TodoWrite) with file_path/content as input_json_delta fragments', async () => {
    const events = await sse('/v1/messages', claudeBody([claudeUser(WRITE)]));
    const call = claudeToolUse(events);
    assert.equal(call.name, 'Write');
    assert.deepEqual(call.input, { file_path: FILE, content: 'hello\nworld\n' });
    assert.ok(call.fragments >= 2);
    assert.equal(events.find((e) => e.event === 'message_delta')?.data.delta.stop_reason, 'tool_use');
    assert.ok(events.find((e) => e.event === 'message_delta')?.data.usage.output_tokens > 0);
  });

  it("prefers claude-agent-acp's MCP tools named mcp__acp__Write and mcp__acp__Bash", async () => {
    const tools = CLAUDE_TOOLS.map((t) => ({ ...t, name: t.name === 'TodoWrite' ? t.name : `mcp__acp__${t.name}` }));
    assert.equal(claudeToolUse(await sse('/v1/messages', claudeBody([claudeUser(WRITE)], tools))).name, 'mcp__acp__Write');
    const shell = claudeToolUse(await sse('/v1/messages', claudeBody([claudeUser(SHELL)], tools)));
    assert.equal(shell.name, 'mcp__acp__Bash');
    assert.deepEqual(shell.input, { command: 'echo hi > out.txt' });
  });

  it('reads with Read before it edits with Edit old_string/new_string (Claude Code insists)', async () => {
    const read = claudeToolUse(await sse('/v1/messages', claudeBody([claudeUser(EDIT)])));
    assert.deepEqual(read, { name: 'Read', input: { file_path: FILE }, fragments: read.fragments });
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: read.input }] };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '     1\thello' }] };
    const call = claudeToolUse(await sse('/v1/messages', claudeBody([claudeUser(EDIT), use, result])));
    assert.equal(call.name, 'Edit');
    assert.deepEqual(call.input, { file_path: FILE, old_string: 'hello', new_string: 'goodbye' });
  });

  it('answers with final text after a tool_result, and the denial text after is_error', async () => {
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: {} }] };
    const result = (content: string, isError: boolean) => ({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content, is_error: isError },
        { type: 'text', text: '<system-reminder>x</system-reminder>' },
      ],
    });
    const ok = await sse('/v1/messages', claudeBody([claudeUser(WRITE), use, result('File created successfully at: /ws/project/hello.txt', false)]));
    assert.equal(claudeText(ok), 'Done: wrote hello.txt. [scenario: write]');
    const refusal = result("The user doesn't want to proceed with this tool use.", true);
    const denied = await sse('/v1/messages', claudeBody([claudeUser(WRITE), use, refusal]));
    assert.equal(claudeText(denied), 'The tool call was not allowed; nothing changed. [scenario: write]');
  });

  it('emits a thinking block with a signature for a think scenario', async () => {
    const events = await sse('/v1/messages', claudeBody([claudeUser('SCENARIO: think {"text": "Hmm, let me see."}')]));
    assert.equal(events.find((e) => e.event === 'content_block_start')?.data.content_block.type, 'thinking');
    assert.equal(claudeText(events, 'thinking_delta', 'thinking'), 'Hmm, let me see.');
    assert.ok(claudeText(events, 'signature_delta', 'signature').length > 0);
    assert.equal(claudeText(events), 'Thought it through. [scenario: think]');
  });

  it('answers without streaming when stream is absent', async () => {
    const body = claudeBody([claudeUser(WRITE)]);
    delete body.stream;
    const message = (await (await post('/v1/messages', body)).json()) as Json;
    assert.equal(message.type, 'message');
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.content[0].input, { file_path: FILE, content: 'hello\nworld\n' });
  });
});

// ------------------------------------------------------------------------------------------------------------
// Gemini: gemini-cli.

const decl = (name: string, parametersJsonSchema: Json) => ({ name, description: name, parametersJsonSchema });
const GEMINI_TOOLS = [
  {
    functionDeclarations: [
      decl('read_file', obj({ absolute_path: S }, ['absolute_path'])),
      decl('write_todos', obj({ todos: { type: 'array' } }, ['todos'])),
      decl('write_file', obj({ file_path: S, content: S }, ['file_path', 'content'])),
      decl(
        'replace',
        obj({ file_path: S, instruction: S, old_string: S, new_string: S, expected_replacements: { type: 'number', minimum: 1 } }, ['file_path', 'instruction', 'old_string', 'new_string']),
      ),
      decl('run_shell_command', obj({ command: S, description: S, dir_path: S }, ['command'])),
    ],
  },
];
const GEMINI_STREAM = '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse';

function geminiBody(contents: Json[], tools: Json[] = GEMINI_TOOLS): Json {
  return { contents, systemInstruction: { role: 'user', parts: [{ text: 'You are Gemini CLI' }] }, tools, generationConfig: { temperature: 0 } };
}
// gemini-cli opens with a context exchange, then the prompt.
const geminiPrompt = (directive: string) => [
  { role: 'user', parts: [{ text: 'This is the Gemini CLI. We are setting up the context for our chat.' }] },
  { role: 'model', parts: [{ text: 'Got it. Thanks for the context!' }] },
  { role: 'user', parts: [{ text: prompt(directive) }] },
];

function geminiParts(events: SseEvent[]): Json[] {
  return events.flatMap((e) => e.data.candidates[0].content.parts);
}

describe('Gemini (gemini-cli)', () => {
  it("answers the router's generateContent call with JSON built from its schema", async () => {
    const schema = obj({ reasoning: S, model_choice: { type: 'string', enum: ['flash', 'pro'] } }, ['reasoning', 'model_choice']);
    const body = { contents: geminiPrompt(WRITE), generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } };
    const res = await post('/v1beta/models/gemini-2.5-flash-lite:generateContent', body);
    const answer = (await res.json()) as Json;
    assert.equal(answer.candidates[0].finishReason, 'STOP');
    assert.deepEqual(JSON.parse(answer.candidates[0].content.parts[0].text), { reasoning: 'simple', model_choice: 'flash' });
    assert.equal(lastRecord().decision, 'json');
  });

  it('answers a JSON request without a schema with the router shape', async () => {
    const body = { contents: geminiPrompt(''), generationConfig: { responseMimeType: 'application/json' } };
    const res = await post('/v1beta/models/gemini-2.5-flash-lite:generateContent', body);
    assert.deepEqual(JSON.parse(((await res.json()) as Json).candidates[0].content.parts[0].text), { reasoning: 'simple', model_choice: 'flash' });
  });

  it('streams a write_file functionCall (not write_todos) with file_path/content', async () => {
    const events = await sse(GEMINI_STREAM, geminiBody(geminiPrompt(WRITE)));
    const calls = geminiParts(events).filter((p) => p.functionCall);
    assert.deepEqual(calls, [{ functionCall: { name: 'write_file', args: { file_path: FILE, content: 'hello\nworld\n' } } }]);
    const last = events[events.length - 1]?.data;
    assert.equal(last.candidates[0].finishReason, 'STOP');
    assert.ok(last.usageMetadata.totalTokenCount > 0);
  });

  it('reads with read_file, then edits with replace, filling its required instruction', async () => {
    const [read] = geminiParts(await sse(GEMINI_STREAM, geminiBody(geminiPrompt(EDIT))));
    assert.deepEqual(read, { functionCall: { name: 'read_file', args: { absolute_path: FILE } } });
    const readResult = { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'hello' } } }] };
    const contents = [...geminiPrompt(EDIT), { role: 'model', parts: [read] }, readResult];
    const [part] = geminiParts(await sse(GEMINI_STREAM, geminiBody(contents)));
    assert.equal(part?.functionCall.name, 'replace');
    assert.deepEqual(part?.functionCall.args, { file_path: FILE, instruction: 'Scripted call', old_string: 'hello', new_string: 'goodbye' });
  });

  it('streams final text over several chunks after a functionResponse; an error response reads as denied', async () => {
    const call = { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: {} } }] };
    const response = (r: Json) => ({ role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: r } }] });
    const output = response({ output: 'Command: echo hi\nOutput: (empty)\nError: (none)\nExit Code: 0' });
    const ok = await sse(GEMINI_STREAM, geminiBody([...geminiPrompt(SHELL), call, output]));
    assert.ok(ok.length >= 2);
    assert.equal(
      geminiParts(ok)
        .map((p) => p.text)
        .join(''),
      'Done: ran `echo hi > out.txt`. [scenario: shell]',
    );
    const cancelled = response({ error: '[Operation Cancelled] Reason: User did not allow tool call' });
    const denied = await sse(GEMINI_STREAM, geminiBody([...geminiPrompt(SHELL), call, cancelled]));
    assert.equal(
      geminiParts(denied)
        .map((p) => p.text)
        .join(''),
      'The tool call was not allowed; nothing changed. [scenario: shell]',
    );
  });

  it('marks thinking parts as thoughts', async () => {
    const parts = geminiParts(await sse(GEMINI_STREAM, geminiBody(geminiPrompt('SCENARIO: think {"text": "Considering."}'))));
    assert.equal(
      parts
        .filter((p) => p.thought)
        .map((p) => p.text)
        .join(''),
      'Considering.',
    );
    assert.equal(
      parts
        .filter((p) => !p.thought)
        .map((p) => p.text)
        .join(''),
      'Thought it through. [scenario: think]',
    );
  });

  it('counts tokens', async () => {
    const res = await post('/v1beta/models/gemini-2.5-pro:countTokens', { contents: geminiPrompt('') });
    assert.ok(((await res.json()) as Json).totalTokens > 0);
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('everything else', () => {
  it('answers unknown routes with a JSON 404 and records them', async () => {
    const res = await post('/v1/embeddings', { input: 'x' });
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as Json).error.message, /no route for POST \/v1\/embeddings/);
    assert.equal(lastRecord().api, 'other');
    assert.equal(lastRecord().decision, 'not-found');
  });

  it('rejects a body that is not JSON with 400', async () => {
    const res = await fetch(`${model.url}/v1/chat/completions`, { method: 'POST', body: 'not json' });
    assert.equal(res.status, 400);
    assert.equal(lastRecord().decision, 'bad-request');
  });

  it('records requests with their decisions, and lists the tool calls', () => {
    assert.ok(model.requests.length > 10);
    assert.ok(model.toolCalls().length > 0);
    assert.ok(model.toolCalls().every((r) => r.decision.startsWith('tool:') && typeof r.tool === 'string'));
  });

  it('as a CLI with --workspace, greets with a write into that folder; a relative one is refused', async () => {
    const main = path.join(__dirname, '..', '..', 'src', 'scriptedModel', 'main.js');
    const ws = path.join(path.sep, 'tmp', 'demo workspace');
    const child = spawn(process.execPath, [main, '--port', '0', '--workspace', ws, '--exit-on-stdin-close'], { stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const { url } = JSON.parse(line.toString()) as { url: string };
      const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chatBody([{ role: 'user', content: 'hello there' }])) });
      const text = chatText(
        (await res.text())
          .split(/\n\n/)
          .map((f) => f.replace(/^data: /, '').trim())
          .filter((d) => d && d !== '[DONE]')
          .map((d) => ({ data: JSON.parse(d) })),
      );
      assert.match(text, /^Scripted answer\. /);
      assert.ok(text.includes(`\`SCENARIO: write {"path": ${JSON.stringify(path.join(ws, 'hello.txt'))}, "content": "hi"}\``), text);
      assert.doesNotMatch(text, /absolute\/path/);
      child.stdin.end();
      await once(child, 'exit');
    } finally {
      if (child.exitCode === null) child.kill();
    }
    const bad = spawn(process.execPath, [main, '--workspace', 'relative/ws'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    bad.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(bad, 'exit')) as [number | null];
    assert.equal(code, 1);
    assert.match(stderr, /--workspace needs an absolute folder \(got relative\/ws\)/);
  });

  it('runs as a CLI that prints its URL and exits when stdin closes', async () => {
    const main = path.join(__dirname, '..', '..', 'src', 'scriptedModel', 'main.js');
    const child = spawn(process.execPath, [main, '--port', '0', '--exit-on-stdin-close'], { stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const { url } = JSON.parse(line.toString()) as { url: string };
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await fetch(`${url}/`, { method: 'HEAD' })).status, 200);
      const [logged] = (await once(child.stderr, 'data')) as [Buffer];
      assert.match(logged.toString(), /HEAD \/ -> other probe/);
      child.stdin.end();
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0);
    } finally {
      if (child.exitCode === null) child.kill();
    }
  });
});
