#!/usr/bin/env node
// The tree's layering, checked over every import in src/ and webview-ui/src/ (type-only imports count too):
// every file sits in a named room; which floor may import which; `vscode` only in the rooms that face the
// editor; nothing the CLI, the MCP bridge or the scripted model runs reaches `vscode`; no import cycles between
// floors; no test for a session's class outside the roots; no source file over the size limit; no terminal
// write in src/cli but through its filter (src/cli/terminal.ts). docs/architecture.md "Layout" states the same rules.
// Exit 1 on any breach. The tree checked is the one this script sits in (its parent folder).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const MAX_LINES = 500;

// Rooms: a path prefix → its floor, and whether its files may import `vscode`. The longest prefix wins; a file in
// no room is a breach.
const ROOMS = [
  // The composition roots, by name: they build the context, pick the adapters and host implementations, may
  // import any floor, and nothing imports them. The extension's is two files (activate; the host services wired
  // to the views' dialogs), the CLI's one.
  ['src/extension.ts', 'root', 'vscode'],
  ['src/hostServices.ts', 'root', 'vscode'],
  ['src/cli/main.ts', 'root'],
  ['src/views/', 'views', 'vscode'],
  ['src/commands/', 'commands', 'vscode'],
  ['src/tasks/', 'tasks'],
  ['src/manager/', 'manager', 'vscode'],
  ['src/host/vscode/', 'host', 'vscode'],
  ['src/host/', 'host'],
  ['src/mcp/', 'host'],
  ['src/cli/', 'cli'],
  // Fan-out runs: one prompt on several agents, each in a git worktree of its own.
  ['src/fanout/', 'fanout'],
  ['src/check/checkHost.ts', 'checkHost'],
  ['src/check/', 'check'],
  ['src/agents/', 'agents'],
  ['src/scriptedModel/', 'scriptedModel'],
  // The sandbox launcher (dist/sandbox.mjs): a Node entry of its own around @anthropic-ai/sandbox-runtime.
  ['src/sandbox/', 'sandbox'],
  ['src/adapters/', 'factory'],
  ['src/acp/', 'acp'],
  ['src/rpc/', 'rpc'],
  ['src/agentService/', 'agentService'],
  ['src/gateway/', 'gateway'],
  ['src/transport/', 'transport'],
  ['src/lifecycle/', 'lifecycle'],
  ['src/session/', 'session'],
  ['src/shared/', 'shared'],
  ['src/core/', 'core'],
  ['webview-ui/src/', 'page'],
].sort((a, b) => b[0].length - a[0].length);

// What each floor may import besides itself. Roots import anything.
const ALLOWED = {
  views: ['manager', 'agents', 'check', 'fanout', 'host', 'session', 'lifecycle', 'shared', 'core'],
  commands: ['views', 'manager', 'agents', 'host', 'tasks', 'session', 'shared', 'core'],
  manager: ['session', 'lifecycle', 'core'],
  host: ['session', 'core'],
  cli: ['agents', 'check', 'tasks', 'fanout', 'session', 'lifecycle', 'core'],
  fanout: ['host', 'session', 'core'],
  // The check runs agents through the host the root lends it (CheckHost); only its host names implementations.
  check: ['agents', 'scriptedModel', 'session', 'core'],
  checkHost: ['check', 'factory', 'rpc', 'host', 'agents', 'session', 'core'],
  agents: ['session', 'core'],
  // The selection tasks' pure parts (prompts, answers, proposals), shared by the editor's commands and the CLI.
  tasks: ['session', 'core'],
  scriptedModel: [],
  sandbox: [],
  // The adapter factory: the one place that picks src/acp or src/rpc for an agent.
  factory: ['acp', 'rpc', 'agentService', 'transport', 'agents', 'session', 'core'],
  // Adapters are siblings: neither imports the other.
  acp: ['session', 'transport', 'core'],
  rpc: ['session', 'transport', 'core'],
  agentService: ['session', 'transport', 'core'],
  // `agent-host serve`: local stdio agents behind ACP's remote transport; only the CLI's root imports it.
  gateway: ['agents', 'session', 'transport', 'core'],
  transport: ['core'],
  lifecycle: ['session', 'core'],
  session: ['core'],
  shared: ['session'],
  core: [],
  page: ['shared'],
};

// Entry points that run in plain Node (dist/cli.js, dist/ideBridge.js, the scripted model's CLI): nothing they
// load, however indirectly, may import `vscode`.
const NODE_ENTRIES = ['src/cli/main.ts', 'src/mcp/ideBridge.ts', 'src/scriptedModel/main.ts', 'src/sandbox/launcher.ts'];

function roomOf(rel) {
  return ROOMS.find(([prefix]) => rel === prefix || (prefix.endsWith('/') && rel.startsWith(prefix)));
}

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name)) out.push(p);
  }
  return out;
}

const files = [...walk(path.join(ROOT, 'src')), ...walk(path.join(ROOT, 'webview-ui', 'src'))];
const problems = [];
const edges = new Map(); // floor -> Map(floor -> one example import)
const fileImports = new Map(); // file -> the source files it imports
const vscodeFiles = new Set(); // files that import `vscode`
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

for (const file of files) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  if (lines > MAX_LINES) problems.push(`${rel}: ${lines} lines (limit ${MAX_LINES}): split it along its concerns`);
  const room = roomOf(rel);
  if (!room) {
    problems.push(`${rel}: in no room; put it in a folder docs/architecture.md "Layout" names (or add the room to scripts/check-layers.mjs)`);
    continue;
  }
  const [, from, vscodeAllowed] = room;
  // Agent text must not drive the user's terminal: the CLI prints only through src/cli/terminal.ts's filter.
  if (rel.startsWith('src/cli/') && rel !== 'src/cli/terminal.ts' && /process\.(?:stdout|stderr)\.write|console\.(?:log|info|warn|error)/.test(text)) {
    problems.push(`${rel}: writes to the terminal directly; print through src/cli/terminal.ts (stdout/stderr), which escapes control characters`);
  }
  if (from !== 'root' && /instanceof\s+(AcpSession|RpcSession)\b/.test(text)) {
    problems.push(`${rel}: tests a session's class; use a capability of the AgentSession interface`);
  }
  const targets = new Set();
  fileImports.set(rel, targets);
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (spec === 'vscode' || spec.startsWith('vscode/')) {
      vscodeFiles.add(rel);
      if (!vscodeAllowed) problems.push(`${rel}: ${from === 'root' ? 'this root' : from} may not import vscode (only the extension's root, views, commands, manager and host/vscode do)`);
      continue;
    }
    if (!spec.startsWith('.')) continue; // node: built-ins and packages
    // Dynamic imports name the compiled file ('./adapters/factory.js'): the source is the .ts beside it.
    const target = path
      .relative(ROOT, path.resolve(path.dirname(file), spec.replace(/\.js$/, '')))
      .split(path.sep)
      .join('/');
    if (!target.startsWith('src/') && !target.startsWith('webview-ui/')) continue;
    const targetFile = target.endsWith('.ts') ? target : `${target}.ts`;
    targets.add(targetFile);
    const to = roomOf(targetFile)?.[1];
    if (to === undefined || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${rel} → ${spec}`);
    // The gateway serves agents from the CLI only: the extension's bundle never loads it.
    if (to === 'gateway' && rel !== 'src/cli/main.ts') problems.push(`${rel}: only the CLI's root (src/cli/main.ts) may import the gateway (${spec})`);
    else if (from === 'root') continue;
    else if (to === 'root') problems.push(`${rel}: imports a composition root (${spec}); receive what you need instead`);
    else if (!(ALLOWED[from] ?? []).includes(to)) problems.push(`${rel}: ${from} may not import ${to} (${spec})`);
  }
}

// What runs outside VS Code never loads it: follow every relative import from each Node entry point.
for (const entry of NODE_ENTRIES) {
  const via = new Map([[entry, undefined]]);
  const queue = [entry];
  while (queue.length) {
    const at = queue.shift();
    if (vscodeFiles.has(at)) {
      const chain = [];
      for (let f = at; f !== undefined; f = via.get(f)) chain.unshift(f);
      problems.push(`${entry} runs in plain Node but reaches vscode: ${chain.join(' → ')}`);
      break;
    }
    for (const next of fileImports.get(at) ?? []) {
      if (!via.has(next)) {
        via.set(next, at);
        queue.push(next);
      }
    }
  }
}

// Cycles between floors (roots excluded: they sit on top).
const graph = [...edges].filter(([f]) => f !== 'root');
const state = new Map();
const stack = [];
function visit(node) {
  state.set(node, 'open');
  stack.push(node);
  for (const [to, example] of edges.get(node) ?? []) {
    if (to === 'root') continue;
    if (state.get(to) === 'open') {
      const cycle = [...stack.slice(stack.indexOf(to)), to];
      problems.push(`import cycle between floors: ${cycle.join(' → ')} (e.g. ${example})`);
    } else if (!state.has(to)) visit(to);
  }
  stack.pop();
  state.set(node, 'done');
}
for (const [node] of graph) if (!state.has(node)) visit(node);

if (problems.length) {
  console.error(`check-layers: ${problems.length} problem(s)`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`check-layers: ${files.length} files, layering holds`);
