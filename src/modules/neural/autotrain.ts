// Which scans become training vectors: the verdict (Rspamd's lua_verdict) or
// the rule's score thresholds pick the class, an `ANN-Train` request header forces one, and
// sampling keeps the two classes balanced while they fill up to max_trains.

import type { Verdict } from '../../plugin-api/index.js';
import type { TrainOptions } from './config.js';
import type { NeuralClass } from './store.js';

export type VerdictName = 'spam' | 'junk' | 'ham' | 'uncertain' | 'passthrough';

/** Rspamd's default verdict of a finished scan. */
export function verdictOf(v: Verdict): VerdictName {
  if (v.preResult) return 'passthrough';
  const positive = v.symbols.filter((s) => s.score > 0).length;
  const negative = v.symbols.filter((s) => s.score < 0).length;
  if (v.action === 'reject' && positive > 1) return 'spam';
  if (v.action === 'no action') return v.score < 0 || negative > 3 ? 'ham' : 'uncertain';
  if ((v.action === 'add header' || v.action === 'rewrite subject') && positive > 2) return 'junk';
  return 'uncertain';
}

/** The class a scan would be learned as, or why not. */
export function learnClass(v: Verdict, train: TrainOptions, header: string | undefined): NeuralClass | { skip: string } {
  const forced = header?.trim().toLowerCase();
  if (forced === 'spam' || forced === 'ham') return forced;
  if (!train.autotrain) return { skip: 'autotrain is off and no ANN-Train header' };
  const verdict = verdictOf(v);
  if (verdict === 'passthrough') return { skip: 'passthrough verdict' };
  if (!Number.isFinite(v.score)) return { skip: 'score is not a number' };
  const spam = train.spam_score !== undefined ? v.score >= train.spam_score : verdict === 'spam' || verdict === 'junk';
  if (spam) return 'spam';
  const ham = train.ham_score !== undefined ? v.score <= train.ham_score : verdict === 'ham';
  if (ham) return 'ham';
  return { skip: `verdict ${verdict}, score ${v.score}` };
}

/**
 * Whether to store a vector of class `cls` given what is stored (Rspamd's can_push_train_vector).
 * `coin` is uniform in [0, 1).
 */
export function canPush(train: TrainOptions, cls: NeuralClass, counts: Record<NeuralClass, number>, coin: number): boolean {
  if (coin < 1 - train.train_prob) return false;
  const mine = counts[cls];
  const other = counts[cls === 'spam' ? 'ham' : 'spam'];
  if (mine > train.max_trains) return false;
  if (train.learn_mode === 'balanced') {
    if (mine > other) {
      const skipRate = 1 - other / (mine + 1);
      if (coin < skipRate - train.classes_bias) return false;
    }
    return true;
  }
  return coin > (cls === 'spam' ? train.spam_skip_prob : train.ham_skip_prob);
}

/** Whether the collected vectors are enough to train (Rspamd's check before taking the lock). */
export function readyToTrain(train: TrainOptions, counts: Record<NeuralClass, number>): boolean {
  const max = Math.max(counts.spam, counts.ham);
  const min = Math.min(counts.spam, counts.ham);
  if (counts.spam + counts.ham < train.max_trains / 2) return false;
  if (train.learn_mode === 'balanced') return max >= train.max_trains && min >= train.max_trains * (1 - train.classes_bias);
  return min > 0 && max >= train.max_trains;
}
