// neural through the real engine on the real SQLite and Redis key-value stores: the network
// itself learns and round-trips; autotrain turns a scan stream into balanced training vectors;
// once both classes are full one scanner trains, and another scanner (its own engine and store
// connection) applies the stored network.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { multimapModule } from '../../src/modules/multimap/index.js';
import { neuralModule } from '../../src/modules/neural/index.js';
import { canPush, learnClass } from '../../src/modules/neural/autotrain.js';
import { NeuralConfig } from '../../src/modules/neural/config.js';
import { Mlp, trainMlp, type Sample } from '../../src/modules/neural/mlp.js';
import { NeuralStore } from '../../src/modules/neural/store.js';
import { decodeVector, makeProfile, METATOKEN_COUNT } from '../../src/modules/neural/vector.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores, Verdict } from '../../src/plugin-api/index.js';
import { deletePrefix, quietLog, storesConfig, uniquePrefix } from '../storage/helpers.js';
import { engineConfig, meta, symbol } from './helpers.js';

describe('neural network', () => {
  it('learns a sparse rule from noisy samples and survives serialisation', async () => {
    // Spam: input 3 or input 7 present; ham: neither. Other inputs are noise.
    let seed = 7;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const samples: Sample[] = [];
    for (let n = 0; n < 600; n++) {
      const idx = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].filter(() => rnd() < 0.3);
      const spam = idx.includes(3) || idx.includes(7);
      samples.push({ x: { idx, val: idx.map(() => 1) }, y: spam ? 1 : -1 });
    }
    const net = Mlp.create(10, 8, 1);
    const report = await trainMlp(net, samples, { epochs: 40, learningRate: 0.01 });
    const right = samples.filter((s) => Math.sign(net.apply(s.x)) === s.y).length;
    assert.ok(right / samples.length > 0.97, `accuracy ${right}/${samples.length}, ${JSON.stringify(report)}`);
    const back = Mlp.fromJson(JSON.parse(JSON.stringify(net.toJson())));
    for (const s of samples.slice(0, 20)) assert.ok(Math.abs(back.apply(s.x) - net.apply(s.x)) < 1e-5);
    assert.throws(() => Mlp.fromJson({ ...net.toJson(), w1: 'AAAA' }), /expected 80 floats/);
  });
});

describe('neural sampling and verdicts', () => {
  const train = NeuralConfig.parse({ rules: { default: {} } }).rules!['default']!.train;
  const verdict = (score: number, action: Verdict['action'], scores: number[]): Verdict => ({
    score, requiredScore: 15, action, symbols: scores.map((s, i) => ({ name: `S${i}`, score: s, metricScore: s, groups: [] })),
  });

  it('learns spam from reject with two positive symbols, ham from a negative no-action, nothing uncertain', () => {
    assert.equal(learnClass(verdict(20, 'reject', [10, 10]), train, undefined), 'spam');
    assert.equal(learnClass(verdict(-1, 'no action', [-1]), train, undefined), 'ham');
    assert.ok(typeof learnClass(verdict(2, 'no action', [2]), train, undefined) !== 'string');
    assert.equal(learnClass(verdict(2, 'no action', [2]), train, 'Spam'), 'spam', 'ANN-Train forces');
    const thresholds = { ...train, spam_score: 5, ham_score: 1 };
    assert.equal(learnClass(verdict(6, 'add header', [6]), thresholds, undefined), 'spam');
    assert.equal(learnClass(verdict(0.5, 'no action', [0.5]), thresholds, undefined), 'ham');
  });

  it('balanced mode skips the majority class in proportion and stops at max_trains', () => {
    assert.equal(canPush(train, 'spam', { spam: 0, ham: 0 }, 0.5), true);
    // 10 spam, 0 ham: skip rate 1 − 0/11 = 1, every coin skips.
    assert.equal(canPush(train, 'spam', { spam: 10, ham: 0 }, 0.999), false);
    assert.equal(canPush(train, 'ham', { spam: 10, ham: 0 }, 0.001), true);
    // 10 spam, 5 ham: skip rate 1 − 5/11 ≈ 0.545.
    assert.equal(canPush(train, 'spam', { spam: 10, ham: 5 }, 0.5), false);
    assert.equal(canPush(train, 'spam', { spam: 10, ham: 5 }, 0.6), true);
    assert.equal(canPush(train, 'ham', { spam: 1001, ham: 1001 }, 0.9), false);
  });
});

const SPAM_DOMAINS = ['spam.example', 'junk.example'];
const HAM_DOMAINS = ['friend.example', 'colleague.example'];
const MAX_TRAINS = 12;

function moduleConfig() {
  return {
    multimap: {
      rules: {
        SPAM_SENDER: { type: 'from', filter: 'email:domain', map: SPAM_DOMAINS, score: 12 },
        HAM_SENDER: { type: 'from', filter: 'email:domain', map: HAM_DOMAINS, score: -2 },
      },
    },
    neural: {
      watch_interval: 0.1,
      rules: { default: { train: { max_trains: MAX_TRAINS, spam_score: 10, ham_score: -1, max_iterations: 30 } } },
    },
  };
}

function message(domain: string, n: number): Buffer {
  return Buffer.from(`From: sender${n}@${domain}\r\nTo: user@example.net\r\nSubject: message ${n}\r\nMessage-ID: <n${n}@${domain}>\r\n\r\nBody of message ${n}.\r\n${'filler '.repeat(n % 7)}\r\n`);
}

interface Pair {
  a: Stores;
  b: Stores;
  cleanup(): Promise<void>;
}

/** Two store connections onto the same data: what two scanner processes have. */
async function openPair(backend: 'sqlite' | 'redis'): Promise<Pair> {
  if (backend === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'mailsift-neural-'));
    const open = () => openStores({ dataDir: dir, stores: storesConfig({}) }, quietLog);
    const a = await open();
    const b = await open();
    return { a, b, cleanup: async () => { await a.close(); await b.close(); await rm(dir, { recursive: true, force: true }); } };
  }
  const prefix = uniquePrefix('neural');
  const open = () => openStores({ dataDir: tmpdir(), stores: storesConfig({ backend: 'redis', redis: { servers: ['127.0.0.1:6379'], prefix } }) }, quietLog);
  const a = await open();
  const b = await open();
  return { a, b, cleanup: async () => { await a.close(); await b.close(); await deletePrefix([{ host: '127.0.0.1', port: 6379 }], prefix, false); } };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const v = await probe();
    if (v !== undefined) return v;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const backend of ['sqlite', 'redis'] as const) {
  describe(`neural on ${backend}`, () => {
    let pair: Pair;
    let first: Engine;
    let second: Engine;
    let store: NeuralStore;
    before(async () => {
      pair = await openPair(backend);
      first = await createEngine(engineConfig(moduleConfig()), [multimapModule, neuralModule], { stores: pair.a, log: quietLog });
      second = await createEngine(engineConfig(moduleConfig()), [multimapModule, neuralModule], { stores: pair.b, log: quietLog });
    });
    after(async () => pair.cleanup());

    it('stays off without rules', async () => {
      const e = await createEngine(engineConfig({ neural: {} }), [neuralModule], { stores: pair.a, log: quietLog });
      assert.equal(e.disabledModules().get('neural'), 'config');
    });

    it('autotrain stores balanced vectors from a scan stream, one scanner trains, the other applies the network', async () => {
      // Spam only at first: after the first vector the balance rule skips every further spam.
      for (let n = 0; n < 6; n++) {
        const r = await first.scan(message(SPAM_DOMAINS[n % 2]!, n), meta());
        assert.ok(symbol(r, 'SPAM_SENDER'));
        assert.equal(symbol(r, 'NEURAL_SPAM'), undefined, 'no network yet');
      }
      // The profile digest names the keys: find them in the store.
      const keys = await pair.a.kv.keys('rn_default_default_', 1000);
      const base = keys.find((k) => k.endsWith('_0_spam_n'))?.replace(/_0_spam_n$/, '');
      assert.ok(base, `keys: ${keys.join(', ')}`);
      const digest8 = base.slice('rn_default_default_'.length);
      store = new NeuralStore(pair.a.kv, 'rn', 'default', digest8);
      assert.deepEqual(await store.counts(0), { spam: 1, ham: 0 });
      const firstVector = (await store.vectors(0, 'spam', 1))[0]!;

      // An uncertain scan (score between the thresholds) is not learned; rspamc scans neither.
      await first.scan(message('neutral.example', 100), meta());
      await first.scan(message(HAM_DOMAINS[0]!, 101), meta({ userAgent: 'rspamc' }));
      assert.deepEqual(await store.counts(0), { spam: 1, ham: 0 });

      // Alternate the classes until both hold max_trains vectors: then training starts.
      for (let n = 0; n < 400; n++) {
        const spam = n % 2 === 0;
        await first.scan(message(spam ? SPAM_DOMAINS[n % 2]! : HAM_DOMAINS[(n >> 1) % 2]!, 200 + n), meta());
        const c = await store.counts(0);
        assert.ok(c.spam <= MAX_TRAINS + 1 && c.ham <= MAX_TRAINS + 1, JSON.stringify(c));
        if ((c.spam >= MAX_TRAINS && c.ham >= MAX_TRAINS) || (await store.version()) > 0) break;
      }
      await waitFor('a trained network', async () => ((await store.version()) > 0 ? true : undefined));
      const model = (await store.model(1))!;
      assert.equal(model.stored.version, 1);
      assert.ok(model.stored.symbols.includes('SPAM_SENDER') && model.stored.symbols.includes('HAM_SENDER'));
      assert.ok(model.stored.spamVectors >= MAX_TRAINS && model.stored.hamVectors >= MAX_TRAINS, JSON.stringify(model.stored));
      assert.equal(makeProfile(model.stored.symbols).digest.slice(0, 8), digest8);
      assert.deepEqual(await store.counts(0), { spam: 0, ham: 0 }, 'trained vectors are dropped');
      // The first stored vector: metatokens, then 1 for SPAM_SENDER and 0 for HAM_SENDER.
      const dense = firstVector.split(';').map(Number);
      assert.equal(dense.length, METATOKEN_COUNT + model.stored.symbols.length);
      assert.ok(decodeVector(firstVector, dense.length));
      assert.equal(dense[METATOKEN_COUNT + model.stored.symbols.indexOf('SPAM_SENDER')], 1);
      assert.equal(dense[METATOKEN_COUNT + model.stored.symbols.indexOf('HAM_SENDER')], 0);

      // The other scanner never learned anything itself: it loads version 1 from the store.
      const spam = await waitFor('NEURAL_SPAM on the second scanner', async () => {
        const r = await second.scan(message(SPAM_DOMAINS[0]!, 9001), meta());
        return symbol(r, 'NEURAL_SPAM') ? r : undefined;
      });
      const s = symbol(spam, 'NEURAL_SPAM')!;
      assert.ok(Number(s.options?.[0]) > 0.5, `output ${s.options?.[0]}`);
      const ham = await second.scan(message(HAM_DOMAINS[1]!, 9002), meta());
      assert.ok(symbol(ham, 'NEURAL_HAM'), JSON.stringify(ham.symbols.map((x) => x.name)));
      assert.ok(Number(symbol(ham, 'NEURAL_HAM')!.options?.[0]) < -0.5);
    });

    it('a newer version stored by one scanner replaces the network of the other', async () => {
      // Version 2 from inverted labels: the second scanner must switch to it within watch_interval.
      const m = (await store.model(1))!;
      const inverted = { ...m.stored, version: 2, ann: { ...m.stored.ann, b2: -m.stored.ann.b2 } };
      const net = Mlp.fromJson(m.stored.ann);
      for (let j = 0; j < net.nHidden; j++) net.w2[j] = -net.w2[j]!;
      inverted.ann = { ...net.toJson(), b2: -m.stored.ann.b2 };
      await store.saveModel(inverted, 3600);
      const flipped = await waitFor('the inverted network', async () => {
        const r = await second.scan(message(SPAM_DOMAINS[0]!, 9003), meta());
        return symbol(r, 'NEURAL_HAM') ? r : undefined;
      });
      assert.ok(!symbol(flipped, 'NEURAL_SPAM'));
    });
  });
}
