#!/usr/bin/env node
// Summarises a V8 sampling heap profile taken with the collected objects kept (scan-cpu.ts
// --alloc): the bytes allocated by each function (self), by file and by area, and inclusive
// bytes by function (each sample counted once per distinct function on its stack). Allocation
// volume is what the young-generation collections cost, so this says where the GC time comes from.
//   node scripts/alloc-profile-summary.mjs <file.heapprofile> [rows=30] [messages]
import { readFileSync } from 'node:fs';
import { areaOf, fileOf } from './profile-areas.mjs';

const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const rows = Number(process.argv[3] ?? 30);
const messages = Number(process.argv[4] ?? 0);
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);

// Every sample's size, by the node it was taken at.
const bytesAt = new Map();
for (const s of prof.samples) add(bytesAt, s.nodeId, s.size);
const fn = new Map(), file = new Map(), area = new Map(), incl = new Map();
let total = 0;
// An explicit stack: a deep call tree must not overflow this script's own.
const stack = [{ node: prof.head, path: [] }];
while (stack.length > 0) {
  const { node, path } = stack.pop();
  const cf = node.callFrame;
  const f = fileOf(cf.url) || '(native)';
  const name = `${cf.functionName || '(anonymous)'} ${f}:${cf.lineNumber + 1}`;
  const here = [...path, name];
  const b = bytesAt.get(node.id) ?? 0;
  if (b > 0) {
    total += b;
    add(fn, name, b);
    add(file, f, b);
    add(area, areaOf(f), b);
    for (const n of new Set(here)) add(incl, n, b);
  }
  for (const c of node.children ?? []) stack.push({ node: c, path: here });
}

const mib = (b) => (b / 1048576).toFixed(1);
const show = (title, m) => {
  console.log(`\n${title}`);
  for (const [k, b] of [...m].sort((x, y) => y[1] - x[1]).slice(0, rows)) {
    console.log(`${((100 * b) / total).toFixed(1).padStart(5)} % ${mib(b).padStart(8)} MiB${messages ? ` ${(b / messages / 1024).toFixed(1).padStart(7)} KiB/msg` : ''}  ${k}`);
  }
};
console.log(`allocated ${mib(total)} MiB${messages ? ` (${(total / messages / 1024).toFixed(0)} KiB per message)` : ''}`);
show('by area (self)', area);
show('by file (self)', file);
show('by function (self)', fn);
show('by function (inclusive)', incl);
