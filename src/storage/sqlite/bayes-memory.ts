// The Bayes token counts of a SQLite scope held in this process's memory, kept equal to the
// database by replaying its change log. A scan's token lookups were the largest single cost of
// a trained scan: about 200 B-tree seeks and row objects, 0.6–0.9 ms a message (docs/tuning.md,
// "Bayes token counts held in memory"); from a TokenCountTable they cost a few microseconds.
//
// Every learn and unlearn writes, in its own transaction, one bayes_changes row: the scope's new
// revision and the message's distinct tokens with the classes they moved to and from. A reader
// whose table is at revision r replays the rows after r in order; a revision without its row
// (an import, a log pruned past the reader) means the table cannot be brought up to date, and
// it is read again from the database, in the background, on a connection of its own. Until a
// table is ready the scan reads SQLite as before.

import Database from 'better-sqlite3';
import type { BayesClass, BayesLearns, TokenPairs } from '../types.js';
import { MIN_CAPACITY, TokenCountTable } from '../token-table.js';
import type { SqliteDatabase } from './db.js';

/** Change-log rows kept per scope: a reader further behind than this reads the whole table again. */
export const CHANGE_LOG_KEEP = 2000;
/** Rows read between two yields to the event loop while a table is built. */
const BUILD_SLICE_ROWS = 20_000;
/** A scope too big for the budget is looked at again after this long (its tokens may have gone, or others' tables). */
const REFUSED_RETRY_MS = 10 * 60_000;
/** A build that failed (the file busy or unreadable) is tried again after this long. */
const FAILED_RETRY_MS = 30_000;
/**
 * Scopes whose state is remembered: with per-user statistics every recipient is a scope, so past
 * this the states without a table (refused or not yet read) are forgotten.
 */
const MAX_SCOPE_STATES = 10_000;

/** What a table of `tokens` counts against the budget: at least its smallest size, so many tiny scopes cannot outgrow it. */
function charge(tokens: number): number {
  return Math.max(tokens, MIN_CAPACITY);
}

/** Code of a class in a change row: 1 spam, 2 ham, 0 none. */
export function classCode(cls: BayesClass | undefined): 0 | 1 | 2 {
  return cls === 'spam' ? 1 : cls === 'ham' ? 2 : 0;
}

/** The unsigned 64-bit tokens as 8 little-endian bytes each (low half first): a change row's blob. */
export function tokenBlob(tokens: readonly bigint[]): Buffer {
  const buf = Buffer.allocUnsafe(tokens.length * 8);
  tokens.forEach((t, i) => buf.writeBigUInt64LE(t, i * 8));
  return buf;
}

interface ScopeMemory {
  table?: TokenCountTable;
  revision: number;
  building: boolean;
  /** Tokens counted against the budget for this scope (its table's estimate). */
  reserved: number;
  /** No build before this time (refused or failed). */
  notBefore: number;
}

/** What a lookup reads of the scope's row: its revision and learn counts. */
interface ScopeHead {
  revision: number;
  learns_spam: number;
  learns_ham: number;
}

interface ChangeRow {
  revision: number;
  add_cls: number;
  sub_cls: number;
  tokens: Buffer;
}

export interface BayesMemoryLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export class BayesMemory {
  readonly #db: SqliteDatabase;
  readonly #path: string;
  readonly #budget: number;
  readonly #log: BayesMemoryLog | undefined;
  readonly #scopes = new Map<number, ScopeMemory>();
  #reserved = 0;
  #closed = false;
  #nextRefusalLog = 0;
  readonly #head;
  readonly #changes;
  readonly #pair = new Uint32Array(2);

  /** `budget`: tokens held in memory at most, over every scope of this process (0: none). */
  constructor(db: SqliteDatabase, path: string, budget: number, log?: BayesMemoryLog) {
    this.#db = db;
    this.#path = path;
    this.#budget = budget;
    this.#log = log;
    this.#head = db.prepare<[number], ScopeHead>('SELECT revision, learns_spam, learns_ham FROM bayes_scopes WHERE id = ?');
    this.#changes = db.prepare<[number, number, number], ChangeRow>(
      'SELECT revision, add_cls, sub_cls, tokens FROM bayes_changes WHERE scope = ? AND revision > ? ORDER BY revision LIMIT ?',
    );
  }

  /**
   * The counts of `tokens` in scope `id` from memory, brought up to the database's revision
   * first, and the scope's learn counts read in the same query as that revision (the classifier
   * needs no query of its own; a learn committed between the two may already be in the table);
   * undefined when this scope has no table ready (the caller reads SQLite), which also starts
   * building one when the budget allows.
   */
  read(id: number, tokens: TokenPairs, spam: Uint32Array, ham: Uint32Array): BayesLearns | undefined {
    if (this.#budget <= 0 || this.#closed) return undefined;
    let st = this.#scopes.get(id);
    if (!st) {
      if (this.#scopes.size >= MAX_SCOPE_STATES) {
        this.#forgetTableless();
        // Every state holds a table: this scope is read from SQLite and not remembered.
        if (this.#scopes.size >= MAX_SCOPE_STATES) return undefined;
      }
      st = { revision: 0, building: false, reserved: 0, notBefore: 0 };
      this.#scopes.set(id, st);
    }
    if (!st.table) {
      if (!st.building && Date.now() >= st.notBefore) void this.#build(id, st);
      return undefined;
    }
    const head = this.#catchUp(id, st);
    if (!head) return undefined;
    const table = st.table;
    const pair = this.#pair;
    for (let i = 0; i < tokens.length; i++) {
      table.get(tokens.hi[i]!, tokens.lo[i]!, pair);
      spam[i] = pair[0]!;
      ham[i] = pair[1]!;
    }
    return { learnsSpam: head.learns_spam, learnsHam: head.learns_ham };
  }

  /**
   * Replays the change rows after the table's revision; the scope's row as read before the
   * replay, or undefined (and a rebuild started) when there is a gap.
   */
  #catchUp(id: number, st: ScopeMemory): ScopeHead | undefined {
    // The revision first: a learn committed between the two reads only adds rows past it.
    const head = this.#head.get(id) ?? { revision: 0, learns_spam: 0, learns_ham: 0 };
    const current = head.revision;
    if (current === st.revision) return head;
    if (current > st.revision) {
      const rows = this.#changes.all(id, st.revision, CHANGE_LOG_KEEP + 1);
      for (const r of rows) {
        if (r.revision !== st.revision + 1) break;
        this.#replay(st.table!, r);
        st.revision = r.revision;
      }
      // Learns add tokens: the budget counts what the table holds now.
      const grown = charge(st.table!.size) - st.reserved;
      if (grown > 0) {
        this.#reserved += grown;
        st.reserved += grown;
      }
      if (this.#reserved > this.#budget) {
        const size = st.table!.size;
        this.#drop(st);
        this.#refuse(id, st, size);
        return undefined;
      }
      if (st.revision >= current) return head;
    }
    // A revision without its row (an import, a pruned log) or a database that went back (replaced).
    this.#drop(st);
    void this.#build(id, st);
    return undefined;
  }

  #forgetTableless(): void {
    for (const [id, st] of this.#scopes) if (!st.table && !st.building) this.#scopes.delete(id);
  }

  #replay(table: TokenCountTable, r: ChangeRow): void {
    const add = (r.add_cls & 3) as 0 | 1 | 2;
    const sub = (r.sub_cls & 3) as 0 | 1 | 2;
    const b = r.tokens;
    for (let o = 0; o + 8 <= b.length; o += 8) table.move(b.readUInt32LE(o + 4), b.readUInt32LE(o), add, sub);
  }

  #drop(st: ScopeMemory): void {
    st.table = undefined;
    this.#reserved -= st.reserved;
    st.reserved = 0;
  }

  /** Reads scope `id` into a new table in one read transaction of its own connection, yielding between slices. */
  async #build(id: number, st: ScopeMemory): Promise<void> {
    st.building = true;
    let conn: SqliteDatabase | undefined;
    try {
      conn = new Database(this.#path, { fileMustExist: true, timeout: 5000 });
      // One pass over the table: a page cache would only keep memory the process does not give back.
      conn.pragma('cache_size = -256');
      conn.exec('BEGIN');
      const head = conn.prepare<[number], { revision: number; n: number }>('SELECT revision, tokens_spam + tokens_ham AS n FROM bayes_scopes WHERE id = ?').get(id);
      if (!head) {
        st.notBefore = Date.now() + FAILED_RETRY_MS;
        return;
      }
      // tokens_spam + tokens_ham counts a token in both classes twice: a bound on the rows.
      if (this.#reserved + charge(head.n) > this.#budget) {
        this.#refuse(id, st, head.n);
        return;
      }
      st.reserved = charge(head.n);
      this.#reserved += st.reserved;
      const table = new TokenCountTable(head.n);
      const rows = conn
        .prepare<[number], [number, number, number, number]>('SELECT (token >> 32) & 4294967295, token & 4294967295, spam, ham FROM bayes_tokens WHERE scope = ?')
        .raw(true)
        .iterate(id);
      // The counters bound the rows unless an import left rows with no counts; the budget holds either way.
      const limit = this.#budget - (this.#reserved - st.reserved);
      let n = 0;
      for (const [hi, lo, spam, ham] of rows) {
        if (n >= limit) {
          st.notBefore = Date.now() + REFUSED_RETRY_MS;
          this.#log?.info('bayes: scope has more token rows than the in-memory budget; its tokens are read from SQLite', { scope: id, budget: this.#budget });
          return;
        }
        table.set(hi, lo, spam, ham);
        if (++n % BUILD_SLICE_ROWS === 0) {
          await new Promise((r) => setImmediate(r));
          if (this.#closed) return;
        }
      }
      st.table = table;
      st.revision = head.revision;
      this.#log?.info('bayes: token counts held in memory', { scope: id, tokens: table.size, mib: Math.round(table.bytes / 1048576), revision: head.revision });
    } catch (err) {
      this.#drop(st);
      st.notBefore = Date.now() + FAILED_RETRY_MS;
      this.#log?.warn(`bayes: could not read the token counts into memory, reading SQLite instead: ${(err as Error).message}`, { scope: id });
    } finally {
      st.building = false;
      if (!st.table && st.reserved > 0) this.#drop(st);
      try {
        conn?.close();
      } catch {
        // Closing a connection that failed to open or is mid-iteration: nothing to keep.
      }
    }
  }

  /** The scope stays on SQLite for a retry period; said once per period, not per scope (per-user statistics can have thousands). */
  #refuse(id: number, st: ScopeMemory, tokens: number): void {
    const now = Date.now();
    st.notBefore = now + REFUSED_RETRY_MS;
    if (now < this.#nextRefusalLog) return;
    this.#nextRefusalLog = now + REFUSED_RETRY_MS;
    this.#log?.info('bayes: scope too big for the in-memory token budget; its tokens are read from SQLite', { scope: id, tokens, budget: this.#budget, held: this.#reserved });
  }

  close(): void {
    this.#closed = true;
    this.#scopes.clear();
    this.#reserved = 0;
  }
}
