// `workers.watchdog_timeout` and `workers.max_heap`: defaults, the off switch, units, and the
// values refused with the key path and what was expected.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';

async function load(yaml: string): Promise<{ cfg?: Awaited<ReturnType<typeof loadConfig>>; issues?: Array<{ path: string; expected: string; found: string; line?: number }> }> {
  const dir = await makeConfDir({ 'mailsift.yaml': yaml });
  try {
    return { cfg: await loadConfig(dir) };
  } catch (err) {
    assert.ok(isConfigError(err), String(err));
    return { issues: [...err.issues] };
  } finally {
    await removeConfDir(dir);
  }
}

test('defaults: a 30 s watchdog and a 2 GiB heap per worker', async () => {
  const { cfg } = await load('');
  assert.equal(cfg!.workers.watchdogTimeout, 30);
  assert.equal(cfg!.workers.maxHeap, 2 * 1024 ** 3);
});

test('units and the off switch', async () => {
  const { cfg } = await load('workers:\n  watchdog_timeout: 2min\n  max_heap: 512M\n');
  assert.equal(cfg!.workers.watchdogTimeout, 120);
  assert.equal(cfg!.workers.maxHeap, 512 * 1024 ** 2);
  const off = await load('workers:\n  watchdog_timeout: 0\n  max_heap: 0\n');
  assert.equal(off.cfg!.workers.watchdogTimeout, 0);
  assert.equal(off.cfg!.workers.maxHeap, 0);
});

test('a watchdog shorter than a few heartbeats, or a heap V8 cannot start in, is refused', async () => {
  const { issues } = await load('workers:\n  watchdog_timeout: 500ms\n  max_heap: 1M\n');
  const byPath = new Map(issues!.map((i) => [i.path, i]));
  const wd = byPath.get('workers.watchdog_timeout');
  assert.ok(wd, JSON.stringify(issues));
  assert.equal(wd.expected, '0 (off) or 2 to 3600 seconds');
  assert.equal(wd.found, '"500ms"');
  assert.equal(wd.line, 2);
  const heap = byPath.get('workers.max_heap');
  assert.ok(heap, JSON.stringify(issues));
  assert.equal(heap.expected, '0 (V8 default) or a size of at least 16M');
  const typo = await load('workers:\n  watchdog_timout: 10s\n');
  assert.match(typo.issues![0]!.expected, /did you mean "watchdog_timeout"/);
});
