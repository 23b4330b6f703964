// BayesStore on Redis. Per scope (classifier + user) five keys share one hash tag, so they live in
// one Cluster slot and one Lua script can update them atomically:
//   <p>bayes:{<scope>}:S / :H   hashes token (decimal u64) → count per class
//   <p>bayes:{<scope>}:meta     hash learns_spam, learns_ham, revision (and cache_ordered once
//                               a pre-bound learn cache has been entered in learned_z)
//   <p>bayes:{<scope>}:learned  hash message digest → "spam" | "ham" (the learn cache)
//   <p>bayes:{<scope>}:learned_z  zset digest → scope revision of its learn (evicts the oldest)
// Distinct-token totals are HLEN of S and H (a count that drops to 0 deletes its field).
// <p>bayes:scopes is a set of every scope with data (JSON [classifier, user]).
//
// Durability follows the server's persistence settings (appendonly yes + appendfsync always makes
// a replied write durable); the store cannot do better than the server it is given.

import type { BayesClass, BayesLearns, BayesScope, BayesStore, BayesTokenCounts, BayesTotals, LearnOutcome } from '../types.js';
import { DEFAULT_LEARN_CACHE_SIZE, distinctTokens, EXPORT_PAGE, IMPORT_BATCH, u64 } from '../tokens.js';
import { call, redisError, RedisScript, type RedisClient } from './client.js';
import type { RedisLink } from './guard.js';
import { GET_TOKENS_LUA, LEARN_LUA, UNLEARN_LUA } from './bayes-scripts.js';

const learnScript = new RedisScript(LEARN_LUA);
const unlearnScript = new RedisScript(UNLEARN_LUA);
const getTokensScript = new RedisScript(GET_TOKENS_LUA);

/** The comma-separated counts of text[start, end) into `into`, in order; an empty one is 0. */
function readCounts(text: string, start: number, end: number, into: Uint32Array): void {
  let n = 0;
  let value = 0;
  for (let i = start; i <= end && n < into.length; i++) {
    const c = i < end ? text.charCodeAt(i) : 0x2c;
    if (c === 0x2c) {
      into[n++] = value;
      value = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      value = value * 10 + (c - 0x30);
    }
  }
}

interface ScopeKeys {
  S: string;
  H: string;
  meta: string;
  learned: string;
  learnedOrder: string;
}

export class RedisBayesStore implements BayesStore {
  readonly #link: RedisLink;
  /** For exports and imports, which run long by design: bounded per command, not per call. */
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #release: () => Promise<void>;

  readonly #cacheSize: number;

  /** `learnCacheSize`: learn-cache entries kept per scope (the most recent learns). */
  constructor(link: RedisLink, prefix: string, release: () => Promise<void>, opts: { learnCacheSize?: number } = {}) {
    this.#link = link;
    this.#client = link.client;
    this.#prefix = prefix;
    this.#release = release;
    this.#cacheSize = opts.learnCacheSize ?? DEFAULT_LEARN_CACHE_SIZE;
  }

  #keys(scope: BayesScope): ScopeKeys {
    // Length-prefixed so no two (classifier, user) pairs give the same tag.
    const base = `${this.#prefix}bayes:{${scope.classifier.length}:${scope.classifier}:${scope.user}}`;
    return { S: `${base}:S`, H: `${base}:H`, meta: `${base}:meta`, learned: `${base}:learned`, learnedOrder: `${base}:learned_z` };
  }

  get #scopesKey(): string {
    return `${this.#prefix}bayes:scopes`;
  }

  async getTokens(scope: BayesScope, tokens: readonly bigint[]): Promise<BayesTokenCounts> {
    const out: BayesTokenCounts = { spam: new Uint32Array(tokens.length), ham: new Uint32Array(tokens.length) };
    if (tokens.length === 0) return out;
    const k = this.#keys(scope);
    const fields = tokens.map((t) => u64(t).toString()).join(',');
    const reply = await this.#link.run('getTokens', (c) => getTokensScript.run(c, [k.S, k.H, k.meta], [fields]));
    if (typeof reply !== 'string' && !Buffer.isBuffer(reply)) throw redisError(new Error(`unexpected reply of type ${typeof reply}`), 'getTokens');
    const text = reply.toString();
    const first = text.indexOf('|');
    const second = first < 0 ? -1 : text.indexOf('|', first + 1);
    if (second < 0) throw redisError(new Error('unexpected reply of the token lookup'), 'getTokens');
    const learns = new Uint32Array(2);
    readCounts(text, 0, first, learns);
    out.learns = { learnsSpam: learns[0]!, learnsHam: learns[1]! };
    readCounts(text, first + 1, second, out.spam);
    readCounts(text, second + 1, text.length, out.ham);
    return out;
  }

  async learn(scope: BayesScope, digest: string, tokens: readonly bigint[], cls: BayesClass): Promise<LearnOutcome> {
    const k = this.#keys(scope);
    const fields = distinctTokens(tokens).join(',');
    // Resolves only once Redis has replied to the script: a learn is acknowledged after its write.
    const r = await this.#link.run('learn', async (c) => {
      await c.sadd(this.#scopesKey, JSON.stringify([scope.classifier, scope.user]));
      return learnScript.run(c, [k.meta, k.S, k.H, k.learned, k.learnedOrder], [digest, cls, String(this.#cacheSize), fields]);
    });
    return r as LearnOutcome;
  }

  async unlearn(scope: BayesScope, digest: string, tokens: readonly bigint[]): Promise<boolean> {
    const k = this.#keys(scope);
    const fields = distinctTokens(tokens).join(',');
    const r = await this.#link.run('unlearn', (c) => unlearnScript.run(c, [k.meta, k.S, k.H, k.learned, k.learnedOrder], [digest, fields]));
    return r === 1;
  }

  async learnedAs(scope: BayesScope, digest: string): Promise<BayesClass | undefined> {
    const v = await this.#link.run('learnedAs', (c) => c.hget(this.#keys(scope).learned, digest));
    return v === 'spam' || v === 'ham' ? v : undefined;
  }

  async totals(scope: BayesScope): Promise<BayesTotals> {
    const k = this.#keys(scope);
    const [meta, tokensSpam, tokensHam, all] = await this.#link.run('totals', (c) => Promise.all([c.hgetall(k.meta), c.hlen(k.S), c.hlen(k.H), this.#scopeList()]));
    const users = all.filter((s) => s.classifier === scope.classifier && s.user !== '').length;
    return {
      learnsSpam: Number(meta.learns_spam ?? 0),
      learnsHam: Number(meta.learns_ham ?? 0),
      tokensSpam,
      tokensHam,
      users,
      revision: Number(meta.revision ?? 0),
    };
  }

  async learns(scope: BayesScope): Promise<BayesLearns> {
    const [spam, ham] = await this.#link.run('learns', (c) => c.hmget(this.#keys(scope).meta, 'learns_spam', 'learns_ham'));
    return { learnsSpam: Number(spam ?? 0), learnsHam: Number(ham ?? 0) };
  }

  async #scopeList(): Promise<BayesScope[]> {
    const members = await this.#client.smembers(this.#scopesKey);
    const out: BayesScope[] = [];
    for (const m of members) {
      const v = JSON.parse(m) as unknown;
      if (Array.isArray(v) && typeof v[0] === 'string' && typeof v[1] === 'string') out.push({ classifier: v[0], user: v[1] });
    }
    return out.sort((a, b) => (a.classifier === b.classifier ? (a.user < b.user ? -1 : 1) : a.classifier < b.classifier ? -1 : 1));
  }

  async scopes(): Promise<BayesScope[]> {
    return this.#link.run('scopes', () => this.#scopeList());
  }

  async *exportTokens(scope: BayesScope): AsyncIterable<{ token: bigint; spam: number; ham: number }> {
    const k = this.#keys(scope);
    // Every token with a spam count (ham looked up per page), then the ham-only ones.
    for (const [own, other, ownIsSpam] of [
      [k.S, k.H, true],
      [k.H, k.S, false],
    ] as const) {
      let cursor = '0';
      do {
        const [next, flat] = await call('export', this.#client.hscan(own, cursor, 'COUNT', EXPORT_PAGE));
        cursor = next;
        const fields: string[] = [];
        const counts: number[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          fields.push(flat[i] as string);
          counts.push(Number(flat[i + 1]));
        }
        if (fields.length === 0) continue;
        const others = await call('export', this.#client.hmget(other, ...fields));
        for (let i = 0; i < fields.length; i++) {
          const o = Number(others[i] ?? 0);
          if (!ownIsSpam && o > 0) continue; // already exported with the spam pass
          const token = BigInt(fields[i] as string);
          yield ownIsSpam ? { token, spam: counts[i] as number, ham: o } : { token, spam: 0, ham: counts[i] as number };
        }
      } while (cursor !== '0');
    }
  }

  async importTokens(
    scope: BayesScope,
    rows: AsyncIterable<{ token: bigint; spam: number; ham: number }>,
    totals: Pick<BayesTotals, 'learnsSpam' | 'learnsHam'>,
  ): Promise<void> {
    const k = this.#keys(scope);
    await call('import', this.#client.sadd(this.#scopesKey, JSON.stringify([scope.classifier, scope.user])));
    let batch: { token: bigint; spam: number; ham: number }[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const p = this.#client.pipeline();
      for (const r of batch) {
        const f = u64(r.token).toString();
        if (r.spam > 0) p.hset(k.S, f, r.spam);
        else p.hdel(k.S, f);
        if (r.ham > 0) p.hset(k.H, f, r.ham);
        else p.hdel(k.H, f);
      }
      const res = await call('import', p.exec());
      const failed = res?.find(([err]) => err);
      if (failed) throw redisError(failed[0], 'import');
      batch = [];
    };
    for await (const r of rows) {
      batch.push(r);
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    await flush();
    await call('import', this.#client.pipeline().hset(k.meta, 'learns_spam', totals.learnsSpam, 'learns_ham', totals.learnsHam).hincrby(k.meta, 'revision', 1).exec());
  }

  async close(): Promise<void> {
    await this.#release();
  }
}
