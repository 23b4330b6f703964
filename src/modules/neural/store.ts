// Where networks and training vectors live in the key-value store (SQLite or Redis: every
// scanner sharing the store shares them). Keys, for rule prefix P and profile digest D
// (Rspamd's `rn_<rule>_<settings>_<digest8>_<version>` layout, flattened to plain keys because
// the KvStore has no sets or sorted sets):
//
//   <kp>_P_default_D8_version           newest trained version (absent: none yet)
//   <kp>_P_default_D8_<v>               the network of version v (JSON), expires after ann_expire
//   <kp>_P_default_D8_<v>_<cls>_n       vectors pushed for training version v+1, per class
//   <kp>_P_default_D8_<v>_<cls>_<i>     vector i (1-based) of that class
//   <kp>_P_default_D8_<v>_lock          held by the scanner training from version v's vectors

import type { KvStore } from '../../plugin-api/index.js';
import { Mlp, type MlpJson } from './mlp.js';

export type NeuralClass = 'spam' | 'ham';

/** A network as stored: its own input layout travels with it. */
export interface StoredModel {
  version: number;
  /** Profile symbols the network's inputs follow (after the metatokens). */
  symbols: string[];
  digest: string;
  metatokensVersion: number;
  trainedAt: number;
  hostname: string;
  spamVectors: number;
  hamVectors: number;
  ann: MlpJson;
}

/** Vectors read back for one training, per class: bounds what a filled-up store can cost. */
export const MAX_READ_VECTORS = 20_000;

export class NeuralStore {
  readonly base: string;
  readonly #kv: KvStore;

  constructor(kv: KvStore, keyPrefix: string, rulePrefix: string, digest: string) {
    this.#kv = kv;
    this.base = `${keyPrefix}_${rulePrefix}_default_${digest.slice(0, 8)}`;
  }

  async version(): Promise<number> {
    const raw = await this.#kv.get(`${this.base}_version`);
    const v = raw === undefined ? 0 : Number(raw.toString());
    return Number.isSafeInteger(v) && v >= 0 ? v : 0;
  }

  /** The network of a version; undefined when absent (expired) or unreadable. */
  async model(version: number): Promise<{ stored: StoredModel; net: Mlp } | undefined> {
    const raw = await this.#kv.get(`${this.base}_${version}`);
    if (!raw) return undefined;
    const stored = JSON.parse(raw.toString()) as StoredModel;
    if (!Array.isArray(stored.symbols) || !stored.ann || stored.version !== version) throw new Error('malformed network record');
    return { stored, net: Mlp.fromJson(stored.ann) };
  }

  /** Store a network and make it the newest version (never lowers the version pointer). */
  async saveModel(m: StoredModel, expireSeconds: number): Promise<void> {
    await this.#kv.set(`${this.base}_${m.version}`, JSON.stringify(m), expireSeconds * 1000);
    if ((await this.version()) < m.version) await this.#kv.set(`${this.base}_version`, String(m.version));
  }

  async counts(version: number): Promise<Record<NeuralClass, number>> {
    const [s, h] = await Promise.all([this.#kv.get(this.#countKey(version, 'spam')), this.#kv.get(this.#countKey(version, 'ham'))]);
    const n = (b: Buffer | undefined): number => {
      const v = b === undefined ? 0 : Number(b.toString());
      return Number.isSafeInteger(v) && v > 0 ? v : 0;
    };
    return { spam: n(s), ham: n(h) };
  }

  /** Append a vector; returns its slot, or 0 when `cap` slots are taken already. */
  async push(version: number, cls: NeuralClass, encoded: string, cap: number): Promise<number> {
    const slot = await this.#kv.incrBy(this.#countKey(version, cls), 1);
    if (slot > cap) {
      await this.#kv.incrBy(this.#countKey(version, cls), -1);
      return 0;
    }
    await this.#kv.set(`${this.base}_${version}_${cls}_${slot}`, encoded);
    return slot;
  }

  /** Stored vectors of a class (slots still being written are skipped). */
  async vectors(version: number, cls: NeuralClass, n: number): Promise<string[]> {
    const out: string[] = [];
    const total = Math.min(n, MAX_READ_VECTORS);
    for (let start = 1; start <= total; start += 100) {
      const slots = Array.from({ length: Math.min(100, total - start + 1) }, (_, k) => start + k);
      const got = await Promise.all(slots.map((i) => this.#kv.get(`${this.base}_${version}_${cls}_${i}`)));
      for (const g of got) if (g) out.push(g.toString());
    }
    return out;
  }

  /** Drop the vectors collected under a version once they are trained on. */
  async dropVectors(version: number, counts: Record<NeuralClass, number>): Promise<void> {
    for (const cls of ['spam', 'ham'] as const) {
      await this.#kv.del(this.#countKey(version, cls));
      const total = Math.min(counts[cls], MAX_READ_VECTORS);
      for (let start = 1; start <= total; start += 100) {
        const slots = Array.from({ length: Math.min(100, total - start + 1) }, (_, k) => start + k);
        await Promise.all(slots.map((i) => this.#kv.del(`${this.base}_${version}_${cls}_${i}`)));
      }
    }
  }

  /** Take the training lock of a version; false when another scanner holds it. */
  async lock(version: number, expireSeconds: number): Promise<boolean> {
    const key = `${this.base}_${version}_lock`;
    // Without a TTL: the attempts of others must not keep extending the holder's expiry.
    if ((await this.#kv.incrBy(key, 1)) !== 1) return false;
    await this.#kv.set(key, '1', expireSeconds * 1000);
    return true;
  }

  async unlock(version: number): Promise<void> {
    await this.#kv.del(`${this.base}_${version}_lock`);
  }

  #countKey(version: number, cls: NeuralClass): string {
    return `${this.base}_${version}_${cls}_n`;
  }
}
