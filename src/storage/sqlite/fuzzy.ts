// FuzzyStore on SQLite. Each (digest, flag) is a row with its value and expiry; each of a long
// text's 32 shingles is a row keyed by (slot, value) that names the digest owning it (the last
// writer wins, as in Rspamd), so a check is one exact lookup plus 32 primary-key lookups.

import type { FuzzyMatch, FuzzyRecord, FuzzyStore } from '../types.js';
import { EXPORT_PAGE, IMPORT_BATCH, toSigned, fromSigned } from '../tokens.js';
import { acquireDatabase, guard, releaseDatabase, type SqliteDatabase, type SqliteOptions } from './db.js';
import { FUZZY_SHINGLES, SHINGLE_MATCH_MIN, nowSeconds } from '../fuzzy-common.js';

interface DigestRow {
  digest: string;
  flag: number;
  value: number;
  updated: number;
  expires: number;
}

export class SqliteFuzzyStore implements FuzzyStore {
  readonly #db: SqliteDatabase;
  readonly #defaultExpire: number;
  readonly #stmt;

  /** `defaultExpire`: lifetime given to imported rows, in seconds. */
  constructor(opts: SqliteOptions, defaultExpire: number) {
    this.#db = acquireDatabase(opts);
    this.#defaultExpire = defaultExpire;
    const db = this.#db;
    this.#stmt = guard('prepare', () => ({
      exact: db.prepare<[string, number], DigestRow>(
        'SELECT * FROM fuzzy_digests WHERE digest = ? AND expires > ? ORDER BY value DESC, flag LIMIT 1',
      ),
      // The 32 shingles travel as one JSON array; its index is the shingle slot.
      owners: db.prepare<[string], { digest: string; n: number }>(
        'SELECT s.digest AS digest, count(*) AS n FROM json_each(?) j JOIN fuzzy_shingles s ON s.slot = j.key AND s.value = j.value GROUP BY s.digest ORDER BY n DESC LIMIT 4',
      ),
      upsert: db.prepare<[string, number, number, number, number]>(
        'INSERT INTO fuzzy_digests (digest, flag, value, updated, expires) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = value + excluded.value, updated = excluded.updated, expires = max(expires, excluded.expires)',
      ),
      setShingle: db.prepare<[number, bigint, string]>('INSERT OR REPLACE INTO fuzzy_shingles (slot, value, digest) VALUES (?, ?, ?)'),
      delFlag: db.prepare<[string, number]>('DELETE FROM fuzzy_digests WHERE digest = ? AND flag = ?'),
      delDigest: db.prepare<[string]>('DELETE FROM fuzzy_digests WHERE digest = ?'),
      remaining: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM fuzzy_digests WHERE digest = ?'),
      delShingles: db.prepare<[string]>('DELETE FROM fuzzy_shingles WHERE digest = ?'),
      expire: db.prepare<[number]>('DELETE FROM fuzzy_digests WHERE expires <= ?'),
      orphans: db.prepare(
        'DELETE FROM fuzzy_shingles WHERE NOT EXISTS (SELECT 1 FROM fuzzy_digests d WHERE d.digest = fuzzy_shingles.digest)',
      ),
      count: db.prepare<[number], { flag: number; n: number }>('SELECT flag, count(*) AS n FROM fuzzy_digests WHERE expires > ? GROUP BY flag'),
      page: db.prepare<[string, number, number], DigestRow>(
        `SELECT * FROM fuzzy_digests WHERE (digest, flag) > (?, ?) AND expires > ? ORDER BY digest, flag LIMIT ${EXPORT_PAGE}`,
      ),
      shinglesOf: db.prepare<[string], { slot: number; value: bigint }>('SELECT slot, value FROM fuzzy_shingles WHERE digest = ?').safeIntegers(true),
      importRow: db.prepare<[string, number, number, number, number]>(
        'INSERT INTO fuzzy_digests (digest, flag, value, updated, expires) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value, updated = excluded.updated, expires = excluded.expires',
      ),
    }));
  }

  async check(digest: string, shingles?: readonly bigint[]): Promise<FuzzyMatch | undefined> {
    return guard('check', () => {
      const now = nowSeconds();
      const hit = this.#stmt.exact.get(digest, now);
      if (hit) return { flag: hit.flag, value: hit.value, prob: 1, updated: hit.updated, digest };
      if (!shingles || shingles.length !== FUZZY_SHINGLES) return undefined;
      const json = `[${shingles.map((s) => toSigned(s).toString()).join(',')}]`;
      // An owner whose rows all expired may still own slots until expire() runs: skip it.
      for (const o of this.#stmt.owners.all(json)) {
        if (o.n < SHINGLE_MATCH_MIN) return undefined;
        const rec = this.#stmt.exact.get(o.digest, now);
        if (rec) return { flag: rec.flag, value: rec.value, prob: o.n / FUZZY_SHINGLES, updated: rec.updated, digest: o.digest };
      }
      return undefined;
    });
  }

  async add(rec: Omit<FuzzyRecord, 'updated' | 'value'> & { weight: number }, expireSeconds: number): Promise<void> {
    guard('add', () =>
      this.#db
        .transaction(() => {
          const now = nowSeconds();
          this.#stmt.upsert.run(rec.digest, rec.flag, rec.weight, now, now + expireSeconds);
          this.#writeShingles(rec.digest, rec.shingles);
        })
        .immediate(),
    );
  }

  #writeShingles(digest: string, shingles: readonly bigint[] | undefined): void {
    if (!shingles) return;
    shingles.forEach((v, slot) => this.#stmt.setShingle.run(slot, toSigned(v), digest));
  }

  async remove(digest: string, flag?: number): Promise<boolean> {
    return guard('remove', () =>
      this.#db
        .transaction(() => {
          const n = flag === undefined ? this.#stmt.delDigest.run(digest).changes : this.#stmt.delFlag.run(digest, flag).changes;
          if (n > 0 && (this.#stmt.remaining.get(digest)?.n ?? 0) === 0) this.#stmt.delShingles.run(digest);
          return n > 0;
        })
        .immediate(),
    );
  }

  async expire(now = nowSeconds()): Promise<number> {
    return guard('expire', () =>
      this.#db
        .transaction(() => {
          const n = this.#stmt.expire.run(now).changes;
          if (n > 0) this.#stmt.orphans.run();
          return n;
        })
        .immediate(),
    );
  }

  async count(): Promise<Map<number, number>> {
    return guard('count', () => new Map(this.#stmt.count.all(nowSeconds()).map((r) => [r.flag, r.n])));
  }

  async *exportAll(): AsyncIterable<FuzzyRecord> {
    let after: [string, number] = ['', Number.MIN_SAFE_INTEGER];
    for (;;) {
      const rows = guard('export', () => this.#stmt.page.all(after[0], after[1], nowSeconds()));
      for (const r of rows) {
        const sh = guard('export', () => this.#stmt.shinglesOf.all(r.digest));
        const rec: FuzzyRecord = { digest: r.digest, flag: r.flag, value: r.value, updated: r.updated, expire: Math.max(0, r.expires - r.updated) };
        if (sh.length === FUZZY_SHINGLES) {
          const arr = new Array<bigint>(FUZZY_SHINGLES);
          for (const s of sh) arr[Number(s.slot)] = fromSigned(s.value);
          rec.shingles = arr;
        }
        yield rec;
      }
      if (rows.length < EXPORT_PAGE) return;
      const last = rows[rows.length - 1] as DigestRow;
      after = [last.digest, last.flag];
    }
  }

  async importAll(rows: AsyncIterable<FuzzyRecord>): Promise<void> {
    const write = this.#db.transaction((batch: FuzzyRecord[]) => {
      for (const r of batch) {
        const expire = r.expire ?? this.#defaultExpire;
        this.#stmt.importRow.run(r.digest, r.flag, r.value, r.updated, r.updated + expire);
        this.#writeShingles(r.digest, r.shingles);
      }
    });
    let batch: FuzzyRecord[] = [];
    for await (const r of rows) {
      batch.push(r);
      if (batch.length >= IMPORT_BATCH) {
        const b = batch;
        guard('import', () => write.immediate(b));
        batch = [];
      }
    }
    const b = batch;
    if (b.length > 0) guard('import', () => write.immediate(b));
  }

  async close(): Promise<void> {
    releaseDatabase(this.#db);
  }
}
