/**
 * `agent-host task` through the built CLI with real agents (opencode over ACP, pi in RPC mode) against the
 * scripted model, on a copy of the selection fixture: explain prints the answer; fix, docstring and tests print
 * unified diffs that `git apply --check` takes in the workspace, and no file is written; --language zh reaches
 * the prompt the model receives; a bad --range or a missing file is a usage error before any agent starts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { runCli } from '../support/cli';
import { scratchWorkspace } from '../support/paths';
import { PI_RPC } from '../rpc/agents';
import { agentById } from './catalog';

const opencode = agentById('opencode')!;
// Under npm test (AGENT_HOST_REQUIRE_AGENTS=1) a missing agent fails the suite instead of skipping it.
const required = process.env.AGENT_HOST_REQUIRE_AGENTS === '1';
const PRICING = path.join('shop', 'pricing.py');

/** A workspace copy and an agents file naming opencode (and pi over RPC) against the model. */
async function setUp(model: ScriptedModel, prefix: string): Promise<{ scratch: string; workspace: string; config: string }> {
  const { scratch, workspace } = scratchWorkspace(prefix, 'selection');
  const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
  const pi = PI_RPC.prepare({ scratch: path.join(scratch, 'pi'), modelUrl: model.url, workspace, args: ['--no-session'] });
  const config = path.join(scratch, 'agents.json');
  fs.writeFileSync(
    config,
    JSON.stringify([
      { name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false },
      { name: 'pi', command: pi.command, args: pi.args, env: pi.env, protocol: 'rpc', inheritEnv: false },
    ]),
  );
  return { scratch, workspace, config };
}

/** `git apply --check` of `diff` in `workspace`: '' when it applies, else git's complaint. */
function applyCheck(workspace: string, diff: string): string {
  const r = spawnSync('git', ['apply', '--check', '-'], { cwd: workspace, input: diff, encoding: 'utf8' });
  return r.status === 0 ? '' : `git apply --check failed (${r.status}): ${r.stderr}`;
}

/** The lines a diff adds and removes (its file headers left out). */
function changedLines(diff: string): { added: string[]; removed: string[] } {
  const body = diff.split('\n').filter((l) => !l.startsWith('+++ ') && !l.startsWith('--- '));
  return { added: body.filter((l) => l.startsWith('+')).map((l) => l.slice(1)), removed: body.filter((l) => l.startsWith('-')).map((l) => l.slice(1)) };
}

const taskRequests = (model: ScriptedModel) => model.requests.filter((r) => r.decision.startsWith('task:'));

describe('agent-host task (real agents, scripted model)', { skip: opencode.installed() || required ? false : 'opencode not installed', concurrency: false }, () => {
  let model: ScriptedModel;
  let ws: { scratch: string; workspace: string; config: string };
  let original: string;
  const task = (...args: string[]) => runCli(['task', ...args, '--config', ws.config, '--cwd', ws.workspace], ws.workspace);

  before(async () => {
    assert.ok(opencode.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
    model = await startScriptedModel();
    ws = await setUp(model, 'task');
    original = fs.readFileSync(path.join(ws.workspace, PRICING), 'utf8');
  });
  after(async () => {
    await model?.close();
    if (ws) fs.rmSync(ws.scratch, { recursive: true, force: true });
  });

  test('explain prints the answer about the range, and only the answer, on stdout', { timeout: 60_000 }, async () => {
    const r = await task('explain', '--file', PRICING, '--range', '6:1-10:17');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\*\*What it does\*\*: `cart_total\(items\)`/);
    assert.match(r.stdout, /skipped the first element of `items`/);
    assert.deepEqual(
      taskRequests(model).map((q) => q.decision),
      ['task:explain'],
    );
  });

  test('fix prints a unified diff of the file that git apply takes; the file is not written', { timeout: 60_000 }, async () => {
    const r = await task('fix', '--file', PRICING, '--range', '6-10');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^--- a\/shop\/pricing\.py\n\+\+\+ b\/shop\/pricing\.py\n@@ /);
    assert.deepEqual(changedLines(r.stdout), { added: ['    for i in range(len(items)):'], removed: ['    for i in range(1, len(items)):'] });
    assert.equal(applyCheck(ws.workspace, r.stdout), '');
    assert.equal(fs.readFileSync(path.join(ws.workspace, PRICING), 'utf8'), original);
  });

  test('docstring (cursor inside the function) prints a diff that only adds its documentation', { timeout: 60_000 }, async () => {
    const r = await task('docstring', '--file', PRICING, '--range', '14:9-14:9');
    assert.equal(r.code, 0, r.stderr);
    const { added, removed } = changedLines(r.stdout);
    assert.deepEqual(removed, []);
    assert.equal(added[0], '    """Apply a percentage discount to an amount, rounded to cents.');
    assert.equal(added.at(-1), '    """');
    assert.ok(added.includes('        ValueError: If an argument is out of range.'), added.join('\n'));
    assert.match(r.stdout, /^@@ -10,\d+ \+10,\d+ @@\n(?: .*\n)* def apply_discount\(total, percent\):\n\+ {4}"""/m);
    assert.equal(applyCheck(ws.workspace, r.stdout), '');
  });

  test('tests: cases, then code; prints the new test file as a diff from /dev/null and writes nothing', { timeout: 90_000 }, async () => {
    const before = model.requests.length;
    const r = await task('tests', '--file', PRICING, '--range', '6:5-6:5');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      model.requests
        .slice(before)
        .filter((q) => q.decision.startsWith('task:'))
        .map((q) => q.decision),
      ['task:testCases', 'task:testCode'],
    );
    // pytest (pyproject.toml), next to the reference tests/test_format.py.
    assert.match(r.stdout, /^--- \/dev\/null\n\+\+\+ b\/tests\/test_pricing\.py\n@@ -0,0 \+1,\d+ @@\n\+import pytest\n\+\n\+from shop\.pricing import cart_total\n/);
    assert.equal((r.stdout.match(/^\+def test_/gm) ?? []).length, 6, r.stdout);
    assert.match(r.stderr, /6 test cases proposed, all taken:\nHappy paths:\n• two lines add up/);
    assert.equal(applyCheck(ws.workspace, r.stdout), '');
    assert.equal(fs.existsSync(path.join(ws.workspace, 'tests', 'test_pricing.py')), false);
  });

  test('--language zh reaches the prompt the model receives, and the answer is Chinese', { timeout: 60_000 }, async () => {
    const before = model.requests.length;
    const r = await task('explain', '--file', PRICING, '--range', '6-10', '--language', 'zh');
    assert.equal(r.code, 0, r.stderr);
    const asked = model.requests.slice(before).find((q) => q.decision === 'task:explain');
    assert.ok(asked, 'the model got no explain prompt');
    assert.match(JSON.stringify(asked.body), /Atrium task: explain\\nAnswer in Simplified Chinese/);
    assert.match(r.stdout, /^\*\*作用\*\*：`cart_total\(items\)`/);
  });

  test('optimize through pi in RPC mode: the diff replaces the loop', { skip: PI_RPC.installed() || required ? false : 'pi not installed', timeout: 60_000 }, async () => {
    const before = model.requests.length;
    const r = await runCli(['task', 'optimize', '--file', PRICING, '--range', '6-10', '--config', ws.config, '--agent', 'pi', '--cwd', ws.workspace, '--format', 'json'], ws.workspace);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal((events.find((e) => e.type === 'session') as { agent: { protocol: string } }).agent.protocol, 'rpc');
    const proposal = events.find((e) => e.type === 'proposal') as { file: string; diff: string };
    assert.equal(proposal.file, 'shop/pricing.py');
    assert.deepEqual(changedLines(proposal.diff).added, ['    return sum(item["price"] * item["qty"] for item in items)']);
    assert.equal(applyCheck(ws.workspace, proposal.diff), '');
    assert.deepEqual(events.at(-1), { type: 'result', outcome: 'end_turn', exitCode: 0 });
    assert.ok(
      model.requests.slice(before).some((q) => q.decision === 'task:optimize'),
      'pi did not send the optimize prompt',
    );
  });

  test('a bad --range or a missing file: exit 2 with what is wrong, and no agent starts', { timeout: 30_000 }, async () => {
    const before = model.requests.length;
    const cases: [string[], RegExp][] = [
      [['--file', PRICING, '--range', '30-40'], /--range "30-40": line 30 is not in the file \(pricing\.py: lines 1 to 21\)/],
      [['--file', PRICING, '--range', '6:1-6:99'], /--range "6:1-6:99": column 99 is not on line 6 \(columns 1 to 23\)/],
      [['--file', PRICING, '--range', '10-6'], /--range "10-6" ends before it starts/],
      [['--file', PRICING, '--range', 'six'], /--range "six" is not L1:C1-L2:C2 or L1-L2/],
      [['--file', 'shop/missing.py', '--range', '1-2'], /cannot read --file shop\/missing\.py: ENOENT/],
    ];
    for (const [args, says] of cases) {
      const r = await task('fix', ...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, says);
      assert.equal(r.stdout, '');
    }
    assert.equal(model.requests.length, before, 'an agent was started');
  });
});
