/**
 * An ad-hoc agent's arguments through the built CLI (dist/cli.js) to a real agent process (the hostile fixture,
 * which writes the arguments it got to $HOSTILE_ARGV): `--arg -c` passes "-c" (parseArgs alone calls it
 * ambiguous), and `agent-host [options] PROMPT -- CMD ARG…` runs CMD with every later word as written.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { tlsFlags } from '../../src/cli/agentOptions';
import { runCli } from '../support/cli';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const root = scratchDir('cli-agent-args');
after(() => fs.rmSync(root, { recursive: true, force: true }));

let runs = 0;
/** Runs the CLI in a folder of its own; `argv` is what the agent was started with (undefined: it never started). */
async function run(args: string[]) {
  const dir = path.join(root, `run-${++runs}`);
  fs.mkdirSync(dir);
  const argvFile = path.join(dir, 'argv.json');
  const r = await runCli(['--cwd', dir, '--state-dir', path.join(dir, 'state'), '--env', `HOSTILE_ARGV=${argvFile}`, ...args], dir);
  const argv = fs.existsSync(argvFile) ? (JSON.parse(fs.readFileSync(argvFile, 'utf8')) as string[]) : undefined;
  return { ...r, argv };
}

describe('CLI: an ad-hoc agent gets its arguments as written', () => {
  test('--arg takes the next word even when it starts with "-" (and --arg=-x still works)', { timeout: 60_000 }, async () => {
    assert.ok(fs.existsSync(cliPath), 'dist/cli.js is missing: npm run build');
    const r = await run(['--command', process.execPath, '--arg', hostileAgent, '--arg', 'answer', '--arg', '-c', '--arg', '--model', '--arg=-x', '--arg', '--', 'say hello']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.argv, ['answer', '-c', '--model', '-x', '--']);
    assert.match(r.stdout, /say hello/, 'the prompt reached the agent and came back');
  });

  test('PROMPT -- CMD ARG…: the words after "--" are the agent and its arguments; options before it still apply', { timeout: 60_000 }, async () => {
    const r = await run(['--format', 'json', 'say hello', '--', process.execPath, hostileAgent, 'answer', '-c', '--format', 'text', '--', 'last']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.argv, ['answer', '-c', '--format', 'text', '--', 'last']);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; outcome?: string; entity?: { role?: string; text?: string } });
    assert.deepEqual(events.at(-1), { type: 'result', outcome: 'end_turn', exitCode: 0 }, 'the options before "--" (JSON) apply');
    assert.ok(
      events.some((e) => e.type === 'entity' && e.entity?.role === 'user' && e.entity.text === 'say hello'),
      'the prompt is the words before "--"',
    );
  });

  test('"--" with nothing after it, or with --command/--arg/--config too, is a usage error; the agent never starts', async () => {
    const empty = await run(['say hello', '--']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /^agent-host: nothing after "--": give the agent's command and its arguments there \(-- CMD ARG…\)$/m);
    const both = await run(['--command', process.execPath, '--arg', '-c', 'say hello', '--', process.execPath, hostileAgent, 'answer']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^agent-host: the agent after "--" and --command, --arg both name the agent: give one$/m);
    assert.equal(both.argv, undefined);
    const config = await run(['--config', path.join(root, 'none.json'), 'say hello', '--', process.execPath, hostileAgent]);
    assert.match(config.stderr, /and --config both name the agent/);
    assert.equal(config.code, 2);
  });

  test('--help shows both ways', async () => {
    const r = await runCli(['--help'], root);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /agent-host \[options\] <prompt…> -- CMD \[ARG…\]/);
    assert.match(r.stdout, /--arg -c/);
  });

  test('check: --arg -c and -- CMD ARG… reach the agent the same way', { timeout: 60_000 }, async () => {
    const dir = path.join(root, 'check');
    fs.mkdirSync(dir);
    const argvFile = path.join(dir, 'argv.json');
    const env = ['--env', `HOSTILE_ARGV=${argvFile}`, '--cwd', dir, '--format', 'json', '--timeout', '10'];
    const flags = await runCli(['check', ...env, '--command', process.execPath, '--arg', hostileAgent, '--arg', 'answer', '--arg', '-c'], dir);
    assert.doesNotMatch(flags.stderr, /ambiguous/);
    assert.deepEqual(JSON.parse(fs.readFileSync(argvFile, 'utf8')), ['answer', '-c']);
    assert.equal((JSON.parse(flags.stdout) as { agent: { name: string } }).agent.name, 'hostile', flags.stderr);
    fs.rmSync(argvFile);
    const dashed = await runCli(['check', ...env, '--', process.execPath, hostileAgent, 'answer', '--x'], dir);
    assert.deepEqual(JSON.parse(fs.readFileSync(argvFile, 'utf8')), ['answer', '--x']);
    assert.equal((JSON.parse(dashed.stdout) as { agent: { name: string } }).agent.name, 'hostile', dashed.stderr);
  });
});

test('--ca is resolved against the shell folder for the prompt mode and the check alike; no flag, no tls', () => {
  assert.deepEqual(tlsFlags({ ca: 'certs/ca.pem', fingerprint: 'AB:CD' }), { ca: path.resolve('certs/ca.pem'), fingerprint: 'AB:CD' });
  assert.equal(tlsFlags({}), undefined);
});
