// KvStore on Redis: each key is `<prefix>kv:<key>`; values are strings, hashes are hashes.
// Writes with a TTL go in one MULTI with their PEXPIRE, so a counter never outlives its window
// and never loses its expiry.

import type { KvStore } from '../types.js';
import { KV_KEYS_LIMIT } from '../sqlite/kv.js';
import { call, closeClient, globEscape, redisError, scanKeys, type RedisClient } from './client.js';


export class RedisKvStore implements KvStore {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #release: () => Promise<void>;

  constructor(client: RedisClient, prefix: string, release: () => Promise<void> = () => closeClient(client)) {
    this.#client = client;
    this.#prefix = `${prefix}kv:`;
    this.#release = release;
  }

  async get(key: string): Promise<Buffer | undefined> {
    const v = await call('get', this.#client.getBuffer(this.#prefix + key));
    return v ?? undefined;
  }

  async set(key: string, value: Buffer | string, ttlMs?: number): Promise<void> {
    const k = this.#prefix + key;
    await call('set', ttlMs ? this.#client.set(k, value, 'PX', Math.ceil(ttlMs)) : this.#client.set(k, value));
  }

  async del(key: string): Promise<boolean> {
    return (await call('del', this.#client.del(this.#prefix + key))) > 0;
  }

  async incrBy(key: string, delta: number, ttlMs?: number): Promise<number> {
    const k = this.#prefix + key;
    if (!ttlMs) return call('incrBy', this.#client.incrby(k, delta));
    const res = await call('incrBy', this.#client.multi().incrby(k, delta).pexpire(k, Math.ceil(ttlMs)).exec());
    const failed = res?.find(([err]) => err);
    if (failed) throw redisError(failed[0], 'incrBy');
    return Number(res?.[0]?.[1]);
  }

  async hincrBy(key: string, fields: Record<string, number>, ttlMs?: number): Promise<Record<string, number>> {
    const k = this.#prefix + key;
    const names = Object.keys(fields);
    const m = this.#client.multi();
    for (const f of names) m.hincrby(k, f, fields[f] as number);
    if (ttlMs) m.pexpire(k, Math.ceil(ttlMs));
    const res = await call('hincrBy', m.exec());
    const failed = res?.find(([err]) => err);
    if (failed) throw redisError(failed[0], 'hincrBy');
    const out: Record<string, number> = {};
    names.forEach((f, i) => (out[f] = Number(res?.[i]?.[1])));
    return out;
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return call('hgetall', this.#client.hgetall(this.#prefix + key));
  }

  async keys(prefix: string, limit = KV_KEYS_LIMIT): Promise<string[]> {
    const found = await scanKeys(this.#client, `${globEscape(this.#prefix + prefix)}*`, limit);
    return found.map((k) => k.slice(this.#prefix.length)).sort();
  }

  async close(): Promise<void> {
    await this.#release();
  }
}
