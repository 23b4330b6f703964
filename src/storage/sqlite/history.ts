// HistoryStore on SQLite: a capped table. Rows pushed within FLUSH_DELAY_MS are inserted together,
// and those that fell out of the newest `limit` deleted, in one transaction, so the table never
// grows past the cap. Batching matters: every scan pushes a row, and one write transaction per
// scan from several worker processes made them queue on SQLite's write lock, whose busy handler
// sleeps inside the (synchronous) driver and so stalled each worker's event loop. For the same
// reason a batch flushed on the timer does not wait for the lock at all: when another process
// holds it, the batch goes back to the queue and is tried again a little later; only after
// MAX_DEFERRALS such tries (and for list, count, reset and close, which must see every row) does a
// flush wait for the lock as the other stores do.

import type { HistoryRow, HistoryStore } from '../types.js';
import { acquireDatabase, guard, releaseDatabase, type SqliteDatabase, type SqliteOptions } from './db.js';

/** How long a pushed row may wait for others to share its write transaction. */
const FLUSH_DELAY_MS = 50;
/** Lock-busy flushes deferred before one waits for the lock; each waits RETRY_MS (with jitter). */
const MAX_DEFERRALS = 20;
const RETRY_MS = 15;
/** Rows that trigger a flush at once, bounding the batch (and the memory a burst holds). */
const FLUSH_ROWS = 256;

interface Pending {
  rows: string[];
  waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

function isBusy(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' && cause.code.startsWith('SQLITE_BUSY');
}

export class SqliteHistoryStore implements HistoryStore {
  readonly #db: SqliteDatabase;
  readonly #limit: number;
  readonly #stmt;
  #pending: Pending = { rows: [], waiters: [] };
  #timer: NodeJS.Timeout | undefined;
  #deferrals = 0;
  /** One write transaction: insert the rows, then drop those past the newest `limit`. */
  readonly #insertAll;

  constructor(opts: SqliteOptions, limit: number) {
    this.#db = acquireDatabase(opts);
    this.#limit = limit;
    const db = this.#db;
    this.#stmt = guard('prepare', () => ({
      insert: db.prepare<[string]>('INSERT INTO history (row) VALUES (?)'),
      trim: db.prepare<[number | bigint]>('DELETE FROM history WHERE id <= ?'),
      list: db.prepare<[number, number], { row: string }>('SELECT row FROM history ORDER BY id DESC LIMIT ? OFFSET ?'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM history'),
      reset: db.prepare('DELETE FROM history'),
    }));
    this.#insertAll = db.transaction((rows: readonly string[]) => {
      let id: number | bigint = 0;
      for (const text of rows) id = this.#stmt.insert.run(text).lastInsertRowid;
      this.#stmt.trim.run(BigInt(id) - BigInt(this.#limit));
    });
  }

  push(row: HistoryRow): Promise<void> {
    const text = JSON.stringify(row);
    return new Promise<void>((resolve, reject) => {
      this.#pending.rows.push(text);
      this.#pending.waiters.push({ resolve, reject });
      if (this.#pending.rows.length >= FLUSH_ROWS) this.#flush(false);
      else this.#timer ??= setTimeout(() => this.#flush(false), FLUSH_DELAY_MS);
    });
  }

  /**
   * Write every pending row in one transaction and settle their promises. With `wait` false, a
   * write lock held by another process defers the batch instead of sleeping in the driver.
   */
  #flush(wait = true): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    if (batch.rows.length === 0) return;
    this.#pending = { rows: [], waiters: [] };
    const nonBlocking = !wait && this.#deferrals < MAX_DEFERRALS;
    try {
      guard('push', () => this.#write(batch.rows, nonBlocking));
    } catch (err) {
      if (nonBlocking && isBusy(err)) {
        this.#deferrals++;
        // The batch waits as the pending one; rows pushed meanwhile join it, behind.
        this.#pending = batch;
        this.#timer = setTimeout(() => this.#flush(false), RETRY_MS + Math.random() * RETRY_MS);
        return;
      }
      for (const w of batch.waiters) w.reject(err);
      return;
    }
    this.#deferrals = 0;
    for (const w of batch.waiters) w.resolve();
  }

  #write(rows: string[], nonBlocking: boolean): void {
    const db = this.#db;
    if (!nonBlocking) return this.#insertAll.immediate(rows);
    // The connection may be shared with other stores: its busy timeout is lifted for this one
    // transaction only (nothing else runs on this thread in between).
    const saved = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      this.#insertAll.immediate(rows);
    } finally {
      db.pragma(`busy_timeout = ${saved}`);
    }
  }

  async list(from = 0, to = this.#limit): Promise<HistoryRow[]> {
    this.#flush();
    const start = Math.max(0, from);
    const end = Math.min(to, this.#limit);
    if (end <= start) return [];
    return guard('list', () => this.#stmt.list.all(end - start, start).map((r) => JSON.parse(r.row) as HistoryRow));
  }

  async count(): Promise<number> {
    this.#flush();
    return guard('count', () => Math.min(this.#stmt.count.get()?.n ?? 0, this.#limit));
  }

  async reset(): Promise<void> {
    this.#flush();
    guard('reset', () => this.#stmt.reset.run());
  }

  async close(): Promise<void> {
    this.#flush();
    releaseDatabase(this.#db);
  }
}
