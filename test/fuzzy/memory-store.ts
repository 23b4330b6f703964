// An in-memory FuzzyStore with the contract of src/storage/types.ts, for tests of the fuzzy
// protocol that should not depend on a back end.
import type { FuzzyMatch, FuzzyRecord, FuzzyStore } from '../../src/storage/types.js';

interface Entry {
  flag: number;
  value: number;
  updated: number;
  expires: number;
  shingles?: readonly bigint[];
}

const now = (): number => Math.floor(Date.now() / 1000);

export class MemoryFuzzyStore implements FuzzyStore {
  readonly entries = new Map<string, Entry>();
  readonly #slots = new Map<string, string>();

  async check(digest: string, shingles?: readonly bigint[]): Promise<FuzzyMatch | undefined> {
    const e = this.entries.get(digest);
    if (e && e.expires > now()) return { flag: e.flag, value: e.value, prob: 1, updated: e.updated, digest };
    if (!shingles) return undefined;
    const owners = new Map<string, number>();
    shingles.forEach((v, j) => {
      const d = this.#slots.get(`${j}_${v}`);
      if (d && this.entries.has(d)) owners.set(d, (owners.get(d) ?? 0) + 1);
    });
    let best: [string, number] | undefined;
    for (const o of owners) if (!best || o[1] > best[1]) best = o;
    if (!best || best[1] <= shingles.length / 2) return undefined;
    const b = this.entries.get(best[0])!;
    return { flag: b.flag, value: b.value, prob: best[1] / shingles.length, updated: b.updated, digest: best[0] };
  }

  async add(rec: Omit<FuzzyRecord, 'updated' | 'value'> & { weight: number }, expireSeconds: number): Promise<void> {
    const e = this.entries.get(rec.digest);
    const t = now();
    if (e && e.flag === rec.flag) {
      e.value += rec.weight;
      e.expires = t + expireSeconds;
    } else {
      const n: Entry = { flag: rec.flag, value: rec.weight, updated: t, expires: t + expireSeconds };
      if (rec.shingles) n.shingles = rec.shingles;
      this.entries.set(rec.digest, n);
    }
    rec.shingles?.forEach((v, j) => this.#slots.set(`${j}_${v}`, rec.digest));
  }

  async remove(digest: string, flag?: number): Promise<boolean> {
    const e = this.entries.get(digest);
    if (!e || (flag !== undefined && e.flag !== flag)) return false;
    this.entries.delete(digest);
    return true;
  }

  async expire(nowSeconds = now()): Promise<number> {
    let n = 0;
    for (const [d, e] of this.entries) if (e.expires <= nowSeconds) { this.entries.delete(d); n++; }
    return n;
  }

  async count(): Promise<Map<number, number>> {
    const m = new Map<number, number>();
    for (const e of this.entries.values()) m.set(e.flag, (m.get(e.flag) ?? 0) + 1);
    return m;
  }

  async *exportAll(): AsyncIterable<FuzzyRecord> {
    for (const [digest, e] of this.entries) {
      const r: FuzzyRecord = { digest, flag: e.flag, value: e.value, updated: e.updated };
      if (e.shingles) r.shingles = e.shingles;
      yield r;
    }
  }

  async importAll(rows: AsyncIterable<FuzzyRecord>): Promise<void> {
    for await (const r of rows) await this.add({ digest: r.digest, flag: r.flag, weight: r.value, ...(r.shingles ? { shingles: r.shingles } : {}) }, 172_800);
  }

  async close(): Promise<void> {}
}
