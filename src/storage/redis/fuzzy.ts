// FuzzyStore on Redis:
//   <p>fuzzy:d:<digest>            hash: "<flag>" → "value|updated|expires", "sh" → owned shingles
//   <p>fuzzy:s:<slot>:<u64 value>  string: the digest owning that shingle slot (expires with it)
//   <p>fuzzy:count                 hash: flag → number of stored (digest, flag) entries
// A check is one HGETALL, then (no exact hit) 32 GETs sent together, then one HGETALL of the
// owner. Digest hashes carry a Redis TTL a grace period past their last expiry, so Redis itself
// drops what expire() never got to; expire() remains what keeps the per-flag counts exact.

import type { FuzzyMatch, FuzzyRecord, FuzzyStore } from '../types.js';
import { IMPORT_BATCH, u64 } from '../tokens.js';
import { FUZZY_SHINGLES, SHINGLE_MATCH_MIN, nowSeconds } from '../fuzzy-common.js';
import { call, globEscape, RedisScript, scanBatches, type RedisClient } from './client.js';
import type { RedisLink } from './guard.js';
import { FUZZY_ADD_LUA, FUZZY_REMOVE_LUA } from './fuzzy-scripts.js';

const addScript = new RedisScript(FUZZY_ADD_LUA);
const removeScript = new RedisScript(FUZZY_REMOVE_LUA);

/** How long Redis keeps a digest past its expiry when expire() is never run (then counts drift). */
const NATIVE_TTL_GRACE_S = 86400;

interface Entry {
  flag: number;
  value: number;
  updated: number;
  expires: number;
}

function parseEntries(h: Record<string, string>): Entry[] {
  const out: Entry[] = [];
  for (const [k, v] of Object.entries(h)) {
    if (k === 'sh') continue;
    const [value, updated, expires] = v.split('|').map(Number);
    out.push({ flag: Number(k), value: value ?? 0, updated: updated ?? 0, expires: expires ?? 0 });
  }
  return out;
}

function best(entries: Entry[], now: number): Entry | undefined {
  let top: Entry | undefined;
  for (const e of entries) {
    if (e.expires <= now) continue;
    if (!top || e.value > top.value || (e.value === top.value && e.flag < top.flag)) top = e;
  }
  return top;
}

export class RedisFuzzyStore implements FuzzyStore {
  readonly #link: RedisLink;
  /** For expiry, exports and imports, which run long by design: bounded per command, not per call. */
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #defaultExpire: number;
  readonly #release: () => Promise<void>;

  constructor(link: RedisLink, prefix: string, defaultExpire: number, release: () => Promise<void>) {
    this.#link = link;
    this.#client = link.client;
    this.#prefix = prefix;
    this.#defaultExpire = defaultExpire;
    this.#release = release;
  }

  #digestKey(d: string): string {
    return `${this.#prefix}fuzzy:d:${d}`;
  }

  #shingleKey(slot: number, v: bigint): string {
    return `${this.#prefix}fuzzy:s:${slot}:${u64(v)}`;
  }

  get #countKey(): string {
    return `${this.#prefix}fuzzy:count`;
  }

  check(digest: string, shingles?: readonly bigint[]): Promise<FuzzyMatch | undefined> {
    // Its round trips (digest, shingle owners, the owner's entry) share one time bound.
    return this.#link.run('check', (c) => this.#check(c, digest, shingles));
  }

  async #check(c: RedisClient, digest: string, shingles?: readonly bigint[]): Promise<FuzzyMatch | undefined> {
    const now = nowSeconds();
    const hit = best(parseEntries(await c.hgetall(this.#digestKey(digest))), now);
    if (hit) return { flag: hit.flag, value: hit.value, prob: 1, updated: hit.updated, digest };
    if (!shingles || shingles.length !== FUZZY_SHINGLES) return undefined;
    const owners = await Promise.all(shingles.map((v, slot) => c.get(this.#shingleKey(slot, v))));
    const tally = new Map<string, number>();
    for (const o of owners) if (o) tally.set(o, (tally.get(o) ?? 0) + 1);
    const ranked = [...tally].filter(([, n]) => n >= SHINGLE_MATCH_MIN).sort((a, b) => b[1] - a[1]);
    for (const [owner, n] of ranked) {
      const rec = best(parseEntries(await c.hgetall(this.#digestKey(owner))), now);
      if (rec) return { flag: rec.flag, value: rec.value, prob: n / FUZZY_SHINGLES, updated: rec.updated, digest: owner };
    }
    return undefined;
  }

  async #write(mode: 'add' | 'set', rec: { digest: string; flag: number; shingles?: readonly bigint[] | undefined }, value: number, updated: number, expires: number): Promise<void> {
    const ttl = Math.max(1, expires - nowSeconds() + NATIVE_TTL_GRACE_S);
    const sh = rec.shingles?.map((v, slot) => `${slot}:${u64(v)}`).join(',') ?? '';
    const created = await call('add', addScript.run(this.#client, [this.#digestKey(rec.digest)], [mode, String(rec.flag), String(value), String(updated), String(expires), String(ttl), sh]));
    const writes: Promise<unknown>[] = [];
    if (created === 1) writes.push(this.#client.hincrby(this.#countKey, String(rec.flag), 1));
    rec.shingles?.forEach((v, slot) => writes.push(this.#client.set(this.#shingleKey(slot, v), rec.digest, 'EX', ttl)));
    await call('add', Promise.all(writes));
  }

  async add(rec: Omit<FuzzyRecord, 'updated' | 'value'> & { weight: number }, expireSeconds: number): Promise<void> {
    const now = nowSeconds();
    // Resolves only once every write has been answered: an add is acknowledged after it is stored.
    await this.#link.run('add', () => this.#write('add', rec, rec.weight, now, now + expireSeconds));
  }

  async #removeWith(digest: string, args: string[]): Promise<number> {
    const r = (await call('remove', removeScript.run(this.#client, [this.#digestKey(digest)], args))) as [string, string];
    const flags = r[0] ? r[0].split(',') : [];
    const writes: Promise<unknown>[] = flags.map((f) => this.#client.hincrby(this.#countKey, f, -1));
    // Shingle slots still naming this digest go with it; slots taken over by another digest stay.
    for (const part of r[1] ? r[1].split(',') : []) {
      const [slot, v] = part.split(':');
      const key = `${this.#prefix}fuzzy:s:${slot}:${v}`;
      writes.push(this.#client.get(key).then((owner) => (owner === digest ? this.#client.del(key) : 0)));
    }
    await call('remove', Promise.all(writes));
    return flags.length;
  }

  async remove(digest: string, flag?: number): Promise<boolean> {
    return (await this.#link.run('remove', () => this.#removeWith(digest, flag === undefined ? ['all'] : ['flag', String(flag)]))) > 0;
  }

  async expire(now = nowSeconds()): Promise<number> {
    let n = 0;
    const skip = `${this.#prefix}fuzzy:d:`.length;
    for await (const keys of scanBatches(this.#client, `${globEscape(this.#prefix)}fuzzy:d:*`)) {
      for (const k of keys) n += await this.#removeWith(k.slice(skip), ['expired', String(now)]);
    }
    return n;
  }

  async count(): Promise<Map<number, number>> {
    const h = await this.#link.run('count', (c) => c.hgetall(this.#countKey));
    const out = new Map<number, number>();
    for (const [f, n] of Object.entries(h)) if (Number(n) > 0) out.set(Number(f), Number(n));
    return out;
  }

  async *exportAll(): AsyncIterable<FuzzyRecord> {
    const skip = `${this.#prefix}fuzzy:d:`.length;
    const now = nowSeconds();
    for await (const keys of scanBatches(this.#client, `${globEscape(this.#prefix)}fuzzy:d:*`)) {
      const hashes = await call('export', Promise.all(keys.map((k) => this.#client.hgetall(k))));
      for (let i = 0; i < keys.length; i++) {
        const h = hashes[i] as Record<string, string>;
        const shingles = h.sh ? h.sh.split(',').map((p) => BigInt(p.split(':')[1] as string)) : undefined;
        for (const e of parseEntries(h)) {
          if (e.expires <= now) continue;
          const rec: FuzzyRecord = { digest: (keys[i] as string).slice(skip), flag: e.flag, value: e.value, updated: e.updated, expire: e.expires - e.updated };
          if (shingles?.length === FUZZY_SHINGLES) rec.shingles = shingles;
          yield rec;
        }
      }
    }
  }

  async importAll(rows: AsyncIterable<FuzzyRecord>): Promise<void> {
    let batch: Promise<void>[] = [];
    for await (const r of rows) {
      batch.push(this.#write('set', r, r.value, r.updated, r.updated + (r.expire ?? this.#defaultExpire)));
      if (batch.length >= IMPORT_BATCH) {
        await Promise.all(batch);
        batch = [];
      }
    }
    await Promise.all(batch);
  }

  async close(): Promise<void> {
    await this.#release();
  }
}
