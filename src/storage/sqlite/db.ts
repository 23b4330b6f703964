// One SQLite database file shared by every embedded store and every worker process.
//
// Durability: the file is in WAL mode with synchronous=FULL, so each COMMIT appends to the WAL
// and fsyncs it before better-sqlite3 returns; a write that resolved survives a crash of the
// process *and* of the machine. synchronous=NORMAL would skip that fsync (WAL is only synced at
// checkpoints), which survives a process crash but may roll back the last commits on power loss;
// that breaks "durable before a learn reports success", so it is opt-in (`synchronous: normal`).
//
// Several processes: WAL lets readers proceed while one process writes; writers take the lock
// with BEGIN IMMEDIATE (no read-then-upgrade deadlock) and wait up to `busy_timeout` for it.
// better-sqlite3 is synchronous, so that wait blocks the caller's event loop; write transactions
// here are a few milliseconds long, which keeps the wait short in practice.

import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreError } from '../types.js';

export type SqliteDatabase = Database.Database;

/** How long a writer waits for another process's lock by default; longer stalls a scan. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export interface SqliteOptions {
  path: string;
  busyTimeoutMs?: number;
  synchronous?: 'full' | 'normal';
}

// Codes (and their extended forms, e.g. SQLITE_IOERR_FSYNC) that mean "the database is there but
// cannot serve now", as opposed to a bug or bad data.
const UNAVAILABLE_PREFIXES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_PROTOCOL'];

/** Turns a better-sqlite3 error into a StoreError; StoreErrors pass through. */
export function sqliteError(err: unknown, what: string): StoreError {
  if (err instanceof StoreError) return err;
  const code = (err as { code?: unknown }).code;
  const unavailable = typeof code === 'string' && UNAVAILABLE_PREFIXES.some((p) => code.startsWith(p));
  const msg = err instanceof Error ? err.message : String(err);
  return new StoreError(unavailable ? 'STORE_UNAVAILABLE' : 'STORE_FAILED', `sqlite ${what}: ${msg}`, { cause: err });
}

/** Runs a synchronous SQLite call, turning its errors into StoreErrors. */
export function guard<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw sqliteError(err, what);
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bayes_scopes (
  id INTEGER PRIMARY KEY,
  classifier TEXT NOT NULL,
  user TEXT NOT NULL,
  learns_spam INTEGER NOT NULL DEFAULT 0,
  learns_ham INTEGER NOT NULL DEFAULT 0,
  tokens_spam INTEGER NOT NULL DEFAULT 0,
  tokens_ham INTEGER NOT NULL DEFAULT 0,
  revision INTEGER NOT NULL DEFAULT 0,
  UNIQUE (classifier, user)
);
CREATE TABLE IF NOT EXISTS bayes_tokens (
  scope INTEGER NOT NULL,
  token INTEGER NOT NULL,
  spam INTEGER NOT NULL DEFAULT 0,
  ham INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, token)
) WITHOUT ROWID;
-- One row per learn or unlearn (its scope revision): the message's distinct tokens, 8 bytes each,
-- and the classes they moved to and from (1 spam, 2 ham, 0 none). Readers that hold the counts
-- in memory replay it (bayes-memory.ts); the learn that writes a row prunes the old ones.
CREATE TABLE IF NOT EXISTS bayes_changes (
  scope INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  add_cls INTEGER NOT NULL,
  sub_cls INTEGER NOT NULL,
  tokens BLOB NOT NULL,
  PRIMARY KEY (scope, revision)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bayes_learned (
  scope INTEGER NOT NULL,
  digest TEXT NOT NULL,
  cls TEXT NOT NULL,
  PRIMARY KEY (scope, digest)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fuzzy_digests (
  digest TEXT NOT NULL,
  flag INTEGER NOT NULL,
  value INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  expires INTEGER NOT NULL,
  PRIMARY KEY (digest, flag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fuzzy_digests_expires ON fuzzy_digests (expires);
CREATE TABLE IF NOT EXISTS fuzzy_shingles (
  slot INTEGER NOT NULL,
  value INTEGER NOT NULL,
  digest TEXT NOT NULL,
  PRIMARY KEY (slot, value)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fuzzy_shingles_digest ON fuzzy_shingles (digest);
CREATE TABLE IF NOT EXISTS history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  row TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kv (
  key TEXT PRIMARY KEY,
  value BLOB,
  is_hash INTEGER NOT NULL DEFAULT 0,
  expires INTEGER
);
CREATE INDEX IF NOT EXISTS kv_expires ON kv (expires) WHERE expires IS NOT NULL;
CREATE TABLE IF NOT EXISTS kv_hash (
  key TEXT NOT NULL,
  field TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (key, field)
) WITHOUT ROWID;
`;

interface Shared {
  db: SqliteDatabase;
  refs: number;
}

/**
 * SQLite's page cache per connection, KiB (its default is 2 000). The hot pages of every table
 * here are the B-trees' interior ones, a few hundred KiB for a development-split Bayes; the rest
 * reads from the OS's file cache, which all processes share. With the default, 3 250 learns
 * through the controller grew its malloc heap by 9–11 MiB that it kept; with 512 KiB by 0.3–4
 * (docs/tuning.md, "SQLite's page cache").
 */
const PAGE_CACHE_KIB = 512;

// One connection per (file, synchronous mode) per process: the stores of one process share it,
// and it closes with the last of them.
const open = new Map<string, Shared>();

/** Opens (or shares) the database at `path`, creating the file, its directory and the schema. */
export function acquireDatabase(opts: SqliteOptions): SqliteDatabase {
  const id = `${opts.synchronous ?? 'full'}:${opts.path}`;
  const known = open.get(id);
  if (known) {
    known.refs++;
    return known.db;
  }
  const db = guard('open', () => {
    mkdirSync(dirname(opts.path), { recursive: true });
    const d = new Database(opts.path, { timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    d.pragma(`busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS)}`);
    d.pragma('journal_mode = WAL');
    d.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    d.pragma(`synchronous = ${opts.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    d.transaction(() => d.exec(SCHEMA)).immediate();
    return d;
  });
  open.set(id, { db, refs: 1 });
  return db;
}

export function releaseDatabase(db: SqliteDatabase): void {
  for (const [id, s] of open) {
    if (s.db !== db) continue;
    if (--s.refs > 0) return;
    open.delete(id);
    guard('close', () => db.close());
    return;
  }
}
