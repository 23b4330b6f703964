// KvStore on SQLite. Plain values and hashes share the `kv` table (is_hash marks a hash, whose
// fields live in kv_hash); an expired key reads as missing and is deleted by the next write that
// touches it or by keys().

import type { KvStore } from '../types.js';
import { StoreError } from '../types.js';
import { acquireDatabase, guard, releaseDatabase, type SqliteDatabase, type SqliteOptions } from './db.js';

/** keys() returns at most this many keys unless asked for fewer; it protects callers from a huge listing. */
export const KV_KEYS_LIMIT = 10_000;

interface KvRow {
  value: Buffer | null;
  is_hash: number;
  expires: number | null;
}

/** The smallest string greater than every string starting with `prefix` (UTF-8 order = code point order). */
function prefixEnd(prefix: string): string | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const c = prefix.charCodeAt(i);
    if (c < 0xd7ff) return prefix.slice(0, i) + String.fromCharCode(c + 1);
  }
  return undefined;
}

export class SqliteKvStore implements KvStore {
  readonly #db: SqliteDatabase;
  readonly #stmt;

  constructor(opts: SqliteOptions) {
    this.#db = acquireDatabase(opts);
    const db = this.#db;
    this.#stmt = guard('prepare', () => ({
      get: db.prepare<[string], KvRow>('SELECT value, is_hash, expires FROM kv WHERE key = ?'),
      set: db.prepare<[string, Buffer, number | null]>(
        'INSERT INTO kv (key, value, is_hash, expires) VALUES (?, ?, 0, ?) ON CONFLICT DO UPDATE SET value = excluded.value, is_hash = 0, expires = excluded.expires',
      ),
      del: db.prepare<[string]>('DELETE FROM kv WHERE key = ?'),
      delFields: db.prepare<[string]>('DELETE FROM kv_hash WHERE key = ?'),
      setHash: db.prepare<[string, number | null]>(
        'INSERT INTO kv (key, value, is_hash, expires) VALUES (?, NULL, 1, ?) ON CONFLICT DO UPDATE SET expires = coalesce(excluded.expires, expires)',
      ),
      setExpires: db.prepare<[number | null, string]>('UPDATE kv SET expires = ? WHERE key = ?'),
      hincr: db.prepare<[string, string, number], { value: number }>(
        'INSERT INTO kv_hash (key, field, value) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET value = value + excluded.value RETURNING value',
      ),
      hgetall: db.prepare<[string], { field: string; value: number }>('SELECT field, value FROM kv_hash WHERE key = ?'),
      keys: db.prepare<[string, string, number, number], { key: string }>(
        'SELECT key FROM kv WHERE key >= ? AND key < ? AND (expires IS NULL OR expires > ?) ORDER BY key LIMIT ?',
      ),
      keysAll: db.prepare<[string, number, number], { key: string }>(
        'SELECT key FROM kv WHERE key >= ? AND (expires IS NULL OR expires > ?) ORDER BY key LIMIT ?',
      ),
      expiredKeys: db.prepare<[number]>('DELETE FROM kv_hash WHERE key IN (SELECT key FROM kv WHERE expires <= ?)'),
      expired: db.prepare<[number]>('DELETE FROM kv WHERE expires <= ?'),
    }));
  }

  /** The live row for `key`, deleting it first when it has expired (inside a write transaction). */
  #live(key: string, now: number, purge: boolean): KvRow | undefined {
    const row = this.#stmt.get.get(key);
    if (!row) return undefined;
    if (row.expires !== null && row.expires <= now) {
      if (purge) this.#drop(key);
      return undefined;
    }
    return row;
  }

  #drop(key: string): number {
    this.#stmt.delFields.run(key);
    return this.#stmt.del.run(key).changes;
  }

  async get(key: string): Promise<Buffer | undefined> {
    return guard('get', () => {
      const row = this.#live(key, Date.now(), false);
      if (!row) return undefined;
      if (row.is_hash) throw new StoreError('STORE_FAILED', `kv get: ${key} holds a hash`);
      return row.value ?? Buffer.alloc(0);
    });
  }

  async set(key: string, value: Buffer | string, ttlMs?: number): Promise<void> {
    const buf = typeof value === 'string' ? Buffer.from(value) : value;
    const expires = ttlMs ? Date.now() + ttlMs : null;
    guard('set', () =>
      this.#db
        .transaction(() => {
          this.#stmt.delFields.run(key);
          this.#stmt.set.run(key, buf, expires);
        })
        .immediate(),
    );
  }

  async del(key: string): Promise<boolean> {
    return guard('del', () =>
      this.#db
        .transaction(() => {
          const live = this.#live(key, Date.now(), true) !== undefined;
          this.#drop(key);
          return live;
        })
        .immediate(),
    );
  }

  async incrBy(key: string, delta: number, ttlMs?: number): Promise<number> {
    return guard('incrBy', () =>
      this.#db
        .transaction(() => {
          const now = Date.now();
          const row = this.#live(key, now, true);
          if (row?.is_hash) throw new StoreError('STORE_FAILED', `kv incrBy: ${key} holds a hash`);
          const cur = row?.value ? Number(row.value.toString()) : 0;
          if (!Number.isSafeInteger(cur)) throw new StoreError('STORE_FAILED', `kv incrBy: ${key} is not an integer`);
          const next = cur + delta;
          const expires = ttlMs ? now + ttlMs : (row?.expires ?? null);
          this.#stmt.set.run(key, Buffer.from(String(next)), expires);
          return next;
        })
        .immediate(),
    );
  }

  async hincrBy(key: string, fields: Record<string, number>, ttlMs?: number): Promise<Record<string, number>> {
    return guard('hincrBy', () =>
      this.#db
        .transaction(() => {
          const now = Date.now();
          const row = this.#live(key, now, true);
          if (row && !row.is_hash) throw new StoreError('STORE_FAILED', `kv hincrBy: ${key} is not a hash`);
          this.#stmt.setHash.run(key, ttlMs ? now + ttlMs : null);
          const out: Record<string, number> = {};
          for (const [f, d] of Object.entries(fields)) out[f] = Number(this.#stmt.hincr.get(key, f, d)?.value);
          return out;
        })
        .immediate(),
    );
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return guard('hgetall', () => {
      const row = this.#live(key, Date.now(), false);
      if (!row) return {};
      if (!row.is_hash) throw new StoreError('STORE_FAILED', `kv hgetall: ${key} is not a hash`);
      const out: Record<string, string> = {};
      for (const r of this.#stmt.hgetall.all(key)) out[r.field] = String(r.value);
      return out;
    });
  }

  async keys(prefix: string, limit = KV_KEYS_LIMIT): Promise<string[]> {
    return guard('keys', () => {
      const now = Date.now();
      this.#db.transaction(() => {
        this.#stmt.expiredKeys.run(now);
        this.#stmt.expired.run(now);
      }).immediate();
      const end = prefixEnd(prefix);
      const rows = end === undefined ? this.#stmt.keysAll.all(prefix, now, limit) : this.#stmt.keys.all(prefix, end, now, limit);
      return rows.map((r) => r.key);
    });
  }

  async close(): Promise<void> {
    releaseDatabase(this.#db);
  }
}
