// HistoryStore on SQLite: a capped table. Each push inserts a row and deletes those that fell
// out of the newest `limit` by id, in one transaction, so the table never grows past the cap.

import type { HistoryRow, HistoryStore } from '../types.js';
import { acquireDatabase, guard, releaseDatabase, type SqliteDatabase, type SqliteOptions } from './db.js';

export class SqliteHistoryStore implements HistoryStore {
  readonly #db: SqliteDatabase;
  readonly #limit: number;
  readonly #stmt;

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
  }

  async push(row: HistoryRow): Promise<void> {
    const text = JSON.stringify(row);
    guard('push', () =>
      this.#db
        .transaction(() => {
          const id = this.#stmt.insert.run(text).lastInsertRowid;
          this.#stmt.trim.run(BigInt(id) - BigInt(this.#limit));
        })
        .immediate(),
    );
  }

  async list(from = 0, to = this.#limit): Promise<HistoryRow[]> {
    const start = Math.max(0, from);
    const end = Math.min(to, this.#limit);
    if (end <= start) return [];
    return guard('list', () => this.#stmt.list.all(end - start, start).map((r) => JSON.parse(r.row) as HistoryRow));
  }

  async count(): Promise<number> {
    return guard('count', () => Math.min(this.#stmt.count.get()?.n ?? 0, this.#limit));
  }

  async reset(): Promise<void> {
    guard('reset', () => this.#stmt.reset.run());
  }

  async close(): Promise<void> {
    releaseDatabase(this.#db);
  }
}
