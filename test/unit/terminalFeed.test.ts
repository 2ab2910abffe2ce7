import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TerminalService } from '../../src/host/terminalService';
import type { ToolCallEntity } from '../../src/session/sessionModel';
import { CARD_CHARS, KEPT, type TerminalChange, TerminalFeed } from '../../src/session/terminalFeed';
import { TerminalCards } from '../../src/views/chat/terminalCards';
import { scratchDir } from '../support/paths';

const call = (id: string, meta?: Record<string, unknown>, content: unknown[] = []): ToolCallEntity => ({
  kind: 'tool_call',
  id,
  title: 'Run it',
  toolKind: 'execute',
  status: 'in_progress',
  content,
  locations: [],
  rawInput: { command: 'npm test' },
  ...(meta ? { meta } : {}),
});

test('a command run through the terminal service: the feed holds its command, output and exit, then its release', async () => {
  const feed = new TerminalFeed();
  const changes: TerminalChange[] = [];
  feed.onChange((c) => changes.push(c));
  const terminals = new TerminalService(() => [scratchDir('terminal-feed')], feed.events);
  const { terminalId } = await terminals.create({ command: process.execPath, args: ['-e', 'process.stdout.write("one\\n"); setTimeout(() => { console.log("two"); process.exit(4); }, 100)'] });
  assert.match(feed.view(terminalId)?.commandLine ?? '', /node|-e/);
  await terminals.waitForExit(terminalId);
  const view = feed.view(terminalId)!;
  assert.equal(view.output, 'one\ntwo\n');
  assert.deepEqual(view.exit, { exitCode: 4, signal: null });
  assert.equal(view.released, false);
  await terminals.release(terminalId);
  assert.equal(feed.view(terminalId)?.released, true);
  assert.deepEqual(
    changes.filter((c) => c.data).map((c) => c.data),
    ['one\n', 'two\n'],
    'each write, as written',
  );
  assert.ok(changes.length >= 5, `create, two writes, exit, release: ${changes.length}`);
});

test('the feed keeps the last CARD_CHARS characters of a terminal and counts the rest; the KEPT newest terminals', () => {
  const feed = new TerminalFeed();
  feed.events.onCreate('t0', 'yes');
  const line = 'y\n'.repeat(1000);
  for (let i = 0; i < 100; i++) feed.events.onOutput('t0', line);
  const view = feed.view('t0')!;
  assert.equal(view.output.length, CARD_CHARS);
  assert.equal(view.dropped, 100 * line.length - CARD_CHARS);
  for (let i = 1; i <= KEPT; i++) feed.events.onCreate(`t${i}`, 'true');
  assert.equal(feed.view('t0'), undefined, 'the oldest went');
  assert.ok(feed.view(`t${KEPT}`) && feed.view('t1'));
  feed.events.onOutput('gone', 'x');
  assert.equal(feed.view('gone'), undefined, 'output of an unknown terminal is not a terminal');
});

test("an agent's own shell (_meta.terminal_*): output once per meta object, the exit, named meta:<id>; the card shows them", () => {
  const feed = new TerminalFeed();
  const posted: string[] = [];
  const source = { view: (id: string) => feed.view(id), onChange: (l: (c: TerminalChange) => void) => feed.onChange(l), show: (id: string) => !!feed.view(id) };
  const cards = new TerminalCards(source, (id) => posted.push(id));
  const first = call('c1', { terminal_info: { terminal_id: 'b1' } });
  assert.equal(feed.fromToolCall(first), 'meta:b1');
  const card0 = cards.withTerminals(first);
  assert.deepEqual(card0.content, [{ type: 'terminal', terminalId: 'meta:b1', commandLine: 'npm test', output: '', dropped: 0, released: false }]);
  const output = { terminal_id: 'b1', data: '\x1b[32mok\x1b[0m 3 tests\n' };
  const withOutput = call('c1', { terminal_info: { terminal_id: 'b1' }, terminal_output: output });
  feed.fromToolCall(withOutput);
  feed.fromToolCall(withOutput); // the same meta again (merged updates repeat it): not new output
  feed.fromToolCall(call('c1', { terminal_info: { terminal_id: 'b1' }, terminal_output: output, terminal_exit: { terminal_id: 'b1', exit_code: 1, signal: null } }));
  const card = cards.withTerminals(withOutput).content[0] as { output: string; exit?: unknown };
  assert.equal(card.output, '\x1b[32mok\x1b[0m 3 tests\n');
  assert.deepEqual(card.exit, { exitCode: 1, signal: null });
  assert.ok(posted.length >= 2 && posted.every((id) => id === 'c1'), `the card re-posted on each change: ${posted}`);
  assert.equal(cards.show('meta:b1'), true);
  assert.equal(cards.show('meta:nope'), false);
  cards.dispose();
});

test('a terminal item the agent sent is filled; one no longer known stays as sent; a call without terminals is the same object', () => {
  const feed = new TerminalFeed();
  feed.events.onCreate('term-1', 'npm run build');
  feed.events.onOutput('term-1', 'built\n');
  const cards = new TerminalCards({ view: (id) => feed.view(id), onChange: (l) => feed.onChange(l), show: () => true }, () => undefined);
  const filled = cards.withTerminals(
    call('c2', undefined, [
      { type: 'terminal', terminalId: 'term-1' },
      { type: 'terminal', terminalId: 'term-old' },
    ]),
  );
  assert.deepEqual(filled.content, [
    { type: 'terminal', terminalId: 'term-1', commandLine: 'npm run build', output: 'built\n', dropped: 0, released: false },
    { type: 'terminal', terminalId: 'term-old' },
  ]);
  const plain = call('c3', undefined, [{ type: 'content', content: { type: 'text', text: 'hi' } }]);
  assert.equal(cards.withTerminals(plain), plain);
  assert.equal(new TerminalCards(undefined, () => undefined).withTerminals(filled), filled, 'no terminals source: as is');
});

test('claude names its own shell\'s terminal in the content by its tool use id: one card, and no "running" once the call is over', () => {
  const feed = new TerminalFeed();
  const cards = new TerminalCards({ view: (id) => feed.view(id), onChange: (l) => feed.onChange(l), show: () => true }, () => undefined);
  const running = call('toolu_1', { terminal_info: { terminal_id: 'toolu_1' } }, [{ type: 'terminal', terminalId: 'toolu_1' }]);
  feed.fromToolCall(running);
  assert.deepEqual(cards.withTerminals(running).content, [{ type: 'terminal', terminalId: 'meta:toolu_1', commandLine: 'npm test', output: '', dropped: 0, released: false }]);
  // A failed command: claude sends only the error text, no terminal_output or terminal_exit.
  const failed = { ...running, status: 'failed' as const, content: [{ type: 'content', content: { type: 'text', text: 'exit 3' } }] };
  const shown = cards.withTerminals(failed).content;
  assert.equal(shown.length, 2);
  assert.deepEqual(shown[1], { type: 'terminal', terminalId: 'meta:toolu_1', commandLine: 'npm test', output: '', dropped: 0, released: false, ended: true });
});

test('the command an agent streams after its first report names the terminal', () => {
  const feed = new TerminalFeed();
  feed.fromToolCall({ ...call('toolu_2', { terminal_info: { terminal_id: 'toolu_2' } }), title: 'Terminal', rawInput: {} });
  assert.equal(feed.view('meta:toolu_2')?.commandLine, 'Terminal');
  feed.fromToolCall(call('toolu_2', { terminal_info: { terminal_id: 'toolu_2' } }));
  assert.equal(feed.view('meta:toolu_2')?.commandLine, 'npm test');
});
