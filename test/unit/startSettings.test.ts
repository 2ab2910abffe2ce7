/**
 * `npm start` (scripts/start.sh) writes its demo agent into code-server's Remote (machine) settings: the
 * script's own Node block, run here on a settings file a person edited, keeps their agents, their default and
 * every other setting, and refreshes only the demo entry. Its demo model (scripts/lib/demo-agent.sh, run here
 * as start.sh runs it) greets with a write into the demo's real workspace; PORT= is checked before setup.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as net from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { repoRoot, scratchDir } from '../support/paths';

/** The Node program start.sh feeds to `node -` (its `<<'NODE'` heredoc), as it is in the script now. */
function startSettingsProgram(): string {
  const script = fs.readFileSync(path.join(repoRoot, 'scripts', 'start.sh'), 'utf8');
  const m = /<<'NODE'\n([\s\S]*?)\nNODE\n/.exec(script);
  assert.ok(m, "start.sh has no <<'NODE' block");
  return m[1]!;
}

test('npm start keeps the agents and settings a person added to the Remote settings', () => {
  const dir = scratchDir('start-settings');
  try {
    fs.mkdirSync(path.join(dir, 'Machine'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'User'), { recursive: true });
    const machine = path.join(dir, 'Machine', 'settings.json');
    fs.writeFileSync(
      machine,
      [
        '{',
        '  // added by hand after the first start',
        '  "agentHost.agents": [',
        '    { "name": "Mine", "command": "my-agent", "args": ["--url=http://x//y"] }, /* kept */',
        '    { "name": "opencode (demo model)", "command": "stale" },',
        '  ],',
        '  "agentHost.defaultAgent": "Mine",',
        '  "editor.fontSize": 15,',
        '}',
      ].join('\n'),
    );
    const run = (agent: object) => spawnSync(process.execPath, ['-', dir, JSON.stringify(agent)], { input: startSettingsProgram(), encoding: 'utf8' });
    const demo = { name: 'opencode (demo model)', command: '/demo/opencode', args: ['acp'] };
    for (let i = 0; i < 2; i++) {
      const r = run(demo);
      assert.equal(r.status, 0, r.stderr);
      const got = JSON.parse(fs.readFileSync(machine, 'utf8')) as Record<string, unknown>;
      assert.deepEqual(got['agentHost.agents'], [demo, { name: 'Mine', command: 'my-agent', args: ['--url=http://x//y'] }], `start ${i + 1}`);
      assert.equal(got['agentHost.defaultAgent'], 'Mine', 'the chosen default stays');
      assert.equal(got['editor.fontSize'], 15);
    }
    // A fresh machine: the demo agent becomes the default.
    fs.rmSync(machine);
    assert.equal(run(demo).status, 0);
    assert.deepEqual(JSON.parse(fs.readFileSync(machine, 'utf8')), { 'agentHost.agents': [demo], 'agentHost.defaultAgent': demo.name });
    // An unreadable file is kept aside, never lost.
    fs.writeFileSync(machine, '{ not json');
    const r = run(demo);
    assert.equal(r.status, 0);
    assert.match(r.stderr, /not valid JSON.*kept as/);
    const kept = fs.readdirSync(path.join(dir, 'Machine')).filter((f) => f.startsWith('settings.json.unreadable-'));
    assert.equal(kept.length, 1);
    assert.equal(fs.readFileSync(path.join(dir, 'Machine', kept[0]!), 'utf8'), '{ not json');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("npm start's demo model greets with a write into the demo workspace's real path", async () => {
  assert.ok(agentById('opencode')?.installed(), 'opencode must be installed: scripts/setup-agents.sh opencode');
  const dir = scratchDir('demo-greeting');
  const workspace = path.join(dir, 'demo-workspace');
  fs.mkdirSync(workspace);
  const pids = path.join(dir, 'agent', 'pids');
  try {
    const { ANTHROPIC_API_KEY: _, ...env } = process.env;
    const r = spawnSync('bash', [path.join(repoRoot, 'scripts', 'lib', 'demo-agent.sh')], {
      encoding: 'utf8',
      env: { ...env, ROOT: repoRoot, DEMO_SCRATCH: path.join(dir, 'agent'), DEMO_WORKSPACE: workspace },
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const url = /\{"url":"([^"]+)"\}/.exec(fs.readFileSync(path.join(dir, 'agent', 'model-server.log'), 'utf8'))?.[1];
    assert.ok(url, 'the demo model printed no URL');
    const tools = [{ type: 'function', function: { name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } } }];
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }], tools }) });
    const text = ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    assert.ok(text.includes(`SCENARIO: write {"path": ${JSON.stringify(path.join(workspace, 'hello.txt'))}, "content": "hi"}`), text);
  } finally {
    for (const pid of fs.existsSync(pids) ? fs.readFileSync(pids, 'utf8').split('\n').filter(Boolean) : []) {
      try {
        process.kill(Number(pid));
      } catch {
        /* gone */
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('PORT= picks the port of npm start, checked before anything is set up', async () => {
  const start = (port: string) => spawnSync('bash', [path.join(repoRoot, 'scripts', 'start.sh')], { encoding: 'utf8', env: { ...process.env, PORT: port }, timeout: 30_000 });
  const bad = start('80a');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /PORT must be a number \(got '80a'\)/);
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = String((server.address() as net.AddressInfo).port);
    const taken = await new Promise<ReturnType<typeof start>>((resolve) => setImmediate(() => resolve(start(port))));
    assert.equal(taken.status, 1);
    assert.match(taken.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use: stop what runs there or use PORT=<other> npm start`));
  } finally {
    server.close();
  }
});
