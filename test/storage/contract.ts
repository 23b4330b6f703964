// The one contract every store implementation meets (DESIGN "State"): run by sqlite.test.ts,
// redis.test.ts and redis-cluster.test.ts against real back ends. Each case opens fresh,
// isolated stores through the factory (a new temp dir or a new key prefix).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BayesScope, FuzzyRecord, Stores } from '../../src/storage/index.js';

export interface ContractStores {
  stores: Stores;
  /** Closes the stores and removes what they wrote. */
  cleanup(): Promise<void>;
}

/** History rows kept by the stores the factory opens. */
export const CONTRACT_HISTORY_ROWS = 5;

const G: BayesScope = { classifier: 'bayes', user: '' };
const U64_MAX = (1n << 64n) - 1n;

/** Deterministic pseudo-random 64-bit tokens (xorshift), so failures reproduce. */
export function tokensFrom(seed: number, n: number): bigint[] {
  let x = BigInt(seed) | 1n;
  const out: bigint[] = [];
  for (let i = 0; i < n; i++) {
    x ^= (x << 13n) & U64_MAX;
    x ^= x >> 7n;
    x ^= (x << 17n) & U64_MAX;
    out.push(x);
  }
  return out;
}

function shingles(seed: number): bigint[] {
  return tokensFrom(seed, 32);
}

/** `base` with the first `keep` slots kept and the others replaced. */
function edited(base: bigint[], keep: number, seed: number): bigint[] {
  const other = tokensFrom(seed, 32);
  return base.map((v, i) => (i < keep ? v : (other[i] as bigint)));
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* iter<T>(rows: T[]): AsyncIterable<T> {
  for (const r of rows) yield r;
}

export function runContract(name: string, factory: () => Promise<ContractStores>): void {
  describe(`store contract: ${name}`, () => {
    let cur: ContractStores | undefined;
    const open = async (): Promise<Stores> => {
      cur = await factory();
      return cur.stores;
    };
    const done = async (): Promise<void> => {
      await cur?.cleanup();
      cur = undefined;
    };

    describe('BayesStore', () => {
      it('returns zero counts, in order, for an unknown scope', async () => {
        const s = await open();
        try {
          const c = await s.bayes.getTokens({ classifier: 'none', user: '' }, [1n, 2n, 3n]);
          assert.deepEqual([...c.spam, ...c.ham], [0, 0, 0, 0, 0, 0]);
          assert.equal((await s.bayes.totals({ classifier: 'none', user: '' })).revision, 0);
        } finally {
          await done();
        }
      });

      it('learns, refuses the same message twice, relearns in the other class', async () => {
        const s = await open();
        try {
          const a = [0n, 1n << 63n, U64_MAX, 42n, 42n]; // extremes of u64, and a repeat
          assert.equal(await s.bayes.learn(G, 'msg-a', a, 'spam'), 'learned');
          let c = await s.bayes.getTokens(G, [42n, 0n, U64_MAX, 1n << 63n, 7n]);
          assert.deepEqual([...c.spam], [1, 1, 1, 1, 0], 'a repeated token counts once per message');
          assert.deepEqual([...c.ham], [0, 0, 0, 0, 0]);
          let t = await s.bayes.totals(G);
          assert.deepEqual([t.learnsSpam, t.learnsHam, t.tokensSpam, t.tokensHam, t.revision], [1, 0, 4, 0, 1]);
          assert.equal(await s.bayes.learnedAs(G, 'msg-a'), 'spam');

          assert.equal(await s.bayes.learn(G, 'msg-a', a, 'spam'), 'already_learned');
          t = await s.bayes.totals(G);
          assert.deepEqual([t.learnsSpam, t.revision], [1, 1], 'already learned changes nothing');

          assert.equal(await s.bayes.learn(G, 'msg-b', [42n, 5n], 'spam'), 'learned');
          assert.equal(await s.bayes.learn(G, 'msg-a', a, 'ham'), 'relearned');
          c = await s.bayes.getTokens(G, [42n, 0n, 5n]);
          assert.deepEqual([...c.spam], [1, 0, 1]);
          assert.deepEqual([...c.ham], [1, 1, 0]);
          t = await s.bayes.totals(G);
          assert.deepEqual([t.learnsSpam, t.learnsHam, t.tokensSpam, t.tokensHam], [1, 1, 2, 4]);
          assert.equal(await s.bayes.learnedAs(G, 'msg-a'), 'ham');
          assert.equal(await s.bayes.learnedAs(G, 'never'), undefined);
        } finally {
          await done();
        }
      });

      it('unlearns a learned message and only that', async () => {
        const s = await open();
        try {
          await s.bayes.learn(G, 'm1', [1n, 2n, 3n], 'ham');
          await s.bayes.learn(G, 'm2', [2n, 3n, 4n], 'ham');
          assert.equal(await s.bayes.unlearn(G, 'm1', [1n, 2n, 3n]), true);
          assert.equal(await s.bayes.unlearn(G, 'm1', [1n, 2n, 3n]), false);
          assert.equal(await s.bayes.unlearn(G, 'unknown', [2n]), false);
          const c = await s.bayes.getTokens(G, [1n, 2n, 3n, 4n]);
          assert.deepEqual([...c.ham], [0, 1, 1, 1]);
          const t = await s.bayes.totals(G);
          assert.deepEqual([t.learnsHam, t.tokensHam], [1, 3]);
          assert.equal(await s.bayes.learnedAs(G, 'm1'), undefined);
        } finally {
          await done();
        }
      });

      it('keeps per-user scopes apart and counts their users', async () => {
        const s = await open();
        try {
          const bob: BayesScope = { classifier: 'bayes', user: 'bob@example.org' };
          const eve: BayesScope = { classifier: 'bayes', user: 'eve@example.org' };
          await s.bayes.learn(bob, 'x', [10n, 11n], 'spam');
          await s.bayes.learn(eve, 'x', [10n], 'ham');
          await s.bayes.learn({ classifier: 'other', user: '' }, 'x', [10n], 'spam');
          assert.deepEqual([...(await s.bayes.getTokens(bob, [10n])).spam], [1]);
          assert.deepEqual([...(await s.bayes.getTokens(eve, [10n])).spam], [0]);
          assert.deepEqual([...(await s.bayes.getTokens(G, [10n])).spam], [0]);
          assert.equal(await s.bayes.learnedAs(eve, 'x'), 'ham', 'the learn cache is per scope');
          assert.equal((await s.bayes.totals(G)).users, 2);
          assert.equal((await s.bayes.totals({ classifier: 'other', user: '' })).users, 0);
          const scopes = (await s.bayes.scopes()).map((x) => `${x.classifier}/${x.user}`).sort();
          assert.deepEqual(scopes, ['bayes/bob@example.org', 'bayes/eve@example.org', 'other/']);
        } finally {
          await done();
        }
      });

      it('reads 2500 tokens at once, each count at its position', async () => {
        const s = await open();
        try {
          const toks = tokensFrom(7, 2500);
          await s.bayes.learn(G, 'big', toks.filter((_, i) => i % 3 === 0), 'spam');
          await s.bayes.learn(G, 'big2', toks.filter((_, i) => i % 5 === 0), 'ham');
          // Counts of two digits, past the 1000-token batches a store may read in.
          for (let m = 0; m < 11; m++) await s.bayes.learn(G, `many${m}`, toks.filter((_, i) => i % 7 === 0), 'spam');
          const c = await s.bayes.getTokens(G, toks);
          assert.equal(c.spam.length, 2500);
          for (let i = 0; i < 2500; i++) {
            assert.equal(c.spam[i], (i % 3 === 0 ? 1 : 0) + (i % 7 === 0 ? 11 : 0), `spam[${i}]`);
            assert.equal(c.ham[i], i % 5 === 0 ? 1 : 0, `ham[${i}]`);
          }
          // The tokeniser's (hi, lo) form, where a store takes it, reads the same counts.
          if (s.bayes.getTokenPairs) {
            const pairs = { length: toks.length, hi: Uint32Array.from(toks, (t) => Number(t >> 32n)), lo: Uint32Array.from(toks, (t) => Number(t & 0xffffffffn)) };
            const p = await s.bayes.getTokenPairs(G, pairs);
            assert.deepEqual([p.spam, p.ham], [c.spam, c.ham]);
          }
          // A store that reads the learn counts with the tokens gives the scope's own.
          const t = await s.bayes.totals(G);
          if (c.learns) assert.deepEqual(c.learns, { learnsSpam: t.learnsSpam, learnsHam: t.learnsHam });
          if (s.bayes.learns) assert.deepEqual(await s.bayes.learns(G), { learnsSpam: t.learnsSpam, learnsHam: t.learnsHam });
        } finally {
          await done();
        }
      });

      it('exports every token row and imports them into another scope', async () => {
        const s = await open();
        try {
          const toks = tokensFrom(3, 2500); // more than one export page
          await s.bayes.learn(G, 'e1', toks.slice(0, 1500), 'spam');
          await s.bayes.learn(G, 'e2', toks.slice(1000), 'ham');
          const rows = await collect(s.bayes.exportTokens(G));
          assert.equal(rows.length, 2500);
          const byToken = new Map(rows.map((r) => [r.token, r]));
          assert.deepEqual(byToken.get(toks[1200] as bigint), { token: toks[1200], spam: 1, ham: 1 });
          assert.deepEqual(byToken.get(toks[2400] as bigint), { token: toks[2400], spam: 0, ham: 1 });
          const dst: BayesScope = { classifier: 'copy', user: '' };
          await s.bayes.importTokens(dst, iter(rows), { learnsSpam: 1, learnsHam: 1 });
          const t = await s.bayes.totals(dst);
          assert.deepEqual([t.learnsSpam, t.learnsHam, t.tokensSpam, t.tokensHam], [1, 1, 1500, 1500]);
          const a = await s.bayes.getTokens(G, toks);
          const b = await s.bayes.getTokens(dst, toks);
          assert.deepEqual([...b.spam], [...a.spam]);
          assert.deepEqual([...b.ham], [...a.ham]);
        } finally {
          await done();
        }
      });
    });

    describe('FuzzyStore', () => {
      it('adds with weight per flag and finds the exact digest', async () => {
        const s = await open();
        try {
          await s.fuzzy.add({ digest: 'd1', flag: 1, weight: 2 }, 3600);
          await s.fuzzy.add({ digest: 'd1', flag: 1, weight: 3 }, 3600);
          await s.fuzzy.add({ digest: 'd1', flag: 2, weight: 1 }, 3600);
          const m = await s.fuzzy.check('d1');
          assert.ok(m);
          assert.deepEqual([m.flag, m.value, m.prob, m.digest], [1, 5, 1, 'd1'], 'the strongest flag answers');
          assert.ok(Math.abs(m.updated - Date.now() / 1000) < 5);
          assert.equal(await s.fuzzy.check('d2'), undefined);
          assert.deepEqual([...(await s.fuzzy.count())].sort(), [
            [1, 1],
            [2, 1],
          ]);
        } finally {
          await done();
        }
      });

      it('matches by shingles only when more than half agree', async () => {
        const s = await open();
        try {
          const base = shingles(11);
          await s.fuzzy.add({ digest: 'orig', flag: 3, weight: 1, shingles: base }, 3600);
          const m17 = await s.fuzzy.check('edited-17', edited(base, 17, 99));
          assert.ok(m17, '17 of 32 shingles match');
          assert.deepEqual([m17.flag, m17.digest, m17.prob], [3, 'orig', 17 / 32]);
          const m32 = await s.fuzzy.check('same-shingles', base);
          assert.equal(m32?.prob, 1);
          assert.equal(await s.fuzzy.check('edited-16', edited(base, 16, 99)), undefined, '16 of 32 is not a match');
          assert.equal(await s.fuzzy.check('unrelated', shingles(12)), undefined);
        } finally {
          await done();
        }
      });

      it('removes a flag, a digest, and the shingles of a removed digest', async () => {
        const s = await open();
        try {
          const base = shingles(21);
          await s.fuzzy.add({ digest: 'r1', flag: 1, weight: 1, shingles: base }, 3600);
          await s.fuzzy.add({ digest: 'r1', flag: 2, weight: 1 }, 3600);
          assert.equal(await s.fuzzy.remove('r1', 1), true);
          assert.equal(await s.fuzzy.remove('r1', 1), false);
          assert.equal((await s.fuzzy.check('r1'))?.flag, 2);
          assert.equal((await s.fuzzy.check('x', base))?.digest, 'r1', 'shingles stay while a flag is left');
          assert.equal(await s.fuzzy.remove('r1'), true);
          assert.equal(await s.fuzzy.check('r1'), undefined);
          assert.equal(await s.fuzzy.check('x', base), undefined);
          assert.equal((await s.fuzzy.count()).size, 0);
        } finally {
          await done();
        }
      });

      it('expires entries not refreshed within their lifetime', async () => {
        const s = await open();
        try {
          const now = Math.floor(Date.now() / 1000);
          await s.fuzzy.add({ digest: 'short', flag: 1, weight: 1, shingles: shingles(31) }, 100);
          await s.fuzzy.add({ digest: 'long', flag: 1, weight: 1 }, 10_000);
          await s.fuzzy.add({ digest: 'refreshed', flag: 2, weight: 1 }, 100);
          await s.fuzzy.add({ digest: 'refreshed', flag: 2, weight: 1 }, 10_000);
          assert.equal(await s.fuzzy.expire(now + 1000), 1);
          assert.equal(await s.fuzzy.check('short'), undefined);
          assert.equal(await s.fuzzy.check('y', shingles(31)), undefined);
          assert.equal((await s.fuzzy.check('refreshed'))?.value, 2);
          assert.deepEqual([...(await s.fuzzy.count())].sort(), [
            [1, 1],
            [2, 1],
          ]);
          assert.equal(await s.fuzzy.expire(now + 20_000), 2);
          assert.equal((await s.fuzzy.count()).size, 0);
        } finally {
          await done();
        }
      });

      it('exports and imports records with their shingles', async () => {
        const s = await open();
        try {
          const base = shingles(41);
          await s.fuzzy.add({ digest: 'e1', flag: 1, weight: 4, shingles: base }, 3600);
          await s.fuzzy.add({ digest: 'e2', flag: 7, weight: 1 }, 3600);
          const rows = (await collect(s.fuzzy.exportAll())).sort((a, b) => (a.digest < b.digest ? -1 : 1));
          assert.equal(rows.length, 2);
          assert.deepEqual(rows[0]?.shingles, base);
          assert.equal(rows[0]?.value, 4);
          assert.equal(rows[1]?.shingles, undefined);
          await s.fuzzy.remove('e1');
          await s.fuzzy.remove('e2');
          await s.fuzzy.importAll(iter(rows as FuzzyRecord[]));
          assert.equal((await s.fuzzy.check('e2'))?.flag, 7);
          const m = await s.fuzzy.check('new', edited(base, 20, 5));
          assert.deepEqual([m?.digest, m?.value, m?.prob], ['e1', 4, 20 / 32]);
        } finally {
          await done();
        }
      });
    });

    describe('HistoryStore', () => {
      it('keeps the newest rows, newest first, and resets', async () => {
        const s = await open();
        try {
          for (let i = 1; i <= CONTRACT_HISTORY_ROWS + 3; i++) await s.history.push({ unix_time: i, 'message-id': `m${i}` });
          assert.equal(await s.history.count(), CONTRACT_HISTORY_ROWS);
          const all = await s.history.list();
          assert.deepEqual(
            all.map((r) => r.unix_time),
            [8, 7, 6, 5, 4],
          );
          assert.deepEqual(
            (await s.history.list(1, 3)).map((r) => r['message-id']),
            ['m7', 'm6'],
          );
          await s.history.reset();
          assert.equal(await s.history.count(), 0);
          assert.deepEqual(await s.history.list(), []);
        } finally {
          await done();
        }
      });
    });

    describe('KvStore', () => {
      it('gets, sets, deletes, with binary values and expiry', async () => {
        const s = await open();
        try {
          const bin = Buffer.from([0, 255, 1, 254, 10, 13]);
          await s.kv.set('bin', bin);
          assert.deepEqual(await s.kv.get('bin'), bin);
          await s.kv.set('str', 'hello');
          assert.equal((await s.kv.get('str'))?.toString(), 'hello');
          assert.equal(await s.kv.get('missing'), undefined);
          await s.kv.set('ttl', 'x', 80);
          assert.equal((await s.kv.get('ttl'))?.toString(), 'x');
          await new Promise((r) => setTimeout(r, 200));
          assert.equal(await s.kv.get('ttl'), undefined);
          assert.equal(await s.kv.del('str'), true);
          assert.equal(await s.kv.del('str'), false);
          assert.equal(await s.kv.get('str'), undefined);
        } finally {
          await done();
        }
      });

      it('increments atomically under concurrency', async () => {
        const s = await open();
        try {
          const res = await Promise.all(Array.from({ length: 50 }, () => s.kv.incrBy('n', 2)));
          assert.equal(Math.max(...res), 100);
          assert.equal(new Set(res).size, 50, 'every increment saw a distinct value');
          assert.equal(await s.kv.incrBy('n', -1, 60_000), 99);
          assert.equal((await s.kv.get('n'))?.toString(), '99');
          await Promise.all(Array.from({ length: 20 }, () => s.kv.hincrBy('h', { a: 1, b: 3 })));
          assert.deepEqual(await s.kv.hincrBy('h', { a: 0, c: -2 }), { a: 20, c: -2 });
          assert.deepEqual(await s.kv.hgetall('h'), { a: '20', b: '60', c: '-2' });
          assert.deepEqual(await s.kv.hgetall('nohash'), {});
          await s.kv.hincrBy('hs', { x: 1 }, 80);
          await new Promise((r) => setTimeout(r, 200));
          assert.deepEqual(await s.kv.hgetall('hs'), {});
        } finally {
          await done();
        }
      });

      it('lists keys by prefix, bounded', async () => {
        const s = await open();
        try {
          for (const k of ['rl:a', 'rl:b', 'rl:c', 'rlx', 'gr:a']) await s.kv.set(k, '1');
          await s.kv.hincrBy('rl:h', { f: 1 });
          assert.deepEqual(await s.kv.keys('rl:'), ['rl:a', 'rl:b', 'rl:c', 'rl:h']);
          assert.equal((await s.kv.keys('rl:', 2)).length, 2);
          assert.deepEqual(await s.kv.keys('zz'), []);
          assert.equal((await s.kv.keys('')).length, 6);
        } finally {
          await done();
        }
      });
    });
  });
}
