/** The scripted model's decision logic and schema-driven arguments, without HTTP. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Conversation, decide, type Decision, looksDenied, type OfferedTool, parseScenario } from '../../src/scriptedModel/decide';
import { sampleObject } from '../../src/scriptedModel/schemaValues';
import { summarizeTurn } from '../../src/scriptedModel/wire';

function conv(lastUserText: string, tools: OfferedTool[], more: Partial<Conversation> = {}): Conversation {
  return { lastUserText, hasToolResultAfterLastUser: false, lastToolResultText: '', tools, ...more };
}

const fnTool = (name: string, properties: Record<string, unknown>, required: string[]): OfferedTool => ({
  name,
  kind: 'function',
  schema: { type: 'object', properties, required },
});
const str = { type: 'string' };

function args(d: Decision): Record<string, unknown> {
  assert.equal(d.type, 'tool', `expected a tool call, got ${JSON.stringify(d)}`);
  if (d.type !== 'tool' || d.input.kind !== 'json') throw new Error('expected JSON arguments');
  return d.input.args;
}

describe('parseScenario', () => {
  it('finds the directive anywhere in the text, the last one winning', () => {
    const text = 'intro\nSCENARIO: answer {"text": "first"}\nmore\n  SCENARIO: write {"path": "/a/b.txt", "content": "x"}  \ntrailer';
    assert.deepEqual(parseScenario(text), { name: 'write', args: { path: '/a/b.txt', content: 'x' } });
  });

  it('takes braces inside JSON strings in stride and ignores text after the object', () => {
    assert.deepEqual(parseScenario('SCENARIO: answer {"text": "a } b {"} (sent by me)'), { name: 'answer', args: { text: 'a } b {' } });
  });

  it('accepts a missing or broken object as no arguments', () => {
    assert.deepEqual(parseScenario('SCENARIO: answer'), { name: 'answer', args: {} });
    assert.deepEqual(parseScenario('SCENARIO: answer {"text": '), { name: 'answer', args: {} });
    assert.equal(parseScenario('no directive here'), undefined);
  });

  it('reads a directive whose quotes the agent JSON-escaped', () => {
    assert.deepEqual(parseScenario('{"prompt":"SCENARIO: shell {\\"command\\": \\"ls\\"}"}'), { name: 'shell', args: { command: 'ls' } });
  });
});

describe('looksDenied', () => {
  it('spots denials and errors but not gemini\'s "Error: (none)" or identifiers', () => {
    for (const t of ['Permission denied', 'The user rejected permission', 'Operation Cancelled', 'Error: boom', 'not allowed']) {
      assert.equal(looksDenied(t), true, t);
    }
    for (const t of ['Output: hi\nError: (none)\nExit Code: 0', 'function handleError() {}', 'Wrote file successfully.']) {
      assert.equal(looksDenied(t), false, t);
    }
  });
});

describe('decide', () => {
  const write = 'SCENARIO: write {"path": "/w/a.txt", "content": "A\\nB\\n"}';

  it('answers short text without tools, but the scenario text for answer/think', () => {
    assert.deepEqual(decide(conv(write, [])), { type: 'text', label: 'side-text', text: 'Scripted session', scenario: 'write' });
    const answer = decide(conv('SCENARIO: answer {"text": "hi"}', []));
    assert.equal(answer.type === 'text' && answer.text, 'hi');
  });

  it('answers final text with the scenario name once a tool result is present, even if tools are gone', () => {
    const d = decide(conv(write, [], { hasToolResultAfterLastUser: true, lastToolResultText: 'ok' }));
    assert.deepEqual(d, { type: 'text', label: 'final', text: 'Done: wrote a.txt. [scenario: write]', scenario: 'write' });
    const flagged = decide(conv(write, [], { hasToolResultAfterLastUser: true, lastToolResultText: 'ok', lastToolResultIsError: true }));
    assert.equal(flagged.label, 'final-denied');
  });

  it('reads a JSON result (a lookup\'s data, e.g. diagnostics of severity "Error") only by its error flag', () => {
    const tool = 'SCENARIO: tool {"name": "get_diagnostics"}';
    const data = '[{"severity":"Error","message":"Type \'string\' is not assignable to type \'number\'."}]';
    assert.equal(decide(conv(tool, [], { hasToolResultAfterLastUser: true, lastToolResultText: data })).label, 'final');
    assert.equal(decide(conv(tool, [], { hasToolResultAfterLastUser: true, lastToolResultText: data, lastToolResultIsError: true })).label, 'final-denied');
    assert.equal(decide(conv(tool, [], { hasToolResultAfterLastUser: true, lastToolResultText: 'Error: no such file' })).label, 'final-denied');
  });

  it('falls back to an edit tool with empty old text when there is no write tool', () => {
    const edit = fnTool('Edit', { file_path: str, old_string: str, new_string: str }, ['file_path', 'old_string', 'new_string']);
    assert.deepEqual(args(decide(conv(write, [edit]))), { file_path: '/w/a.txt', old_string: '', new_string: 'A\nB\n' });
  });

  it('falls back to a shell redirect when nothing else can write', () => {
    const shell = fnTool('exec_command', { cmd: str, workdir: str }, ['cmd']);
    assert.deepEqual(args(decide(conv(write, [shell]))), { cmd: "printf '%s' 'A\nB\n' > '/w/a.txt'" });
  });

  it('says so when no offered tool fits, and names unknown scenarios', () => {
    const read = fnTool('read_file', { path: str }, ['path']);
    assert.equal(decide(conv(write, [read])).label, 'no-tool');
    assert.equal(decide(conv('SCENARIO: dance {}', [read])).label, 'unknown-scenario');
    assert.equal(decide(conv('SCENARIO: write {"content": "x"}', [read])).label, 'bad-scenario');
  });

  it('fills required fields by type and leaves optional ones out (workdir, timeout)', () => {
    const bash = fnTool('run_shell_command', { command: str, is_background: { type: 'boolean' }, directory: str, timeout: { type: 'number' } }, ['command', 'is_background']);
    assert.deepEqual(args(decide(conv('SCENARIO: shell {"command": "ls"}', [bash]))), { command: 'ls', is_background: false });
  });

  it('calls the tool scenario by case-insensitive substring, merging given args over schema defaults', () => {
    const symbols = fnTool('ide_get_document_symbols', { uri: str, depth: { type: 'integer', minimum: 1 } }, ['uri', 'depth']);
    const d = decide(conv('SCENARIO: tool {"name": "Document_Symbols", "args": {"uri": "file:///a.ts"}}', [symbols]));
    assert.deepEqual(args(d), { uri: 'file:///a.ts', depth: 1 });
  });

  it('edits by reading first, editing after the read, and finishing after the edit', () => {
    const tools = [fnTool('read_file', { file_path: str }, ['file_path']), fnTool('edit', { file_path: str, old_string: str, new_string: str }, ['file_path', 'old_string', 'new_string'])];
    const text = 'SCENARIO: edit {"path": "/w/a.txt", "old": "A", "new": "Z"}';
    const step = (calls: string[], result: string) => decide(conv(text, tools, { hasToolResultAfterLastUser: calls.length > 0, lastToolResultText: result, toolCallsAfterLastUser: calls }));
    assert.equal(step([], '').label, 'tool:read_file');
    assert.deepEqual(args(step(['read_file'], 'A\n')), { file_path: '/w/a.txt', old_string: 'A', new_string: 'Z' });
    assert.equal(step(['read_file', 'edit'], 'ok').label, 'final');
    assert.equal(step(['read_file'], 'Permission denied').label, 'final-denied');
  });

  it('treats each turn on its own: a later prompt without a directive gets the default answer', () => {
    const tools = [fnTool('write', { path: str, content: str }, ['path', 'content'])];
    assert.equal(decide(conv('thanks!', tools)).label, 'default-answer');
  });

  it("the greeting's example writes into the workspace the model was told, and sent back as it is, writes there", () => {
    const tools = [fnTool('write', { path: str, content: str }, ['path', 'content'])];
    const ws = '/home/me/demo "ws"';
    const greeting = decide(conv('hello', tools), { workspace: ws });
    assert.equal(greeting.type, 'text');
    const example = /`(SCENARIO: write [^`]*)`/.exec(greeting.type === 'text' ? greeting.text : '')?.[1];
    assert.equal(example, 'SCENARIO: write {"path": "/home/me/demo \\"ws\\"/hello.txt", "content": "hi"}');
    assert.deepEqual(args(decide(conv(example!, tools), { workspace: ws })), { path: '/home/me/demo "ws"/hello.txt', content: 'hi' });
    // An answer directive without text gets the same greeting.
    assert.match((decide(conv('SCENARIO: answer', tools), { workspace: ws }) as { text: string }).text, /demo \\"ws\\"\/hello\.txt/);
  });
});

describe('summarizeTurn', () => {
  it('joins trailing user messages (system ones in between are transparent) and finds results after them', () => {
    const summary = summarizeTurn([
      { kind: 'user', text: 'old prompt' },
      { kind: 'assistant' },
      { kind: 'user', text: '<environment_context/>' },
      { kind: 'system' },
      { kind: 'user', text: 'new prompt' },
      { kind: 'assistant', calls: ['read'] },
      { kind: 'result', text: 'first' },
      { kind: 'assistant', calls: ['edit'] },
      { kind: 'result', text: 'second', isError: false },
    ]);
    assert.deepEqual(summary, {
      lastUserText: '<environment_context/>\nnew prompt',
      hasToolResultAfterLastUser: true,
      lastToolResultText: 'second',
      lastToolResultIsError: false,
      toolCallsAfterLastUser: ['read', 'edit'],
    });
  });
});

describe('sampleObject', () => {
  it("reads Gemini's upper-case types, $ref, anyOf, enums, defaults and bounds", () => {
    const schema = {
      type: 'OBJECT',
      properties: {
        name: { type: 'STRING' },
        count: { type: 'INTEGER', minimum: 3 },
        mode: { anyOf: [{ type: 'null' }, { type: 'string', enum: ['fast', 'slow'] }] },
        ref: { $ref: '#/$defs/Thing' },
        flag: { type: 'boolean', default: true },
        timeout: { type: 'number', maximum: 600 },
        list: { type: 'array', items: str, minItems: 1 },
      },
      required: ['name', 'count', 'mode', 'ref', 'flag', 'timeout', 'list'],
      $defs: { Thing: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
    };
    assert.deepEqual(sampleObject(schema), {
      name: 'scripted',
      count: 3,
      mode: 'fast',
      ref: { id: 0 },
      flag: true,
      timeout: 600,
      list: ['scripted'],
    });
  });
});
