// Verdict counters per token in the key-value store: one hash per token and counting window
// ({n, spam, ham}), so counts are bounded in time: a token's reputation is what the current and
// the previous window saw, and older windows expire.
import type { KvStore } from '../../plugin-api/index.js';
import type { TokenKind } from './tokens.js';

export interface Counts {
  n: number;
  spam: number;
  ham: number;
}

export type Verdict = 'spam' | 'ham' | 'other';

const DAY_MS = 86_400_000;

export class ReputationStore {
  readonly #kv: KvStore;
  readonly #prefix: string;
  readonly #windowMs: number;

  constructor(kv: KvStore, prefix: string, windowDays: number) {
    this.#kv = kv;
    this.#prefix = prefix;
    this.#windowMs = windowDays * DAY_MS;
  }

  #key(kind: TokenKind, value: string, window: number): string {
    return `${this.#prefix}${kind}:${value}:${window}`;
  }

  #window(now: number): number {
    return Math.floor(now / this.#windowMs);
  }

  /** The counts of the current and the previous window, added. Throws when the store fails. */
  async read(kind: TokenKind, value: string, now = Date.now()): Promise<Counts> {
    const w = this.#window(now);
    const [cur, prev] = await Promise.all([this.#kv.hgetall(this.#key(kind, value, w)), this.#kv.hgetall(this.#key(kind, value, w - 1))]);
    const num = (h: Record<string, string>, f: string): number => {
      const v = Number(h[f]);
      return Number.isFinite(v) && v > 0 ? v : 0;
    };
    return {
      n: num(cur, 'n') + num(prev, 'n'),
      spam: num(cur, 'spam') + num(prev, 'spam'),
      ham: num(cur, 'ham') + num(prev, 'ham'),
    };
  }

  /** Counts one verdict for the token. Throws when the store fails. */
  async add(kind: TokenKind, value: string, verdict: Verdict, now = Date.now()): Promise<void> {
    const fields = { n: 1, spam: verdict === 'spam' ? 1 : 0, ham: verdict === 'ham' ? 1 : 0 };
    // Kept until the window after it ends: it is read as the previous window until then.
    await this.#kv.hincrBy(this.#key(kind, value, this.#window(now)), fields, 2 * this.#windowMs);
  }

  /** True the first time `id` is seen in a window: a message scanned again is counted once. */
  async firstSight(id: string): Promise<boolean> {
    return (await this.#kv.incrBy(`${this.#prefix}seen:${id}`, 1, this.#windowMs)) === 1;
  }
}
