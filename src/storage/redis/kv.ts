// KvStore on Redis: each key is `<prefix>kv:<key>`; values are strings, hashes are hashes.
// Writes with a TTL go in one MULTI with their PEXPIRE, so a counter never outlives its window
// and never loses its expiry.

import type { KvStore } from '../types.js';
import { KV_KEYS_LIMIT } from '../sqlite/kv.js';
import { globEscape, redisError, scanKeys } from './client.js';
import type { RedisLink } from './guard.js';

export class RedisKvStore implements KvStore {
  readonly #link: RedisLink;
  readonly #prefix: string;
  readonly #release: () => Promise<void>;

  /** `release` closes the connection when the last store using it closes. */
  constructor(link: RedisLink, prefix: string, release: () => Promise<void>) {
    this.#link = link;
    this.#prefix = `${prefix}kv:`;
    this.#release = release;
  }

  async get(key: string): Promise<Buffer | undefined> {
    const v = await this.#link.run('get', (c) => c.getBuffer(this.#prefix + key));
    return v ?? undefined;
  }

  async set(key: string, value: Buffer | string, ttlMs?: number): Promise<void> {
    const k = this.#prefix + key;
    await this.#link.run('set', (c) => (ttlMs ? c.set(k, value, 'PX', Math.ceil(ttlMs)) : c.set(k, value)));
  }

  async del(key: string): Promise<boolean> {
    return (await this.#link.run('del', (c) => c.del(this.#prefix + key))) > 0;
  }

  async incrBy(key: string, delta: number, ttlMs?: number): Promise<number> {
    const k = this.#prefix + key;
    if (!ttlMs) return this.#link.run('incrBy', (c) => c.incrby(k, delta));
    const res = await this.#link.run('incrBy', (c) => c.multi().incrby(k, delta).pexpire(k, Math.ceil(ttlMs)).exec());
    const failed = res?.find(([err]) => err);
    if (failed) throw redisError(failed[0], 'incrBy');
    return Number(res?.[0]?.[1]);
  }

  async hincrBy(key: string, fields: Record<string, number>, ttlMs?: number): Promise<Record<string, number>> {
    const k = this.#prefix + key;
    const names = Object.keys(fields);
    const res = await this.#link.run('hincrBy', (c) => {
      const m = c.multi();
      for (const f of names) m.hincrby(k, f, fields[f] as number);
      if (ttlMs) m.pexpire(k, Math.ceil(ttlMs));
      return m.exec();
    });
    const failed = res?.find(([err]) => err);
    if (failed) throw redisError(failed[0], 'hincrBy');
    const out: Record<string, number> = {};
    names.forEach((f, i) => (out[f] = Number(res?.[i]?.[1])));
    return out;
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return this.#link.run('hgetall', (c) => c.hgetall(this.#prefix + key));
  }

  async keys(prefix: string, limit = KV_KEYS_LIMIT): Promise<string[]> {
    // A SCAN walks the whole key space: bounded per command (the client's command time-out), not
    // as one call, which on a big shared Redis may rightly take longer.
    const found = await scanKeys(this.#link.client, `${globEscape(this.#prefix + prefix)}*`, limit);
    return found.map((k) => k.slice(this.#prefix.length)).sort();
  }

  async close(): Promise<void> {
    await this.#release();
  }
}
