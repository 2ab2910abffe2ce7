#!/usr/bin/env node
// Builds the bundled ACP registry snapshot (resources/acp-registry/registry.json) from a folder of agent
// entries, one `<id>.json` each (names starting with "_" — the schemas — are skipped), in the shape the
// registry's own build produces: {version, agents: [...], extensions: []}, agents sorted by id.
//
//   node scripts/build-registry-snapshot.mjs <dir> [out]
//   ACP_REGISTRY_SOURCE=<dir> node --test out/test/unit/registry.test.js   # the snapshot is an exact copy
//
// The folder is a developer's copy (CI has none); the JSON it writes is committed.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const [dir, out = path.join(ROOT, 'resources', 'acp-registry', 'registry.json')] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node scripts/build-registry-snapshot.mjs <dir> [out]');
  process.exit(2);
}

const agents = [];
for (const name of readdirSync(dir).sort()) {
  if (!name.endsWith('.json') || name.startsWith('_')) continue;
  let entry;
  try {
    entry = JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
  } catch (e) {
    console.error(`${name}: not JSON (${e.message})`);
    process.exit(1);
  }
  if (typeof entry?.id !== 'string' || typeof entry?.version !== 'string') {
    console.error(`${name}: no "id" or "version"`);
    process.exit(1);
  }
  agents.push(entry);
}
agents.sort((a, b) => a.id.localeCompare(b.id));
const ids = agents.map((a) => a.id);
const dup = ids.find((id, i) => ids.indexOf(id) !== i);
if (dup) {
  console.error(`two entries with id "${dup}"`);
  process.exit(1);
}
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ version: '1.0.0', agents, extensions: [] }, null, 2)}\n`);
console.log(`${path.relative(process.cwd(), out)}: ${agents.length} agents (${ids.join(', ')})`);
