#!/usr/bin/env node
// Activation in a real VS Code (code-server + Chromium). Two views of it per window:
// - what VS Code shows users ("Developer: Show Running Extensions": "Activation: N ms"), which counts from
//   the start of loading and so includes waiting for an extension host busy with every extension starting;
// - our own part, from the extension host's performance marks: requiring the bundle, calling activate().
// Beside the extension, a probe extension that does nothing on the same event (`onStartupFinished`) shows
// the floor this VS Code and machine put under any extension; its one command writes those marks to a file.
// The extension is the production build installed from its .vsix, as a user's, with an agent configured and
// none started; its log says whether the IDE tools' socket was opened.
//
//   node bench/activation.mjs [--write] [--baseline <other.vsix> [--baseline-label <text>]]
//
// RUNS rounds (default 5) after one warm-up window; with --baseline each round opens a window with that
// package, then one with this tree's, so both see the same machine. --write appends the table to
// bench/RESULTS.md. Needs npm run build and scripts/setup-vscode.sh.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withWorkbench, statusBarItem, runCommand, agentHostLog } = require(path.join(root, 'out/test/vscode/runner.js'));

const RUNS = Number(process.env.RUNS ?? 5);
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const write = process.argv.includes('--write');
const baseline = arg('--baseline');

fs.mkdirSync(path.join(root, '.scratch'), { recursive: true });
const scratch = fs.mkdtempSync(path.join(root, '.scratch', 'activation-bench-'));
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
const packages = [
  ...(baseline ? [{ label: arg('--baseline-label') ?? path.basename(baseline), vsix: path.resolve(baseline) }] : []),
  { label: `this tree (${head})`, vsix: path.join(scratch, 'agent-host.vsix') },
];
// The package step rebuilds dist/ for production; the development build is restored afterwards.
const pack = spawnSync('npm', ['run', '--silent', 'package', '--', '--out', packages.at(-1).vsix], { cwd: root, stdio: 'inherit' });
const rebuild = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
if (pack.status !== 0 || rebuild.status !== 0) throw new Error('npm run package / npm run build failed');

// The floor probe: onStartupFinished, a status bar item, nothing else. Its one command writes the extension
// host's performance marks (VS Code's own, shared by every extension in that process) to a file: loading
// each extension's code and calling its activate(), apart from everything else the host does meanwhile.
const probeDir = path.join(scratch, 'probe');
const probe = path.join(scratch, 'probe.vsix');
const marksFile = path.join(scratch, 'marks.json');
fs.mkdirSync(probeDir);
fs.writeFileSync(
  path.join(probeDir, 'package.json'),
  JSON.stringify({
    name: 'activation-floor',
    displayName: 'Activation Floor Probe',
    description: 'Does nothing: the activation floor',
    publisher: 'probe',
    version: '0.0.1',
    license: 'MIT',
    repository: { type: 'git', url: 'https://example.invalid/probe.git' },
    engines: { vscode: '^1.99.0' },
    main: './main.js',
    activationEvents: ['onStartupFinished'],
    contributes: { commands: [{ command: 'probe.marks', title: 'Probe: Write Extension Host Marks' }] },
  }),
);
fs.writeFileSync(
  path.join(probeDir, 'main.js'),
  `const vscode = require('vscode');
const fs = require('fs');
exports.activate = (context) => {
  const item = vscode.window.createStatusBarItem('probe.item', vscode.StatusBarAlignment.Left, 1);
  item.text = 'probe';
  item.show();
  context.subscriptions.push(item, vscode.commands.registerCommand('probe.marks', () => {
    fs.writeFileSync(process.env.ACTIVATION_PROBE_OUT, JSON.stringify(globalThis.MonacoPerformanceMarks.getMarks()));
  }));
};
`,
);
fs.writeFileSync(path.join(probeDir, 'README.md'), '# probe\n');
fs.writeFileSync(path.join(probeDir, 'LICENSE'), 'MIT\n');
const vsce = spawnSync(process.execPath, [path.join(root, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--out', probe], {
  cwd: probeDir,
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (vsce.status !== 0) throw new Error('packaging the floor probe failed');

const agent = { name: 'smoke-agent', command: process.execPath, args: [path.join(root, 'out/test/vscode/fixtures/smokeAgent.js')], env: {} };
const ID = 'agent-host.agent-host';
const PROBE_ID = 'probe.activation-floor';

/** From the extension host's marks: loading `id`'s code (require) and its activate() call, in ms. */
function phases(marks, id) {
  const at = (name) => marks.find((m) => m.name === `code/extHost/${name}/${id}`)?.startTime;
  return { load: at('didLoadExtensionCode') - at('willLoadExtensionCode'), activate: at('didActivateExtension') - at('willActivateExtension') };
}

let windows = 0;
async function once(vsix) {
  const workspace = path.join(scratch, `ws-${windows++}`);
  fs.cpSync(path.join(root, 'test/fixtures/sample-workspace'), workspace, { recursive: true });
  return withWorkbench(
    {
      vsix: [vsix, probe],
      workspace,
      userSettings: { 'agentHost.agents': [agent], 'agentHost.defaultAgent': agent.name },
      env: { ACTIVATION_PROBE_OUT: marksFile },
      timeoutMs: 180_000,
      // The running extensions' list renders only the rows in view: tall enough for all of them.
      viewport: { width: 1400, height: 4000 },
    },
    async (page, info) => {
      await statusBarItem(page, 'agentHost.status', 60_000);
      await statusBarItem(page, 'probe.item', 60_000);
      fs.rmSync(marksFile, { force: true });
      await runCommand(page, 'Probe: Write Extension Host Marks');
      for (let t = 0; !fs.existsSync(marksFile); t++) {
        if (t > 100) throw new Error('the probe wrote no marks');
        await page.waitForTimeout(100);
      }
      const marks = JSON.parse(fs.readFileSync(marksFile, 'utf8'));
      await runCommand(page, 'Developer: Show Running Extensions');
      const shown = async (name) => {
        const time = page.locator('.runtime-extensions-editor .extension', { hasText: name }).first().locator('.activation-time');
        await time.filter({ hasText: /\d+\s*ms/ }).waitFor({ timeout: 30_000 });
        return Number(/(\d+)\s*ms/.exec((await time.textContent()) ?? '')[1]);
      };
      const log = agentHostLog(info.scratch);
      return {
        shown: await shown('Atrium'),
        probeShown: await shown('Activation Floor Probe'),
        ours: phases(marks, ID),
        probe: phases(marks, PROBE_ID),
        socket: /IDE tools served to agents on/.test(log),
      };
    },
  );
}

const runs = packages.map(() => []);
try {
  await once(packages.at(-1).vsix); // warm-up: the first window after packaging is slow for everyone
  for (let i = 0; i < RUNS; i++) {
    for (const [p, pkg] of packages.entries()) {
      const r = await once(pkg.vsix);
      runs[p].push(r);
      console.log(
        `round ${i + 1}, ${pkg.label}: shown ${r.shown} ms (load ${r.ours.load} + activate ${r.ours.activate}; IDE tools socket open: ${r.socket ? 'yes' : 'no'}); ` +
          `floor probe shown ${r.probeShown} ms (load ${r.probe.load} + activate ${r.probe.activate})`,
      );
    }
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const lines = [];
for (const [p, pkg] of packages.entries()) {
  const rs = runs[p];
  const m = (f) => median(rs.map(f));
  const socket = rs.every((r) => r.socket) ? 'always' : rs.some((r) => r.socket) ? 'sometimes' : 'never';
  console.log(
    `${pkg.label}: shown ${m((r) => r.shown)} ms, own load ${m((r) => r.ours.load)} ms + activate() ${m((r) => r.ours.activate)} ms; ` +
      `floor probe shown ${m((r) => r.probeShown)} ms; IDE tools socket open after activation: ${socket} (medians of ${rs.length} windows)`,
  );
  lines.push(
    '',
    `${pkg.label}:`,
    '',
    '| round | shown ms | load ms | activate() ms | IDE tools socket open | probe shown ms | probe load + activate() ms |',
    '|---|---|---|---|---|---|---|',
    ...rs.map((r, i) => `| ${i + 1} | ${r.shown} | ${r.ours.load} | ${r.ours.activate} | ${r.socket ? 'yes' : 'no'} | ${r.probeShown} | ${r.probe.load} + ${r.probe.activate} |`),
    `| median | **${m((r) => r.shown)}** | **${m((r) => r.ours.load)}** | **${m((r) => r.ours.activate)}** | | ${m((r) => r.probeShown)} | ${m((r) => r.probe.load)} + ${m((r) => r.probe.activate)} |`,
  );
}

if (write) {
  const section = [
    '',
    '## Activation in a real VS Code',
    '',
    `Written by \`node bench/activation.mjs\` on ${new Date().toISOString().slice(0, 10)}.`,
    `Machine: ${machine('; shared with other work while it ran')}.`,
    '',
    'The production build installed from its .vsix into code-server 4.139.1 (VS Code 1.139.1), an agent configured,',
    'none started, beside a probe extension that does nothing on the same event (`onStartupFinished`). "Shown":',
    'what "Developer: Show Running Extensions" says ("Activation: N ms"; it counts from the start of loading, so',
    'it includes waiting for the extension host, busy with every extension starting at once). "Load" and',
    '"activate()": our own part, from the extension host\'s performance marks (requiring the bundle; calling',
    `activate()). One window per row, ${packages.length > 1 ? 'the packages alternating, ' : ''}after a warm-up window.`,
    ...lines,
  ];
  fs.appendFileSync(path.join(root, 'bench/RESULTS.md'), `${section.join('\n')}\n`);
}
