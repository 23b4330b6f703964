// HistoryStore on Redis: one list, newest first. LPUSH and LTRIM go in one MULTI, so the list
// never holds more than `limit` rows, whichever process pushes.

import type { HistoryRow, HistoryStore } from '../types.js';
import { call, closeClient, redisError, type RedisClient } from './client.js';

export class RedisHistoryStore implements HistoryStore {
  readonly #client: RedisClient;
  readonly #key: string;
  readonly #limit: number;
  readonly #release: () => Promise<void>;

  constructor(client: RedisClient, prefix: string, limit: number, release: () => Promise<void> = () => closeClient(client)) {
    this.#client = client;
    this.#key = `${prefix}history`;
    this.#limit = limit;
    this.#release = release;
  }

  async push(row: HistoryRow): Promise<void> {
    const res = await call('push', this.#client.multi().lpush(this.#key, JSON.stringify(row)).ltrim(this.#key, 0, this.#limit - 1).exec());
    const failed = res?.find(([err]) => err);
    if (failed) throw redisError(failed[0], 'push');
  }

  async list(from = 0, to = this.#limit): Promise<HistoryRow[]> {
    const start = Math.max(0, from);
    const end = Math.min(to, this.#limit);
    if (end <= start) return [];
    const rows = await call('list', this.#client.lrange(this.#key, start, end - 1));
    return rows.map((r) => JSON.parse(r) as HistoryRow);
  }

  async count(): Promise<number> {
    return Math.min(await call('count', this.#client.llen(this.#key)), this.#limit);
  }

  async reset(): Promise<void> {
    await call('reset', this.#client.del(this.#key));
  }

  async close(): Promise<void> {
    await this.#release();
  }
}
