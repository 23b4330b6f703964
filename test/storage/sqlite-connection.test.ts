// One SQLite connection per (file, synchronous mode) in a process: WAL, a bounded page cache,
// shared by the stores that ask for it and closed with the last of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDatabase, releaseDatabase } from '../../src/storage/sqlite/db.js';

test('a connection is shared per file and mode, in WAL mode with a page cache of 512 KiB, and closes with its last user', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-conn-'));
  try {
    const path = join(dir, 'store.sqlite');
    const a = acquireDatabase({ path });
    const b = acquireDatabase({ path });
    const c = acquireDatabase({ path, synchronous: 'normal' });
    assert.equal(a, b, 'the same file and mode share one connection');
    assert.notEqual(a, c, 'another synchronous mode is a connection of its own');
    for (const db of [a, c]) {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      // Negative: KiB, not pages. SQLite's own default (-2000) kept up to 2 MiB a connection.
      assert.equal(db.pragma('cache_size', { simple: true }), -512);
    }
    releaseDatabase(a);
    assert.equal(b.open, true, 'still held by the second store');
    releaseDatabase(b);
    assert.equal(b.open, false);
    releaseDatabase(c);
    assert.equal(c.open, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
