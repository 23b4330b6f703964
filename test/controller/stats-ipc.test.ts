// Statistics over real node IPC: a forked process counts scans and logs an error; the hub in
// this process aggregates them; the child reads the aggregate back. Also the pure parts:
// delta merging, reset semantics, the scan-time ring and the graph consolidation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { GraphSeries, GRAPH_ARCHIVES } from '../../src/observability/graph.js';
import { applyDelta, emptyDelta, emptyState, resetCounters, SCAN_TIMES_RING } from '../../src/observability/server-stats.js';
import { StatsHub } from '../../src/observability/stats-hub.js';
import { handleStatsMessage } from '../../src/observability/stats-ipc.js';
import { recordingLogger } from './harness.js';
import { openSqlite } from '../storage/helpers.js';

test('a worker process feeds counters, the error ring and the history over IPC, and reads them back', async () => {
  const { log } = recordingLogger();
  const store = await openSqlite();
  const hub = new StatsHub({ errorElts: 5, log, history: store.stores.history });
  const child = fork(new URL('./ipc-child.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const done = new Promise<{ scanned: number; errors: number }>((resolve, reject) => {
    child.on('message', (m: unknown) => {
      if (handleStatsMessage(hub, m, (reply) => child.send(reply))) return;
      if ((m as { done?: boolean }).done) resolve(m as { scanned: number; errors: number });
    });
    child.on('exit', (code) => (code ? reject(new Error(`child exited ${code}`)) : undefined));
  });
  const fromChild = await done;
  assert.deepEqual(fromChild, { done: true, scanned: 2, errors: 1 }, 'the child sees the aggregate through the IPC view');
  const snap = await hub.snapshot();
  assert.equal(snap.state.scanned, 2);
  assert.deepEqual(snap.state.actions, [1, 0, 0, 0, 0, 1]);
  assert.equal(snap.state.symbols.GTUBE?.hits, 1);
  assert.ok(snap.heapUsed > 0, 'the worker reported its memory');
  const [err] = await hub.errors();
  assert.equal(err?.pid, child.pid);
  assert.equal(err?.type, 'normal');
  assert.equal(err?.module, 'child-module');
  assert.match(err!.message, /failed something/);
  // The rows the worker recorded reached the hub's store in order (it keeps the newest few).
  const rows = await store.stores.history.list();
  assert.deepEqual(rows.map((r) => r['message-id']), ['ipc-69', 'ipc-68', 'ipc-67', 'ipc-66', 'ipc-65']);
  await store.cleanup();
});

test('deltas merge; reset keeps scan times and symbol counters; the scan-time ring wraps', () => {
  const st = emptyState();
  const d = emptyDelta();
  d.scanned = 40;
  d.actions[0] = 40;
  d.scanTimes = Array.from({ length: 40 }, (_, i) => i);
  d.symbols.X = { hits: 3, weight: 6, time: 0 };
  applyDelta(st, d);
  applyDelta(st, d);
  assert.equal(st.scanned, 80);
  assert.equal(st.symbols.X?.hits, 6);
  assert.equal(st.scanTimes.length, SCAN_TIMES_RING);
  assert.ok(st.scanTimes.every((t) => t !== null));
  resetCounters(st);
  assert.equal(st.scanned, 0);
  assert.deepEqual(st.actions, [0, 0, 0, 0, 0, 0]);
  assert.equal(st.symbols.X?.hits, 6);
  assert.ok(st.scanTimes.every((t) => t !== null));
});

test('graph: Rspamd point counts, rates per second, gaps as null, survives a JSON round trip', () => {
  const g = new GraphSeries();
  const now = 1_800_000_000;
  g.add(now - 3600); // up an hour ago (idle)
  g.add(now, [60, 0, 0, 0, 0, 120]);
  const expected = { day: 480, week: 404, month: 480, year: 487 } as const;
  for (const [type, points] of Object.entries(expected) as Array<[keyof typeof GRAPH_ARCHIVES, number]>) {
    const series = g.render(type, now);
    assert.equal(series.length, 6);
    for (const s of series) assert.equal(s.length, points, type);
  }
  const day = g.render('day', now);
  const last = day[0]!.at(-1)!;
  // 60 rejects in the current minute, averaged over a 3-row window: 60/60/3 per second.
  assert.ok(Math.abs(last.y! - 60 / 60 / 3) < 1e-9, String(last.y));
  assert.ok(Math.abs(day[5]!.at(-1)!.y! - 120 / 60 / 3) < 1e-9);
  assert.equal(day[0]![0]!.y, null, 'before the server was up: no data');
  assert.equal(day[0]!.filter((p) => p.y === 0).length, 1, 'the idle window an hour ago is 0, not null');
  const copy = new GraphSeries();
  copy.restore(JSON.parse(JSON.stringify(g.toJSON())));
  assert.deepEqual(copy.render('week', now), g.render('week', now));
});
