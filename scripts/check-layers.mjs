#!/usr/bin/env node
// The tree's layering, checked over every import in src/ and webview-ui/src/ (type-only imports count too):
// which floor may import which, no import cycles between floors, no test for a session's class outside the
// roots, no source file over the size limit, no terminal write in src/cli but through its filter (src/cli/terminal.ts).
// README "Layout" states the same rules. Exit 1 on any breach.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const MAX_LINES = 500;

/** Floor of a source file (repo-relative path). */
function floor(rel) {
  if (rel.startsWith('webview-ui/')) return 'page';
  const parts = rel.split('/');
  if (parts.length === 2) return 'root'; // src/extension.ts, src/adapters.ts, src/hostServices.ts
  if (rel === 'src/cli/main.ts') return 'root';
  const dir = parts[1];
  if (dir === 'host' || dir === 'mcp') return 'host';
  if (dir === 'prompts') return 'commands';
  return dir;
}

// What each floor may import besides itself. Roots import anything.
const ALLOWED = {
  views: ['manager', 'agents', 'host', 'session', 'shared', 'core'],
  commands: ['views', 'manager', 'agents', 'host', 'session', 'shared', 'core'],
  cli: ['agents', 'session', 'model', 'core'],
  agents: ['session', 'model', 'core'],
  model: [],
  manager: ['session', 'core'],
  host: ['session', 'core'],
  acp: ['session', 'transport', 'core'],
  rpc: ['session', 'transport', 'core'],
  transport: ['core'],
  session: ['core'],
  shared: ['session'],
  core: [],
  page: ['shared'],
};

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
const edges = new Map(); // floor -> Set(floor), with one example import each
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

for (const file of files) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  if (lines > MAX_LINES) problems.push(`${rel}: ${lines} lines (limit ${MAX_LINES}): split it along its concerns`);
  const from = floor(rel);
  // Agent text must not drive the user's terminal: the CLI prints only through src/cli/terminal.ts's filter.
  if (rel.startsWith('src/cli/') && rel !== 'src/cli/terminal.ts' && /process\.(?:stdout|stderr)\.write|console\.(?:log|info|warn|error)/.test(text)) {
    problems.push(`${rel}: writes to the terminal directly; print through src/cli/terminal.ts (stdout/stderr), which escapes control characters`);
  }
  if (from !== 'root' && /instanceof\s+(AcpSession|RpcSession)\b/.test(text)) {
    problems.push(`${rel}: tests a session's class; use a capability of the AgentSession interface`);
  }
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    // Dynamic imports name the compiled file ('./adapters.js'): the source is the .ts beside it.
    const target = path
      .relative(ROOT, path.resolve(path.dirname(file), spec.replace(/\.js$/, '')))
      .split(path.sep)
      .join('/');
    if (!target.startsWith('src/') && !target.startsWith('webview-ui/')) continue;
    const to = floor(target.endsWith('.ts') ? target : `${target}.ts`);
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${rel} → ${spec}`);
    if (from === 'root') continue;
    if (to === 'root') problems.push(`${rel}: imports a composition root (${spec}); receive what you need instead`);
    else if (!(ALLOWED[from] ?? []).includes(to)) problems.push(`${rel}: ${from} may not import ${to} (${spec})`);
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
