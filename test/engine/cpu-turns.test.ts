// CpuTurns: ready scans get the CPU oldest first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CpuTurns } from '../../src/engine/cpu-turns.js';

test('waiters that are ready together run oldest first', async () => {
  const turns = new CpuTurns();
  const ran: number[] = [];
  await Promise.all([30, 10, 20].map((order) => turns.wait(order).then(() => ran.push(order))));
  assert.deepEqual(ran, [10, 20, 30]);
});

test('an older waiter arriving later goes before younger ones still waiting', async () => {
  const turns = new CpuTurns();
  const ran: number[] = [];
  const all = [50, 40].map((order) => turns.wait(order).then(() => ran.push(order)));
  // After the first turn (40) is given, an older scan becomes ready.
  await all[1];
  all.push(turns.wait(5).then(() => ran.push(5)));
  await Promise.all(all);
  assert.deepEqual(ran, [40, 5, 50]);
});

test('a lone waiter is not kept waiting', async () => {
  const turns = new CpuTurns();
  for (let i = 0; i < 3; i++) await turns.wait(i);
});
