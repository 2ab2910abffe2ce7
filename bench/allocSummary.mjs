#!/usr/bin/env node
// Where a process allocated (a sampling heap profile, e.g. chatSoak's SOAK_ALLOCATIONS): bytes by function, and by the
// nearest frame of the extension's own bundle (dist/extension.js) above it, so churn can be pinned on our code.
//   node bench/allocSummary.mjs allocations.json [top=25]
import * as fs from 'node:fs';

const [file, topArg = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: allocSummary.mjs <profile.json> [top]');
const { head } = JSON.parse(fs.readFileSync(file, 'utf8'));
const where = (f) => `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
const bySelf = new Map();
const byOurs = new Map();
let total = 0;
const walk = (node, ours) => {
  const here = node.callFrame.url.endsWith('dist/extension.js') ? where(node.callFrame) : ours;
  if (node.selfSize) {
    total += node.selfSize;
    const k = where(node.callFrame);
    bySelf.set(k, (bySelf.get(k) ?? 0) + node.selfSize);
    byOurs.set(here, (byOurs.get(here) ?? 0) + node.selfSize);
  }
  for (const c of node.children) walk(c, here);
};
walk(head, '(not under our code)');
const show = (title, map) => {
  console.log(`\n== ${title}`);
  for (const [k, v] of [...map].sort((x, y) => y[1] - x[1]).slice(0, Number(topArg))) console.log(`${(v / 2 ** 20).toFixed(1).padStart(9)} MiB ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${(total / 2 ** 20).toFixed(1)} MiB allocated (sampled estimate)`);
show('by allocating function', bySelf);
show('by the nearest frame of dist/extension.js above it', byOurs);
