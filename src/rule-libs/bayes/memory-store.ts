// An in-process BayesStore with the BayesStore interface's exact semantics (learn cache, relearn moving a
// message's tokens, counts never negative). For the accuracy benchmark, where a five-fold run
// learns thousands of messages and store latency would only measure the store, and for unit
// tests of the classifier. Not durable: production uses src/storage (SQLite or Redis).
import { DEFAULT_LEARN_CACHE_SIZE } from '../../storage/tokens.js';
import type { BayesClass, BayesLearns, BayesScope, BayesStore, BayesTokenCounts, BayesTotals, LearnOutcome } from '../../storage/types.js';

interface ScopeData {
  tokens: Map<bigint, { spam: number; ham: number }>;
  /** The learn cache, oldest learn first (a Map iterates in insertion order). */
  learned: Map<string, BayesClass>;
  learnsSpam: number;
  learnsHam: number;
  revision: number;
  /** Tokens with a non-zero count per class, kept up to date so totals() is O(1). */
  tokensSpam: number;
  tokensHam: number;
}

const scopeKey = (s: BayesScope): string => `${s.classifier}\u0000${s.user}`;

export class MemoryBayesStore implements BayesStore {
  readonly #scopes = new Map<string, { scope: BayesScope; data: ScopeData }>();
  readonly #cacheSize: number;

  /** `learnCacheSize`: learn-cache entries kept per scope (the most recent learns). */
  constructor(opts: { learnCacheSize?: number } = {}) {
    this.#cacheSize = opts.learnCacheSize ?? DEFAULT_LEARN_CACHE_SIZE;
  }

  #data(scope: BayesScope, create: true): ScopeData;
  #data(scope: BayesScope, create: false): ScopeData | undefined;
  #data(scope: BayesScope, create: boolean): ScopeData | undefined {
    const k = scopeKey(scope);
    let e = this.#scopes.get(k);
    if (!e && create) {
      e = { scope: { ...scope }, data: { tokens: new Map(), learned: new Map(), learnsSpam: 0, learnsHam: 0, revision: 0, tokensSpam: 0, tokensHam: 0 } };
      this.#scopes.set(k, e);
    }
    return e?.data;
  }

  async getTokens(scope: BayesScope, tokens: readonly bigint[]): Promise<BayesTokenCounts> {
    const spam = new Uint32Array(tokens.length);
    const ham = new Uint32Array(tokens.length);
    const d = this.#data(scope, false);
    if (d) {
      for (let i = 0; i < tokens.length; i++) {
        const c = d.tokens.get(tokens[i]!);
        if (c) {
          spam[i] = c.spam;
          ham[i] = c.ham;
        }
      }
    }
    return { spam, ham };
  }

  #apply(d: ScopeData, tokens: readonly bigint[], cls: BayesClass, delta: 1 | -1): void {
    for (const t of tokens) {
      let c = d.tokens.get(t);
      if (!c) {
        if (delta < 0) continue;
        c = { spam: 0, ham: 0 };
        d.tokens.set(t, c);
      }
      const was = c[cls];
      c[cls] = Math.max(0, was + delta);
      this.#countChange(d, cls, was, c[cls]);
      if (c.spam === 0 && c.ham === 0) d.tokens.delete(t);
    }
    if (cls === 'spam') d.learnsSpam = Math.max(0, d.learnsSpam + delta);
    else d.learnsHam = Math.max(0, d.learnsHam + delta);
    d.revision++;
  }

  #countChange(d: ScopeData, cls: BayesClass, was: number, now: number): void {
    const step = was === 0 && now > 0 ? 1 : was > 0 && now === 0 ? -1 : 0;
    if (cls === 'spam') d.tokensSpam += step;
    else d.tokensHam += step;
  }

  async learn(scope: BayesScope, digest: string, tokens: readonly bigint[], cls: BayesClass): Promise<LearnOutcome> {
    const d = this.#data(scope, true);
    const before = d.learned.get(digest);
    if (before === cls) return 'already_learned';
    if (before !== undefined) this.#apply(d, tokens, before, -1);
    this.#apply(d, tokens, cls, 1);
    // Re-inserted, so a relearn counts as the most recent learn; then the oldest beyond the bound go.
    d.learned.delete(digest);
    d.learned.set(digest, cls);
    for (const old of d.learned.keys()) {
      if (d.learned.size <= this.#cacheSize) break;
      d.learned.delete(old);
    }
    return before !== undefined ? 'relearned' : 'learned';
  }

  async unlearn(scope: BayesScope, digest: string, tokens: readonly bigint[]): Promise<boolean> {
    const d = this.#data(scope, false);
    const before = d?.learned.get(digest);
    if (!d || before === undefined) return false;
    this.#apply(d, tokens, before, -1);
    d.learned.delete(digest);
    return true;
  }

  async learnedAs(scope: BayesScope, digest: string): Promise<BayesClass | undefined> {
    return this.#data(scope, false)?.learned.get(digest);
  }

  async totals(scope: BayesScope): Promise<BayesTotals> {
    const d = this.#data(scope, false);
    let users = 0;
    for (const e of this.#scopes.values()) if (e.scope.classifier === scope.classifier && e.scope.user !== '') users++;
    return { learnsSpam: d?.learnsSpam ?? 0, learnsHam: d?.learnsHam ?? 0, tokensSpam: d?.tokensSpam ?? 0, tokensHam: d?.tokensHam ?? 0, users, revision: d?.revision ?? 0 };
  }

  async learns(scope: BayesScope): Promise<BayesLearns> {
    const d = this.#data(scope, false);
    return { learnsSpam: d?.learnsSpam ?? 0, learnsHam: d?.learnsHam ?? 0 };
  }

  async scopes(): Promise<BayesScope[]> {
    return [...this.#scopes.values()].map((e) => ({ ...e.scope }));
  }

  async *exportTokens(scope: BayesScope): AsyncIterable<{ token: bigint; spam: number; ham: number }> {
    const d = this.#data(scope, false);
    if (!d) return;
    for (const [token, c] of d.tokens) yield { token, spam: c.spam, ham: c.ham };
  }

  async importTokens(
    scope: BayesScope,
    rows: AsyncIterable<{ token: bigint; spam: number; ham: number }>,
    totals: Pick<BayesTotals, 'learnsSpam' | 'learnsHam'>,
  ): Promise<void> {
    const d = this.#data(scope, true);
    for await (const r of rows) {
      const c = d.tokens.get(r.token) ?? { spam: 0, ham: 0 };
      this.#countChange(d, 'spam', c.spam, c.spam + r.spam);
      this.#countChange(d, 'ham', c.ham, c.ham + r.ham);
      c.spam += r.spam;
      c.ham += r.ham;
      d.tokens.set(r.token, c);
    }
    d.learnsSpam += totals.learnsSpam;
    d.learnsHam += totals.learnsHam;
    d.revision++;
  }

  async close(): Promise<void> {}
}
