// withDeadline: the one way the engine, modules, controller and supervisor wait with a time limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEADLINE_PASSED, withDeadline } from '../../src/plugin-api/index.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const after = <T>(ms: number, v: T) => new Promise<T>((r) => setTimeout(r, ms, v));

test('work that settles in time gives its value and leaves no timer behind', async () => {
  const before = timers();
  assert.equal(await withDeadline(after(5, 'done'), 5_000), 'done');
  assert.equal(timers(), before);
});

test('work slower than the limit gives DEADLINE_PASSED at the limit', async () => {
  const t0 = performance.now();
  assert.equal(await withDeadline(after(500, 'late'), 30), DEADLINE_PASSED);
  const took = performance.now() - t0;
  assert.ok(took >= 25 && took < 1_000, `waited ${took} ms`);
});

test('a rejection within the limit is passed on, and its timer cleared', async () => {
  const before = timers();
  await assert.rejects(withDeadline(Promise.reject(new Error('boom')), 5_000), /boom/);
  assert.equal(timers(), before);
});

test('a limit already spent (zero or negative) still lets settled work win the race', async () => {
  assert.equal(await withDeadline(Promise.resolve(1), -5), 1);
  assert.equal(await withDeadline(new Promise<number>(() => {}), 0), DEADLINE_PASSED);
});
