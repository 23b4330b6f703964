// One neural rule inside one engine: its input profile, the newest network it has loaded, and
// the jobs that run beside scans — checking the store for a newer version every watch_interval,
// and training (after taking the store's lock) once enough vectors are collected. Nothing here
// runs inside a scan for longer than a store read: training is started, never awaited, by scans.

import type { KvStore, Logger, SymbolTableEntry } from '../../plugin-api/index.js';
import { readyToTrain } from './autotrain.js';
import type { NeuralConfig, NeuralRule } from './config.js';
import { Mlp, trainMlp, type Sample, type SparseVec } from './mlp.js';
import { NeuralStore, type NeuralClass, type StoredModel } from './store.js';
import { decodeVector, makeProfile, METATOKENS_VERSION, profileSymbols, type Profile } from './vector.js';

export interface LoadedModel {
  version: number;
  net: Mlp;
  profile: Profile;
}

export type TrainOutcome = { trained: number } | { refused: string };

export class RuleState {
  readonly rule: NeuralRule;
  readonly #cfg: NeuralConfig;
  readonly #kv: KvStore;
  readonly #log: Logger;
  readonly #hostname: string;
  readonly #table: () => readonly SymbolTableEntry[];
  #profile: Profile | undefined;
  #store: NeuralStore | undefined;
  model: LoadedModel | undefined;
  /** Version the vectors of this scanner go to: the newest version seen in the store. */
  storeVersion = 0;
  #checkedAt = 0;
  #checking: Promise<void> | undefined;
  #training = false;

  constructor(rule: NeuralRule, cfg: NeuralConfig, kv: KvStore, log: Logger, hostname: string, table: () => readonly SymbolTableEntry[]) {
    this.rule = rule;
    this.#cfg = cfg;
    this.#kv = kv;
    this.#log = log;
    this.#hostname = hostname;
    this.#table = table;
  }

  /** The profile, built on first use (the symbol table is complete only after setup). */
  get profile(): Profile {
    this.#profile ??= makeProfile(this.rule.profile ?? profileSymbols(this.#table(), this.rule.blacklisted_symbols));
    return this.#profile;
  }

  get store(): NeuralStore {
    this.#store ??= new NeuralStore(this.#kv, this.#cfg.key_prefix, this.rule.prefix, this.profile.digest);
    return this.#store;
  }

  get training(): boolean {
    return this.#training;
  }

  /**
   * Check the store when watch_interval has passed: load a newer network, start a training when
   * the vectors are there. The first check is awaited (a scanner has nothing to apply before it);
   * later ones run in the background. Store failures are logged; the old network stays.
   */
  async refresh(now = Date.now()): Promise<void> {
    if (this.#checking) return this.#checkedAt === 0 ? this.#checking : undefined;
    if (this.#checkedAt !== 0 && now - this.#checkedAt < this.#cfg.watch_interval * 1000) return;
    const first = this.#checkedAt === 0;
    this.#checking = this.#check().finally(() => {
      this.#checkedAt = Date.now();
      this.#checking = undefined;
    });
    return first ? this.#checking : undefined;
  }

  async #check(): Promise<void> {
    try {
      await this.loadNewest();
      this.maybeTrain();
    } catch (e) {
      this.#log.warn('neural: cannot check the store for a newer network', { rule: this.rule.name, error: (e as Error).message });
    }
  }

  /** Load the newest stored version if it is newer than the one in use. */
  async loadNewest(): Promise<void> {
    const v = await this.store.version();
    this.storeVersion = Math.max(this.storeVersion, v);
    if (v === 0 || (this.model && this.model.version >= v)) return;
    const got = await this.store.model(v);
    if (!got) return;
    this.#install(got.stored, got.net);
  }

  #install(stored: StoredModel, net: Mlp): void {
    const profile = makeProfile(stored.symbols);
    if (stored.metatokensVersion !== METATOKENS_VERSION || net.nIn !== profile.length) {
      this.#log.warn('neural: stored network does not fit this version\'s inputs; ignored', { rule: this.rule.name, version: stored.version });
      return;
    }
    this.model = { version: stored.version, net, profile };
    this.storeVersion = Math.max(this.storeVersion, stored.version);
    this.#log.info('neural: network loaded', { rule: this.rule.name, version: stored.version, inputs: net.nIn, hidden: net.nHidden });
  }

  /** Start a training from the collected vectors when there are enough (background). */
  maybeTrain(): void {
    if (this.#training) return;
    const version = this.storeVersion;
    void (async () => {
      const counts = await this.store.counts(version);
      if (!readyToTrain(this.rule.train, counts)) return;
      if (!(await this.store.lock(version, this.#cfg.lock_expire))) return;
      try {
        const samples = await this.#readSamples(version, counts);
        const out = await this.train(samples, version + 1);
        if ('trained' in out) await this.store.dropVectors(version, counts);
      } finally {
        await this.store.unlock(version);
      }
    })().catch((e: unknown) => this.#log.warn('neural: training from collected vectors failed', { rule: this.rule.name, error: (e as Error).message }));
  }

  async #readSamples(version: number, counts: Record<NeuralClass, number>): Promise<Sample[]> {
    const samples: Sample[] = [];
    for (const cls of ['spam', 'ham'] as const) {
      for (const raw of await this.store.vectors(version, cls, counts[cls])) {
        const x = decodeVector(raw, this.profile.length);
        if (x) samples.push({ x, y: cls === 'spam' ? 1 : -1 });
      }
    }
    return samples;
  }

  /**
   * Train a network on labelled vectors of this profile and store it as `version` (the
   * controller's learn endpoint and the autotrain job both end here). One training at a time
   * per rule and process.
   */
  async train(samples: Sample[], version: number): Promise<TrainOutcome> {
    if (this.#training) return { refused: 'a training of this rule is already running' };
    const nSpam = samples.filter((s) => s.y > 0).length;
    const nHam = samples.length - nSpam;
    if (samples.length < this.rule.train.max_trains / 2) return { refused: `${samples.length} vectors, at least ${Math.ceil(this.rule.train.max_trains / 2)} needed` };
    if (nSpam === 0 || nHam === 0) return { refused: 'vectors of both classes are needed' };
    this.#training = true;
    try {
      const profile = this.profile;
      const hidden = Math.max(1, Math.min(this.rule.max_hidden, Math.floor(profile.length * this.rule.hidden_layer_mult + 1)));
      const net = Mlp.create(profile.length, hidden, version);
      const t0 = performance.now();
      const report = await trainMlp(net, samples, { epochs: this.rule.train.max_iterations, learningRate: this.rule.train.learning_rate, seed: version });
      if (!(report.spread > 1e-6)) {
        this.#log.warn('neural: trained network gives one constant output; not stored', { rule: this.rule.name, version });
        return { refused: 'degenerate network' };
      }
      const stored: StoredModel = {
        version,
        symbols: [...profile.symbols],
        digest: profile.digest,
        metatokensVersion: METATOKENS_VERSION,
        trainedAt: Date.now(),
        hostname: this.#hostname,
        spamVectors: nSpam,
        hamVectors: nHam,
        ann: net.toJson(),
      };
      await this.store.saveModel(stored, this.rule.ann_expire);
      if (!this.model || this.model.version < version) this.#install(stored, net);
      this.#log.info('neural: network trained and stored', { rule: this.rule.name, version, spam: nSpam, ham: nHam, epochs: report.epochs, trainCost: report.trainCost, validCost: report.validCost, ms: Math.round(performance.now() - t0) });
      return { trained: version };
    } finally {
      this.#training = false;
    }
  }

  /** The network's output for a vector (of the network's own profile). */
  apply(x: SparseVec): number | undefined {
    return this.model?.net.apply(x);
  }
}
