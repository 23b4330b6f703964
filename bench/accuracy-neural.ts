// `bench/accuracy-direct.ts --neural`: what the neural module adds to the score. During the folds'
// scans a capture module records each message's neural input vector (the same profile,
// metatokens and symbol values the module uses). Then, per fold, a network is trained on the
// vectors of the other four folds with their true labels (as /plugins/neural/learn would be fed)
// and applied to the held-out fold. Each message's final score gets w × output added (NEURAL_SPAM
// scored w, NEURAL_HAM −w) and the ROC-AUC and the spam recall at a ham false-positive rate of at
// most 0.1 % are compared for several w.
//
// The training vectors of a fold were scanned with a Bayes trained without them (their own
// fold's run), as autotrain would see them; the held-out fold's labels reach its network only
// through the other folds' Bayes symbols.
import { defineModule, type ModuleDefinition } from '../src/plugin-api/index.js';
import { NeuralConfig, neuralRules } from '../src/modules/neural/config.js';
import { Mlp, trainMlp, type SparseVec } from '../src/modules/neural/mlp.js';
import { makeProfile, metatokens, profileSymbols, sparseVector, type Profile } from '../src/modules/neural/vector.js';
import { recallAtFp, rocAuc } from './accuracy-metrics.js';

export interface NeuralCapture {
  module: ModuleDefinition<Record<string, never>>;
  /** The vector of the last scan, taken (and cleared) after each scan. */
  take(): SparseVec | undefined;
  profile(): Profile | undefined;
}

export function neuralCapture(): NeuralCapture {
  let last: SparseVec | undefined;
  let profile: Profile | undefined;
  const module = defineModule<Record<string, never>>({
    name: 'neural_capture',
    setup(ctx) {
      ctx.symbol({
        name: 'NEURAL_CAPTURE',
        stage: 'postfilters',
        flags: ['nostat'],
        check(task) {
          profile ??= makeProfile(profileSymbols(ctx.symbolTable(), []));
          const mt = metatokens({ size: task.raw.length, message: task.message, received: task.received, smtpRcpts: task.envelopeRcpt.length });
          last = sparseVector(profile, mt, task.verdict().symbols);
        },
      });
    },
  });
  return {
    module,
    take: () => {
      const v = last;
      last = undefined;
      return v;
    },
    profile: () => profile,
  };
}

export interface NeuralItem {
  spam: boolean;
  score: number;
  fold: number;
  vec: SparseVec;
}

export async function reportNeural(items: NeuralItem[], folds: number, profile: Profile): Promise<void> {
  const rule = neuralRules(NeuralConfig.parse({ rules: { default: {} } }))[0]!;
  const hidden = Math.min(rule.max_hidden, Math.floor(profile.length * rule.hidden_layer_mult + 1));
  const out = new Array<number>(items.length).fill(0);
  let trainMs = 0;
  for (let k = 0; k < folds; k++) {
    const net = Mlp.create(profile.length, hidden, k + 1);
    const samples = items.filter((it) => it.fold !== k).map((it) => ({ x: it.vec, y: it.spam ? 1 : -1 }));
    const t0 = performance.now();
    const rep = await trainMlp(net, samples, { epochs: rule.train.max_iterations, learningRate: rule.train.learning_rate, seed: k + 1 });
    trainMs += performance.now() - t0;
    items.forEach((it, i) => {
      if (it.fold === k) out[i] = net.apply(it.vec);
    });
    process.stderr.write(`neural fold ${k + 1}/${folds}: ${samples.length} vectors, train cost ${rep.trainCost.toFixed(4)}, held-out cost ${rep.validCost.toFixed(4)}\n`);
  }
  const spamIdx = items.map((it, i) => (it.spam ? i : -1)).filter((i) => i >= 0);
  const hamIdx = items.map((it, i) => (it.spam ? -1 : i)).filter((i) => i >= 0);
  console.log(`neural: ${profile.length} inputs (${profile.symbols.length} symbols), ${hidden} hidden, ${rule.train.max_iterations} epochs, lr ${rule.train.learning_rate}; training ${(trainMs / folds / 1000).toFixed(2)} s per fold`);
  console.log(`neural output alone: ROC-AUC ${rocAuc(spamIdx.map((i) => out[i]!), hamIdx.map((i) => out[i]!)).toFixed(5)}`);
  console.log('w (NEURAL_SPAM = w, NEURAL_HAM = -w) | ROC-AUC of the score | spam recall at ham FP <= 0.1 % (threshold)');
  for (const w of [0, 0.5, 1, 2, 3, 5, 8]) {
    const s = (i: number): number => items[i]!.score + w * out[i]!;
    const auc = rocAuc(spamIdx.map(s), hamIdx.map(s));
    const r = recallAtFp(spamIdx.map(s), hamIdx.map(s), 0.001);
    console.log(`  w=${w}: ${auc.toFixed(5)} | ${(100 * r.recall).toFixed(2)} % (score > ${r.threshold.toFixed(2)})`);
  }
}
