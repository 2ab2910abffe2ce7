#!/usr/bin/env node
// What a process kept between two heap snapshots of it (V8 .heapsnapshot, e.g. chatSoak's SOAK_SNAPSHOTS): the objects
// alive in the second and not in the first (node ids are stable within one process), summed by constructor, then for
// the largest groups the retainer chains of a few of them, so the holder can be named.
//   node bench/heapDiff.mjs host-100.heapsnapshot host-400.heapsnapshot [top=25] [paths=3]
import * as fs from 'node:fs';

function load(file) {
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  const m = s.snapshot.meta;
  const nf = m.node_fields.length;
  const ef = m.edge_fields.length;
  const types = m.node_types[0];
  const edgeTypes = m.edge_types[0];
  const at = (f) => m.node_fields.indexOf(f);
  const [T, N, ID, SIZE, EC] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(at);
  const count = s.nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i] + s.nodes[i * nf + EC];
  const node = (i) => ({ type: types[s.nodes[i * nf + T]], name: s.strings[s.nodes[i * nf + N]], id: s.nodes[i * nf + ID], size: s.nodes[i * nf + SIZE] });
  // Retainers: for each node, the (node, edge) pairs pointing at it; weak edges left out.
  const retainers = Array.from({ length: count }, () => []);
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e++) {
      const type = edgeTypes[s.edges[e * ef]];
      if (type === 'weak') continue;
      const to = s.edges[e * ef + 2] / nf;
      const nameOrIndex = s.edges[e * ef + 1];
      retainers[to].push([i, type === 'element' || type === 'hidden' ? `[${nameOrIndex}]` : String(s.strings[nameOrIndex])]);
    }
  }
  return { count, node, retainers };
}

const key = (n) => (['object', 'closure', 'native'].includes(n.type) ? `${n.type}:${n.name}` : n.type);
const [fileA, fileB, topArg = '25', pathsArg = '3'] = process.argv.slice(2);
if (!fileA || !fileB) throw new Error('usage: heapDiff.mjs <before.heapsnapshot> <after.heapsnapshot> [top] [paths]');
const a = load(fileA);
const idsA = new Set();
for (let i = 0; i < a.count; i++) idsA.add(a.node(i).id);
const b = load(fileB);
const groups = new Map();
for (let i = 0; i < b.count; i++) {
  const n = b.node(i);
  if (idsA.has(n.id)) continue;
  const g = groups.get(key(n)) ?? { count: 0, size: 0, sample: [] };
  g.count++;
  g.size += n.size;
  if (g.sample.length < 200) g.sample.push(i);
  groups.set(key(n), g);
}
// Totals by constructor in each snapshot: growth, not churn (a full ring replaces its entries with new ones).
const totals = (snap) => {
  const out = new Map();
  for (let i = 0; i < snap.count; i++) {
    const n = snap.node(i);
    const t = out.get(key(n)) ?? { count: 0, size: 0 };
    t.count++;
    t.size += n.size;
    out.set(key(n), t);
  }
  return out;
};
const [ta, tb] = [totals(a), totals(b)];
const growth = [...tb].map(([k, t]) => [k, t.size - (ta.get(k)?.size ?? 0), t.count - (ta.get(k)?.count ?? 0)]).sort((x, y) => y[1] - x[1]);
console.log('== growth by constructor (KiB, count)');
for (const [k, d, c] of growth.slice(0, Number(topArg))) console.log(`${(d / 1024).toFixed(1).padStart(10)} KiB ${String(c).padStart(8)}  ${k.slice(0, 100)}`);
const top = [...groups.entries()].sort((x, y) => y[1].size - x[1].size).slice(0, Number(topArg));
const total = [...groups.values()].reduce((t, g) => t + g.size, 0);
console.log(`new in ${fileB}, alive, not in ${fileA}: ${(total / 2 ** 20).toFixed(2)} MiB in ${[...groups.values()].reduce((t, g) => t + g.count, 0)} objects`);
for (const [k, g] of top) console.log(`${(g.size / 1024).toFixed(1).padStart(10)} KiB ${String(g.count).padStart(8)}  ${k.slice(0, 100)}`);

/** One retainer chain from node i towards a root: the first retainer not already on the chain, at most `depth` steps. */
function chainIn(snap, i, depth = 14) {
  const seen = new Set([i]);
  const parts = [];
  for (let d = 0; d < depth; d++) {
    const next = snap.retainers[i].find(([r]) => !seen.has(r));
    if (!next) break;
    const [r, edge] = next;
    const n = snap.node(r);
    parts.push(`${edge} <- ${n.type}:${String(n.name).slice(0, 60)}`);
    seen.add(r);
    i = r;
  }
  return parts.join('  ');
}
const chain = (i, depth) => chainIn(b, i, depth);
for (const [k, g] of top.slice(0, 10)) {
  console.log(`\n== ${k.slice(0, 100)}`);
  // Spread the samples over the group (the first ones made are often the oldest).
  for (let j = 0; j < Number(pathsArg); j++) {
    const i = g.sample[Math.floor((j * g.sample.length) / Number(pathsArg))];
    const n = b.node(i);
    console.log(`  ${n.size} B ${String(n.name).slice(0, 50).replaceAll('\n', ' ')}: ${chain(i)}`);
  }
}

// What grew: every string's size summed by its retainer chain (indices and keys folded) in both snapshots, the largest differences first.
function holders(snap) {
  const out = new Map();
  for (let i = 0; i < snap.count; i++) {
    const n = snap.node(i);
    if (!n.type.includes('string')) continue;
    const c = chainIn(snap, i, 12);
    // The first object of a class of its own on the chain names the holder (plain objects, arrays and scopes do not).
    const owner = /(?:<- object:(?!Object\b|Array\b|system\b|Map\b|Set\b)([\w$ /]+?)(?:\s\s|$))/.exec(c)?.[1];
    const k = owner ? `${owner} (${/[\w.$]+ <- object:[\w$]+/.exec(c.slice(c.indexOf(`object:${owner}`) - 60))?.[0] ?? ''})` : c.replace(/\[\d+\]|\b\d+\b/g, '[n]').slice(0, 200);
    out.set(k, (out.get(k) ?? 0) + n.size);
  }
  return out;
}
const [ha, hb] = [holders(a), holders(b)];
const grown = [...new Set([...ha.keys(), ...hb.keys()])].map((k) => [k, (hb.get(k) ?? 0) - (ha.get(k) ?? 0), hb.get(k) ?? 0]);
console.log('\n== strings by holder: growth (KiB), size in the second (KiB)');
for (const [k, d, size] of grown.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, 20))
  console.log(`${(d / 1024).toFixed(1).padStart(10)} ${(size / 1024).toFixed(1).padStart(10)}  ${k.slice(0, 400)}`);
