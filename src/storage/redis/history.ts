// HistoryStore on Redis: one list, newest first. LPUSH and LTRIM go in one MULTI, so the list
// never holds more than `limit` rows, whichever process pushes.

import type { HistoryRow, HistoryStore } from '../types.js';
import { redisError } from './client.js';
import type { RedisLink } from './guard.js';

export class RedisHistoryStore implements HistoryStore {
  readonly #link: RedisLink;
  readonly #key: string;
  readonly #limit: number;
  readonly #release: () => Promise<void>;

  constructor(link: RedisLink, prefix: string, limit: number, release: () => Promise<void>) {
    this.#link = link;
    this.#key = `${prefix}history`;
    this.#limit = limit;
    this.#release = release;
  }

  async push(row: HistoryRow): Promise<void> {
    const res = await this.#link.run('push', (c) => c.multi().lpush(this.#key, JSON.stringify(row)).ltrim(this.#key, 0, this.#limit - 1).exec());
    const failed = res?.find(([err]) => err);
    if (failed) throw redisError(failed[0], 'push');
  }

  async list(from = 0, to = this.#limit): Promise<HistoryRow[]> {
    const start = Math.max(0, from);
    const end = Math.min(to, this.#limit);
    if (end <= start) return [];
    const rows = await this.#link.run('list', (c) => c.lrange(this.#key, start, end - 1));
    return rows.map((r) => JSON.parse(r) as HistoryRow);
  }

  async count(): Promise<number> {
    return Math.min(await this.#link.run('count', (c) => c.llen(this.#key)), this.#limit);
  }

  async reset(): Promise<void> {
    await this.#link.run('reset', (c) => c.del(this.#key));
  }

  async close(): Promise<void> {
    await this.#release();
  }
}
