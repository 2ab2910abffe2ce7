/**
 * `npm start` (scripts/start.sh) writes its demo agent into code-server's Remote (machine) settings: the
 * script's own Node block, run here on a settings file a person edited, keeps their agents, their default and
 * every other setting, and refreshes only the demo entry.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
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
