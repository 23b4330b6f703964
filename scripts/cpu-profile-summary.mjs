#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof, or scan-cpu.ts --prof): self time by function,
// by file and by area (src/<folder>, src/modules/<module>, npm:<package>, node internals), and
// inclusive time by function (each sample counted once per distinct function on its stack).
//   node scripts/cpu-profile-summary.mjs <file.cpuprofile> [rows=30]
import { readFileSync } from 'node:fs';
import { areaOf, fileOf } from './profile-areas.mjs';

const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const rows = Number(process.argv[3] ?? 30);
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const hits = new Map();
for (const s of prof.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
const total = prof.samples.length;
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);

const fn = new Map(), file = new Map(), area = new Map(), incl = new Map();
for (const [id, c] of hits) {
  const cf = byId.get(id).callFrame;
  // Frames without a script are V8's own buckets ((garbage collector), (idle)) or native calls.
  if (!cf.url) {
    const k = `(${cf.functionName.replace(/^\(|\)$/g, '')})`;
    add(fn, k, c); add(file, k, c); add(area, k, c);
  } else {
    const f = fileOf(cf.url);
    add(fn, `${cf.functionName || '(anonymous)'} ${f}:${cf.lineNumber + 1}`, c);
    add(file, f, c);
    add(area, areaOf(f), c);
  }
  const seen = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) {
    const f = byId.get(x).callFrame;
    if (!f.url) continue;
    const k = `${f.functionName || '(anonymous)'} ${fileOf(f.url)}`;
    if (seen.has(k)) continue;
    seen.add(k);
    add(incl, k, c);
  }
}

function show(title, m) {
  console.log(`\n== ${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
}
console.log(`${total} samples`);
show('self time by function', fn);
show('self time by file', file);
show('self time by area', area);
show('inclusive time by function', incl);
