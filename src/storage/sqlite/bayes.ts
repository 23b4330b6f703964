// BayesStore on SQLite. Token counts live in one WITHOUT ROWID table keyed by (scope, token);
// per-scope learn and distinct-token counters live in bayes_scopes and are kept exact inside the
// same transaction as the token updates, so totals() never scans the token table.

import type { BayesClass, BayesLearns, BayesScope, BayesStore, BayesTokenCounts, BayesTotals, LearnOutcome, TokenPairs } from '../types.js';
import { DEFAULT_LEARN_CACHE_SIZE, distinctTokens, EXPORT_PAGE, fromSigned, IMPORT_BATCH, signedDecimal, toSigned, u64 } from '../tokens.js';
import { BayesMemory, CHANGE_LOG_KEEP, classCode, tokenBlob, type BayesMemoryLog } from './bayes-memory.js';
import { acquireDatabase, guard, releaseDatabase, type SqliteDatabase, type SqliteOptions } from './db.js';

/**
 * Tokens of the scopes a process reads held in its memory at most (`stores.bayes.memory_tokens`):
 * 19–37 bytes each (TokenCountTable: 13 bytes a slot, 0.35–0.7 of the slots used; 26 MiB for a
 * million), against 0.6–0.9 ms of SQLite reads a scan.
 */
export const DEFAULT_MEMORY_TOKENS = 1_000_000;

interface ScopeRow {
  id: number;
  learns_spam: number;
  learns_ham: number;
  tokens_spam: number;
  tokens_ham: number;
  revision: number;
}

export class SqliteBayesStore implements BayesStore {
  readonly #db: SqliteDatabase;
  readonly #stmt;
  /** Scope ids never change once created, so they are cached per process. */
  readonly #ids = new Map<string, number>();

  readonly #cacheSize: number;
  readonly #memory: BayesMemory;

  /**
   * `learnCacheSize`: learn-cache entries kept per scope (the most recent learns);
   * `memoryTokens`: token counts this process may hold in memory for scans (0: read SQLite every time).
   */
  constructor(opts: SqliteOptions & { learnCacheSize?: number; memoryTokens?: number; log?: BayesMemoryLog }) {
    this.#db = acquireDatabase(opts);
    this.#cacheSize = opts.learnCacheSize ?? DEFAULT_LEARN_CACHE_SIZE;
    const db = this.#db;
    guard('migrate', () => addLearnedSeq(db));
    this.#memory = guard('prepare', () => new BayesMemory(db, opts.path, opts.memoryTokens ?? DEFAULT_MEMORY_TOKENS, opts.log));
    this.#stmt = guard('prepare', () => ({
      scopeId: db.prepare<[string, string], { id: number }>('SELECT id FROM bayes_scopes WHERE classifier = ? AND user = ?'),
      scopeCreate: db.prepare('INSERT OR IGNORE INTO bayes_scopes (classifier, user) VALUES (?, ?)'),
      scopeRow: db.prepare<[number], ScopeRow>('SELECT * FROM bayes_scopes WHERE id = ?'),
      // One statement for all tokens of a message: the list travels as one JSON array, and each
      // row names its token by its place in the list, so neither side converts 64-bit values
      // (raw rows: no object per token).
      getPairs: db
        .prepare<[string, number], [number, number, number]>(
          'SELECT j.key, t.spam, t.ham FROM json_each(?) AS j CROSS JOIN bayes_tokens AS t ON t.scope = ? AND t.token = j.value',
        )
        .raw(true),
      addChange: db.prepare<[number, number, number, number, Buffer]>('INSERT OR REPLACE INTO bayes_changes (scope, revision, add_cls, sub_cls, tokens) VALUES (?, ?, ?, ?, ?)'),
      pruneChanges: db.prepare<[number, number]>('DELETE FROM bayes_changes WHERE scope = ? AND revision <= ?'),
      // Set-based updates over the JSON token list: a learn is a handful of statements, not one per token.
      countSpam: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM bayes_tokens WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND spam > 0'),
      countHam: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM bayes_tokens WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND ham > 0'),
      lastSpam: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM bayes_tokens WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND spam = 1'),
      lastHam: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM bayes_tokens WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND ham = 1'),
      // WHERE true: SQLite needs it to parse an upsert whose rows come from a SELECT.
      incSpam: db.prepare<[number, string]>(
        'INSERT INTO bayes_tokens (scope, token, spam, ham) SELECT ?, value, 1, 0 FROM json_each(?) WHERE true ON CONFLICT DO UPDATE SET spam = spam + 1',
      ),
      incHam: db.prepare<[number, string]>(
        'INSERT INTO bayes_tokens (scope, token, spam, ham) SELECT ?, value, 0, 1 FROM json_each(?) WHERE true ON CONFLICT DO UPDATE SET ham = ham + 1',
      ),
      decSpam: db.prepare<[number, string]>('UPDATE bayes_tokens SET spam = spam - 1 WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND spam > 0'),
      decHam: db.prepare<[number, string]>('UPDATE bayes_tokens SET ham = ham - 1 WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND ham > 0'),
      dropEmpty: db.prepare<[number, string]>('DELETE FROM bayes_tokens WHERE scope = ? AND token IN (SELECT value FROM json_each(?)) AND spam = 0 AND ham = 0'),
      learned: db.prepare<[number, string], { cls: BayesClass }>('SELECT cls FROM bayes_learned WHERE scope = ? AND digest = ?'),
      // seq = the scope's revision at the learn: the cache keeps the entries of the last learns.
      setLearned: db.prepare('INSERT INTO bayes_learned (scope, digest, cls, seq) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET cls = excluded.cls, seq = excluded.seq'),
      evictLearned: db.prepare('DELETE FROM bayes_learned WHERE scope = ? AND seq <= ?'),
      revision: db.prepare<[number], { revision: number }>('SELECT revision FROM bayes_scopes WHERE id = ?'),
      delLearned: db.prepare('DELETE FROM bayes_learned WHERE scope = ? AND digest = ?'),
      addCounters: db.prepare(
        'UPDATE bayes_scopes SET learns_spam = max(0, learns_spam + ?), learns_ham = max(0, learns_ham + ?), tokens_spam = tokens_spam + ?, tokens_ham = tokens_ham + ?, revision = revision + 1 WHERE id = ?',
      ),
      scopes: db.prepare<[], { classifier: string; user: string }>(
        'SELECT classifier, user FROM bayes_scopes WHERE learns_spam > 0 OR learns_ham > 0 OR tokens_spam > 0 OR tokens_ham > 0 ORDER BY classifier, user',
      ),
      users: db.prepare<[string], { n: number }>(
        "SELECT count(*) AS n FROM bayes_scopes WHERE classifier = ? AND user <> '' AND (learns_spam > 0 OR learns_ham > 0)",
      ),
      firstPage: db.prepare<[number], { token: bigint; spam: bigint; ham: bigint }>(
        `SELECT token, spam, ham FROM bayes_tokens WHERE scope = ? ORDER BY token LIMIT ${EXPORT_PAGE}`,
      ).safeIntegers(true),
      page: db.prepare<[number, bigint], { token: bigint; spam: bigint; ham: bigint }>(
        `SELECT token, spam, ham FROM bayes_tokens WHERE scope = ? AND token > ? ORDER BY token LIMIT ${EXPORT_PAGE}`,
      ).safeIntegers(true),
      importRow: db.prepare<[number, bigint, number, number]>(
        'INSERT INTO bayes_tokens (scope, token, spam, ham) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET spam = excluded.spam, ham = excluded.ham',
      ),
      recount: db.prepare<[{ id: number; ls: number; lh: number }]>(
        'UPDATE bayes_scopes SET tokens_spam = (SELECT count(*) FROM bayes_tokens WHERE scope = @id AND spam > 0), tokens_ham = (SELECT count(*) FROM bayes_tokens WHERE scope = @id AND ham > 0), learns_spam = @ls, learns_ham = @lh, revision = revision + 1 WHERE id = @id',
      ),
    }));
  }

  #scopeId(scope: BayesScope, create: boolean): number | undefined {
    const key = `${scope.classifier}\0${scope.user}`;
    const known = this.#ids.get(key);
    if (known !== undefined) return known;
    if (create) this.#stmt.scopeCreate.run(scope.classifier, scope.user);
    const id = this.#stmt.scopeId.get(scope.classifier, scope.user)?.id;
    if (id !== undefined) this.#ids.set(key, id);
    return id;
  }

  async getTokens(scope: BayesScope, tokens: readonly bigint[]): Promise<BayesTokenCounts> {
    const t = tokens.map(u64);
    return this.getTokenPairs(scope, {
      length: t.length,
      hi: Uint32Array.from(t, (v) => Number(v >> 32n)),
      lo: Uint32Array.from(t, (v) => Number(v & 0xffffffffn)),
    });
  }

  /**
   * getTokens for a tokeniser's (hi, lo) halves: from this process's memory when it holds the
   * scope (brought up to date from the change log), else one SQLite query.
   */
  async getTokenPairs(scope: BayesScope, tokens: TokenPairs): Promise<BayesTokenCounts> {
    const out: BayesTokenCounts = { spam: new Uint32Array(tokens.length), ham: new Uint32Array(tokens.length) };
    if (tokens.length === 0) return out;
    return guard('getTokens', () => {
      const id = this.#scopeId(scope, false);
      if (id === undefined) return out;
      const learns = this.#memory.read(id, tokens, out.spam, out.ham);
      if (learns) {
        out.learns = learns;
        return out;
      }
      const parts = new Array<string>(tokens.length);
      for (let i = 0; i < tokens.length; i++) parts[i] = signedDecimal(tokens.hi[i]!, tokens.lo[i]!);
      for (const [i, spam, ham] of this.#stmt.getPairs.all(`[${parts.join(',')}]`, id)) {
        out.spam[i] = spam;
        out.ham[i] = ham;
      }
      return out;
    });
  }

  /** The change-log row of the learn or unlearn that brought scope `id` to `revision`, and the pruning of old rows. */
  #logChange(id: number, revision: number, tokens: readonly bigint[], add: BayesClass | undefined, sub: BayesClass | undefined): void {
    this.#stmt.addChange.run(id, revision, classCode(add), classCode(sub), tokenBlob(tokens));
    this.#stmt.pruneChanges.run(id, revision - CHANGE_LOG_KEEP);
  }

  /** Moves one message's distinct tokens: +1 in `add`, −1 (never below 0) in `sub`; returns distinct-token deltas. */
  #apply(id: number, tokens: bigint[], add: BayesClass | undefined, sub: BayesClass | undefined): { spam: number; ham: number } {
    const d = { spam: 0, ham: 0 };
    const s = this.#stmt;
    const json = `[${tokens.map(toSigned).join(',')}]`;
    if (sub) {
      d[sub] -= (sub === 'spam' ? s.lastSpam : s.lastHam).get(id, json)?.n ?? 0;
      (sub === 'spam' ? s.decSpam : s.decHam).run(id, json);
      if (!add) s.dropEmpty.run(id, json);
    }
    if (add) {
      const before = (add === 'spam' ? s.countSpam : s.countHam).get(id, json)?.n ?? 0;
      (add === 'spam' ? s.incSpam : s.incHam).run(id, json);
      d[add] += tokens.length - before;
    }
    return d;
  }

  async learn(scope: BayesScope, digest: string, tokens: readonly bigint[], cls: BayesClass): Promise<LearnOutcome> {
    const distinct = distinctTokens(tokens);
    return guard('learn', () =>
      this.#db
        .transaction((): LearnOutcome => {
          const id = this.#scopeId(scope, true) as number;
          const prev = this.#stmt.learned.get(id, digest)?.cls;
          if (prev === cls) return 'already_learned';
          const other: BayesClass = cls === 'spam' ? 'ham' : 'spam';
          const d = this.#apply(id, distinct, cls, prev ? other : undefined);
          const ls = (cls === 'spam' ? 1 : 0) - (prev === 'spam' ? 1 : 0);
          const lh = (cls === 'ham' ? 1 : 0) - (prev === 'ham' ? 1 : 0);
          this.#stmt.addCounters.run(ls, lh, d.spam, d.ham, id);
          // Each learn raises the revision by one and writes one entry, so the entries with a
          // seq within the last cacheSize revisions are at most cacheSize.
          const rev = this.#stmt.revision.get(id)?.revision ?? 0;
          this.#logChange(id, rev, distinct, cls, prev ? other : undefined);
          this.#stmt.setLearned.run(id, digest, cls, rev);
          this.#stmt.evictLearned.run(id, rev - this.#cacheSize);
          return prev ? 'relearned' : 'learned';
        })
        .immediate(),
    );
  }

  async unlearn(scope: BayesScope, digest: string, tokens: readonly bigint[]): Promise<boolean> {
    const distinct = distinctTokens(tokens);
    return guard('unlearn', () =>
      this.#db
        .transaction((): boolean => {
          const id = this.#scopeId(scope, false);
          if (id === undefined) return false;
          const prev = this.#stmt.learned.get(id, digest)?.cls;
          if (!prev) return false;
          const d = this.#apply(id, distinct, undefined, prev);
          this.#stmt.addCounters.run(prev === 'spam' ? -1 : 0, prev === 'ham' ? -1 : 0, d.spam, d.ham, id);
          this.#logChange(id, this.#stmt.revision.get(id)?.revision ?? 0, distinct, undefined, prev);
          this.#stmt.delLearned.run(id, digest);
          return true;
        })
        .immediate(),
    );
  }

  async learnedAs(scope: BayesScope, digest: string): Promise<BayesClass | undefined> {
    return guard('learnedAs', () => {
      const id = this.#scopeId(scope, false);
      return id === undefined ? undefined : this.#stmt.learned.get(id, digest)?.cls;
    });
  }

  async totals(scope: BayesScope): Promise<BayesTotals> {
    return guard('totals', () => {
      const id = this.#scopeId(scope, false);
      const row = id === undefined ? undefined : this.#stmt.scopeRow.get(id);
      return {
        learnsSpam: row?.learns_spam ?? 0,
        learnsHam: row?.learns_ham ?? 0,
        tokensSpam: row?.tokens_spam ?? 0,
        tokensHam: row?.tokens_ham ?? 0,
        users: this.#stmt.users.get(scope.classifier)?.n ?? 0,
        revision: row?.revision ?? 0,
      };
    });
  }

  async learns(scope: BayesScope): Promise<BayesLearns> {
    return guard('totals', () => {
      const id = this.#scopeId(scope, false);
      const row = id === undefined ? undefined : this.#stmt.scopeRow.get(id);
      return { learnsSpam: row?.learns_spam ?? 0, learnsHam: row?.learns_ham ?? 0 };
    });
  }

  async scopes(): Promise<BayesScope[]> {
    return guard('scopes', () => this.#stmt.scopes.all().map((r) => ({ classifier: r.classifier, user: r.user })));
  }

  async *exportTokens(scope: BayesScope): AsyncIterable<{ token: bigint; spam: number; ham: number }> {
    const id = guard('export', () => this.#scopeId(scope, false));
    if (id === undefined) return;
    // Keyset pagination: no read transaction stays open across the consumer's awaits.
    let after: bigint | undefined;
    for (;;) {
      const rows = guard('export', () => (after === undefined ? this.#stmt.firstPage.all(id) : this.#stmt.page.all(id, after)));
      for (const r of rows) yield { token: fromSigned(r.token), spam: Number(r.spam), ham: Number(r.ham) };
      if (rows.length < EXPORT_PAGE) return;
      after = (rows[rows.length - 1] as { token: bigint }).token;
    }
  }

  async importTokens(
    scope: BayesScope,
    rows: AsyncIterable<{ token: bigint; spam: number; ham: number }>,
    totals: Pick<BayesTotals, 'learnsSpam' | 'learnsHam'>,
  ): Promise<void> {
    const id = guard('import', () => this.#db.transaction(() => this.#scopeId(scope, true) as number).immediate());
    const write = this.#db.transaction((batch: { token: bigint; spam: number; ham: number }[]) => {
      for (const r of batch) this.#stmt.importRow.run(id, toSigned(r.token), r.spam, r.ham);
    });
    let batch: { token: bigint; spam: number; ham: number }[] = [];
    for await (const r of rows) {
      batch.push(r);
      if (batch.length >= IMPORT_BATCH) {
        const b = batch;
        guard('import', () => write.immediate(b));
        batch = [];
      }
    }
    guard('import', () =>
      this.#db
        .transaction(() => {
          write(batch);
          this.#stmt.recount.run({ id, ls: totals.learnsSpam, lh: totals.learnsHam });
        })
        .immediate(),
    );
  }

  async close(): Promise<void> {
    this.#memory.close();
    releaseDatabase(this.#db);
  }
}

/**
 * Databases created before the learn cache was bounded lack bayes_learned.seq: add it, with the
 * existing entries counted as learned now (they age out after learn_cache more learns, not at
 * once). In a write transaction, so concurrent workers opening the same file migrate it once.
 */
function addLearnedSeq(db: SqliteDatabase): void {
  const has = (): boolean => (db.prepare('PRAGMA table_info(bayes_learned)').all() as { name: string }[]).some((c) => c.name === 'seq');
  if (!has()) {
    db.transaction(() => {
      if (has()) return;
      db.exec('ALTER TABLE bayes_learned ADD COLUMN seq INTEGER NOT NULL DEFAULT 0');
      db.exec('UPDATE bayes_learned SET seq = coalesce((SELECT revision FROM bayes_scopes WHERE id = bayes_learned.scope), 0)');
    }).immediate();
  }
  db.exec('CREATE INDEX IF NOT EXISTS bayes_learned_seq ON bayes_learned (scope, seq)');
}
