// A history flush never sleeps in the SQLite driver while another process holds the write lock:
// the scan worker's event loop stays free, and the rows are written once the lock is released.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqlite } from './helpers.js';
import { DEFAULT_SQLITE_FILE } from '../../src/storage/index.js';

test('history: a write lock held elsewhere defers the flush instead of blocking the event loop', async () => {
  const s = await openSqlite();
  const other = new Database(join(s.dir, DEFAULT_SQLITE_FILE));
  try {
    other.exec('BEGIN IMMEDIATE');
    const pushed = [1, 2, 3].map((i) => s.stores.history.push({ unix_time: i, 'message-id': `locked-${i}` }));
    // While the lock is held, timers keep firing on time: the longest gap between 5 ms ticks
    // stays far below the 5 s busy timeout a blocking flush would sleep through.
    let last = performance.now();
    let longest = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 5);
    await new Promise((r) => setTimeout(r, 300));
    clearInterval(tick);
    assert.ok(longest < 150, `event loop blocked for ${longest.toFixed(0)} ms`);
    assert.deepEqual(other.prepare('SELECT count(*) AS n FROM history').get(), { n: 0 }, 'nothing written while the lock is held');
    other.exec('COMMIT');
    await Promise.all(pushed);
    const rows = await s.stores.history.list();
    assert.deepEqual(rows.map((r) => r['message-id']).sort(), ['locked-1', 'locked-2', 'locked-3']);
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await s.cleanup();
  }
});
