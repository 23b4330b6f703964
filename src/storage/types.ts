// Store interfaces. Each has an embedded SQLite implementation (the default:
// one file under data_dir, WAL, safe with several processes writing, durable before a write
// resolves) and a Redis implementation (standalone, Sentinel or Cluster). One config key picks
// the back end per store; one contract suite (test/storage/) runs against both.
//
// Stores throw only StoreError (code STORE_UNAVAILABLE / STORE_FAILED); callers inside a scan
// turn that into a degraded symbol, never a failed scan.

export type BayesClass = 'spam' | 'ham';

/** One statfile's scope: a classifier name and an optional user (per-user statistics). */
export interface BayesScope {
  classifier: string;
  /** Lower-cased principal recipient when per-user statistics are on; '' for the global statfiles. */
  user: string;
}

export interface BayesTokenCounts {
  /** spam[i], ham[i]: how often tokens[i] was learned in each class. */
  spam: Uint32Array;
  ham: Uint32Array;
  /**
   * The scope's learn counts, when the store read them in the same call (Redis: inside the lookup
   * script). A classification then needs no second request for them.
   */
  learns?: BayesLearns;
}

/** Messages learned per class: all a classification needs of a scope's totals. */
export interface BayesLearns {
  learnsSpam: number;
  learnsHam: number;
}

export interface BayesTotals extends BayesLearns {
  /** Distinct tokens stored per class. */
  tokensSpam: number;
  tokensHam: number;
  /** Users with per-user data (0 when per-user statistics are off). */
  users: number;
  /** Incremented on every learn; `statfiles_revision`. */
  revision: number;
}

export type LearnOutcome = 'learned' | 'relearned' | 'already_learned';

/** Tokens as their high and low 32-bit halves, in parallel arrays (the tokeniser's TokenList is one). */
export interface TokenPairs {
  readonly length: number;
  readonly hi: Uint32Array;
  readonly lo: Uint32Array;
}

export interface BayesStore {
  /** One round trip for all tokens of a message. Tokens are 64-bit hashes. */
  getTokens(scope: BayesScope, tokens: readonly bigint[]): Promise<BayesTokenCounts>;
  /**
   * getTokens with each token as its high and low 32-bit halves, as the tokeniser makes them: a
   * store that has it spares the scan the 64-bit conversions (SQLite; see sqlite/bayes-memory.ts).
   */
  getTokenPairs?(scope: BayesScope, tokens: TokenPairs): Promise<BayesTokenCounts>;
  /**
   * Learn a message atomically with the learn cache: the same digest learned again in the same
   * class → 'already_learned' (nothing changes); learned before in the other class → its tokens
   * move to `cls` ('relearned'). Resolves only once the write is durable.
   */
  learn(scope: BayesScope, digest: string, tokens: readonly bigint[], cls: BayesClass): Promise<LearnOutcome>;
  /** Remove a message learned before (by digest); false when it was not learned. */
  unlearn(scope: BayesScope, digest: string, tokens: readonly bigint[]): Promise<boolean>;
  /** Which class a digest was learned as, if any. */
  learnedAs(scope: BayesScope, digest: string): Promise<BayesClass | undefined>;
  totals(scope: BayesScope): Promise<BayesTotals>;
  /**
   * The learn counts alone, for the checks made on every scan: cheaper than totals(), which also
   * counts tokens and users (on Redis a read of every scope's name). Stores without it are asked
   * for totals() (learnsOf).
   */
  learns?(scope: BayesScope): Promise<BayesLearns>;
  /** Every scope with data (for /stat and export). */
  scopes(): Promise<BayesScope[]>;
  /** Stream every token row of a scope (for `mailsift stats export`). */
  exportTokens(scope: BayesScope): AsyncIterable<{ token: bigint; spam: number; ham: number }>;
  importTokens(scope: BayesScope, rows: AsyncIterable<{ token: bigint; spam: number; ham: number }>, totals: BayesLearns): Promise<void>;
  close(): Promise<void>;
}

export interface FuzzyRecord {
  /** 32-byte digest (hex) of the whole text/attachment. */
  digest: string;
  /** 32 shingle hashes of a long text, absent for short texts and binary hashes. */
  shingles?: readonly bigint[];
  flag: number;
  value: number;
  /** Seconds since the epoch of the last add/refresh. */
  updated: number;
  /** Lifetime in seconds after `updated` (export/import carry it; the store's default when absent). */
  expire?: number;
}

export interface FuzzyMatch {
  flag: number;
  value: number;
  /** 1 for an exact digest match, matched/32 for a shingle match. */
  prob: number;
  updated: number;
  digest: string;
}

export interface FuzzyStore {
  /** Exact digest first; otherwise the entry sharing more than half of the 32 shingles. */
  check(digest: string, shingles?: readonly bigint[]): Promise<FuzzyMatch | undefined>;
  /** Add `weight` to the value of (digest, flag), creating it; refreshes the expiry. */
  add(rec: Omit<FuzzyRecord, 'updated' | 'value'> & { weight: number }, expireSeconds: number): Promise<void>;
  /** Delete (digest, flag); returns whether something was deleted. */
  remove(digest: string, flag?: number): Promise<boolean>;
  /** Drop entries not refreshed within their expiry; returns how many. */
  expire(nowSeconds?: number): Promise<number>;
  /** Entry counts per flag. */
  count(): Promise<Map<number, number>>;
  exportAll(): AsyncIterable<FuzzyRecord>;
  importAll(rows: AsyncIterable<FuzzyRecord>): Promise<void>;
  close(): Promise<void>;
}

/** One row of the rolling scan history, in the v2 layout the web UI reads from /history. */
export type HistoryRow = Record<string, unknown> & { unix_time: number; 'message-id'?: string };

export interface HistoryStore {
  /** Append a row; the store keeps the newest `limit` rows. */
  push(row: HistoryRow): Promise<void>;
  /** Newest first; `from`/`to` are row indexes (inclusive from, exclusive to). */
  list(from?: number, to?: number): Promise<HistoryRow[]>;
  count(): Promise<number>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Generic key-value state: rate-limit buckets, greylist triplets, counters, dynamic config, graph series. */
export interface KvStore {
  get(key: string): Promise<Buffer | undefined>;
  /** `ttlMs` 0 or absent: no expiry. */
  set(key: string, value: Buffer | string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<boolean>;
  /** Atomic add to an integer value (missing = 0); returns the new value. */
  incrBy(key: string, delta: number, ttlMs?: number): Promise<number>;
  /** Atomic multi-field add to a hash of numbers (missing fields = 0). */
  hincrBy(key: string, fields: Record<string, number>, ttlMs?: number): Promise<Record<string, number>>;
  hgetall(key: string): Promise<Record<string, string>>;
  /** Keys with this prefix (bounded scan). */
  keys(prefix: string, limit?: number): Promise<string[]>;
  close(): Promise<void>;
}

export interface Stores {
  bayes: BayesStore;
  fuzzy: FuzzyStore;
  history: HistoryStore;
  kv: KvStore;
  /**
   * The same stores as scans use them: each call bounded by the scan time-out
   * (`stores.redis.scan_timeout`), so a Redis that hangs costs a scan a fraction of a second and
   * its checks degrade as when Redis is down. Its close() closes nothing. Absent: scans use the
   * stores themselves (in-memory stores of tests).
   */
  scan?: Stores;
  close(): Promise<void>;
}

/** The stores a scan should use: their scan view when they have one. */
export function scanStores(stores: Stores): Stores {
  return stores.scan ?? stores;
}

export type StoreErrorCode = 'STORE_UNAVAILABLE' | 'STORE_FAILED';

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'StoreError';
  }
}
