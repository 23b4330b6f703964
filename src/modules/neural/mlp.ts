// The network: inputs → one tanh hidden layer → one tanh output in (−1, 1),
// trained with the binary cross-entropy of p = (out + 1) / 2 against spam = +1, ham = −1 (KANN's
// `ceb_neg` cost). Pure TypeScript; inputs are sparse (a message hits a few dozen of hundreds of
// symbols), so a forward pass and a gradient cost O(non-zero inputs × hidden), and Adam updates
// only the first-layer rows a mini-batch touched (lazy Adam). Training yields to the event loop
// every few milliseconds: it runs inside a scanner and must not hold scans up.

import { setImmediate as yieldNow } from 'node:timers/promises';

/** A vector as its non-zero entries. */
export interface SparseVec {
  idx: readonly number[];
  val: readonly number[];
}

export interface Sample {
  x: SparseVec;
  /** +1 spam, −1 ham. */
  y: number;
}

/** The stored form: weights as little-endian float32, base64. */
export interface MlpJson {
  nIn: number;
  nHidden: number;
  w1: string;
  b1: string;
  w2: string;
  b2: number;
}

/** Largest network loaded from the store (inputs × hidden): bounds memory taken by a bad record. */
export const MAX_WEIGHTS = 4_000_000;

/** Deterministic PRNG (mulberry32): the same data and seed train the same network. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function f32b64(a: Float64Array): string {
  return Buffer.from(Float32Array.from(a).buffer).toString('base64');
}

function b64f64(s: string, n: number): Float64Array {
  const buf = Buffer.from(s, 'base64');
  if (buf.length !== n * 4) throw new Error(`weights: expected ${n} floats, got ${buf.length / 4}`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = buf.readFloatLE(i * 4);
    if (!Number.isFinite(v)) throw new Error('weights: not a finite number');
    out[i] = v;
  }
  return out;
}

export class Mlp {
  readonly nIn: number;
  readonly nHidden: number;
  /** Row-major by input: w1[i * nHidden + j] connects input i to hidden unit j. */
  readonly w1: Float64Array;
  readonly b1: Float64Array;
  readonly w2: Float64Array;
  b2: number;

  private constructor(nIn: number, nHidden: number, w1: Float64Array, b1: Float64Array, w2: Float64Array, b2: number) {
    this.nIn = nIn;
    this.nHidden = nHidden;
    this.w1 = w1;
    this.b1 = b1;
    this.w2 = w2;
    this.b2 = b2;
  }

  /** Fresh weights, Xavier-uniform. */
  static create(nIn: number, nHidden: number, seed = 1): Mlp {
    if (!Number.isInteger(nIn) || !Number.isInteger(nHidden) || nIn < 1 || nHidden < 1 || nIn * nHidden > MAX_WEIGHTS) {
      throw new Error(`network size ${nIn}×${nHidden} out of range`);
    }
    const rnd = seededRandom(seed);
    const lim1 = Math.sqrt(6 / (nIn + nHidden));
    const lim2 = Math.sqrt(6 / (nHidden + 1));
    const w1 = new Float64Array(nIn * nHidden).map(() => (rnd() * 2 - 1) * lim1);
    const w2 = new Float64Array(nHidden).map(() => (rnd() * 2 - 1) * lim2);
    return new Mlp(nIn, nHidden, w1, new Float64Array(nHidden), w2, 0);
  }

  static fromJson(j: MlpJson): Mlp {
    const { nIn, nHidden } = j;
    if (!Number.isInteger(nIn) || !Number.isInteger(nHidden) || nIn < 1 || nHidden < 1 || nIn * nHidden > MAX_WEIGHTS) {
      throw new Error('network size out of range');
    }
    if (!Number.isFinite(j.b2)) throw new Error('weights: not a finite number');
    return new Mlp(nIn, nHidden, b64f64(j.w1, nIn * nHidden), b64f64(j.b1, nHidden), b64f64(j.w2, nHidden), j.b2);
  }

  toJson(): MlpJson {
    return { nIn: this.nIn, nHidden: this.nHidden, w1: f32b64(this.w1), b1: f32b64(this.b1), w2: f32b64(this.w2), b2: this.b2 };
  }

  /** Hidden activations into `h`; returns the output in (−1, 1). Indexes ≥ nIn are ignored. */
  forward(x: SparseVec, h: Float64Array): number {
    const H = this.nHidden;
    h.set(this.b1);
    for (let k = 0; k < x.idx.length; k++) {
      const i = x.idx[k]!;
      const v = x.val[k]!;
      if (i < 0 || i >= this.nIn || v === 0) continue;
      const row = i * H;
      for (let j = 0; j < H; j++) h[j]! += v * this.w1[row + j]!;
    }
    let z = this.b2;
    for (let j = 0; j < H; j++) {
      const a = Math.tanh(h[j]!);
      h[j] = a;
      z += this.w2[j]! * a;
    }
    return Math.tanh(z);
  }

  apply(x: SparseVec): number {
    return this.forward(x, new Float64Array(this.nHidden));
  }

  clone(): Mlp {
    return new Mlp(this.nIn, this.nHidden, this.w1.slice(), this.b1.slice(), this.w2.slice(), this.b2);
  }
}

/** Binary cross-entropy of one output against a ±1 target. */
function cost(o: number, y: number): number {
  const p = Math.min(1 - 1e-7, Math.max(1e-7, (o + 1) / 2));
  return y > 0 ? -Math.log(p) : -Math.log(1 - p);
}

export interface TrainOptions {
  epochs: number;
  learningRate: number;
  batchSize?: number;
  /** Share of the samples held out to pick the best epoch (KANN train1 keeps 10 %). */
  validation?: number;
  seed?: number;
  /** Work this long before letting the event loop run (ms). */
  sliceMs?: number;
  signal?: AbortSignal;
}

export interface TrainReport {
  epochs: number;
  trainCost: number;
  validCost: number;
  /** Output spread over the training samples; ~0 means the network learned a constant. */
  spread: number;
}

const BETA1 = 0.9;
const BETA2 = 0.999;
const EPS = 1e-8;

/**
 * Train `net` in place on the samples (shuffled, 10 % held out), Adam, mini-batches of 64 (KANN's size); the
 * weights of the epoch with the lowest held-out cost are kept.
 */
export async function trainMlp(net: Mlp, samples: readonly Sample[], opts: TrainOptions): Promise<TrainReport> {
  const H = net.nHidden;
  const rnd = seededRandom(opts.seed ?? 0x5eed);
  const order = samples.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const nValid = samples.length >= 20 ? Math.floor(samples.length * (opts.validation ?? 0.1)) : 0;
  const valid = order.slice(0, nValid);
  const train = order.slice(nValid);
  const batch = Math.max(1, opts.batchSize ?? 64);
  const lr = opts.learningRate;
  const sliceMs = opts.sliceMs ?? 4;

  const g1 = new Float64Array(net.w1.length);
  const m1 = new Float64Array(net.w1.length);
  const v1 = new Float64Array(net.w1.length);
  const gb1 = new Float64Array(H), mb1 = new Float64Array(H), vb1 = new Float64Array(H);
  const gw2 = new Float64Array(H), mw2 = new Float64Array(H), vw2 = new Float64Array(H);
  let gb2 = 0, mb2 = 0, vb2 = 0;
  const touchedMark = new Int32Array(net.nIn).fill(-1);
  const touched: number[] = [];
  const h = new Float64Array(H);
  const dh = new Float64Array(H);
  let step = 0;
  let best: Mlp | undefined;
  let bestCost = Infinity;
  let lastTrainCost = NaN;
  let sliceStart = performance.now();

  const adam = (w: Float64Array, g: Float64Array, m: Float64Array, v: Float64Array, from: number, to: number, c1: number, c2: number): void => {
    for (let k = from; k < to; k++) {
      const gk = g[k]!;
      m[k] = BETA1 * m[k]! + (1 - BETA1) * gk;
      v[k] = BETA2 * v[k]! + (1 - BETA2) * gk * gk;
      w[k]! -= (lr * (m[k]! / c1)) / (Math.sqrt(v[k]! / c2) + EPS);
      g[k] = 0;
    }
  };

  const evalCost = (ids: readonly number[]): number => {
    let c = 0;
    for (const i of ids) c += cost(net.forward(samples[i]!.x, h), samples[i]!.y);
    return ids.length > 0 ? c / ids.length : NaN;
  };

  let epoch = 0;
  for (; epoch < opts.epochs; epoch++) {
    // A fresh order every epoch, as KANN shuffles each one.
    for (let i = train.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [train[i], train[j]] = [train[j]!, train[i]!];
    }
    let epochCost = 0;
    for (let start = 0; start < train.length; start += batch) {
      if (opts.signal?.aborted) throw new Error('training aborted');
      const end = Math.min(train.length, start + batch);
      step++;
      for (let s = start; s < end; s++) {
        const { x, y } = samples[train[s]!]!;
        const o = net.forward(x, h);
        epochCost += cost(o, y);
        // d(cost)/dz for a tanh output under the cross-entropy of (o+1)/2: simply o − y.
        const dz = (o - y) / (end - start);
        gb2 += dz;
        for (let j = 0; j < H; j++) {
          gw2[j]! += dz * h[j]!;
          dh[j] = dz * net.w2[j]! * (1 - h[j]! * h[j]!);
          gb1[j]! += dh[j]!;
        }
        for (let k = 0; k < x.idx.length; k++) {
          const i = x.idx[k]!;
          const v = x.val[k]!;
          if (i < 0 || i >= net.nIn || v === 0) continue;
          if (touchedMark[i] !== step) {
            touchedMark[i] = step;
            touched.push(i);
          }
          const row = i * H;
          for (let j = 0; j < H; j++) g1[row + j]! += v * dh[j]!;
        }
      }
      const c1 = 1 - Math.pow(BETA1, step);
      const c2 = 1 - Math.pow(BETA2, step);
      for (const i of touched) adam(net.w1, g1, m1, v1, i * H, i * H + H, c1, c2);
      touched.length = 0;
      adam(net.b1, gb1, mb1, vb1, 0, H, c1, c2);
      adam(net.w2, gw2, mw2, vw2, 0, H, c1, c2);
      mb2 = BETA1 * mb2 + (1 - BETA1) * gb2;
      vb2 = BETA2 * vb2 + (1 - BETA2) * gb2 * gb2;
      net.b2 -= (lr * (mb2 / c1)) / (Math.sqrt(vb2 / c2) + EPS);
      gb2 = 0;
      if (performance.now() - sliceStart >= sliceMs) {
        await yieldNow();
        sliceStart = performance.now();
      }
    }
    lastTrainCost = train.length > 0 ? epochCost / train.length : NaN;
    if (!Number.isFinite(lastTrainCost)) throw new Error('training diverged (cost is not a number)');
    if (nValid > 0) {
      const vc = evalCost(valid);
      if (vc < bestCost) {
        bestCost = vc;
        best = net.clone();
      }
    }
  }
  if (best) {
    net.w1.set(best.w1);
    net.b1.set(best.b1);
    net.w2.set(best.w2);
    net.b2 = best.b2;
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of samples) {
    const o = net.forward(s.x, h);
    lo = Math.min(lo, o);
    hi = Math.max(hi, o);
  }
  return { epochs: epoch, trainCost: lastTrainCost, validCost: nValid > 0 ? bestCost : NaN, spread: samples.length > 0 ? hi - lo : 0 };
}
