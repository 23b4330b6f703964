// How the accuracy bench divides the development split into training and evaluation parts:
// shuffled folds (every message evaluated once, by a classifier that learned the other folds) and
// a time-ordered split (learn the older part, evaluate on the newer), which is what a user gets:
// tomorrow's mail scored by a classifier trained on yesterday's.
import { parseMessage } from '../src/message/parse-message.js';
import { parseMailDate } from '../src/message/mail-date.js';
import { shuffled, type CorpusMessage } from './corpus.js';

/** One training run: learn `train` in this order, then scan `evaluate`. */
export interface Experiment {
  label: string;
  train: CorpusMessage[];
  evaluate: CorpusMessage[];
}

/**
 * When the corpus owner's machine received the message: the date after the top Received
 * header's `;` (stamped by the last hop, so not the sender's claim), else the Date header, else 0.
 */
export function receivedTime(bytes: Buffer): number {
  const msg = parseMessage(bytes);
  const top = msg.headers.first('Received')?.value;
  const stamped = top ? parseMailDate(top.slice(top.lastIndexOf(';') + 1)) : undefined;
  return (stamped ?? parseMailDate(msg.headers.first('Date')?.value ?? ''))?.getTime() ?? 0;
}

/** `folds` experiments over one seeded shuffle; each learns the other folds in the shuffled order. */
export function shuffledFolds(corpus: readonly CorpusMessage[], folds: number, seed: number): Experiment[] {
  const order = shuffled(corpus, seed);
  return Array.from({ length: folds }, (_, k) => ({
    label: `fold ${k + 1}/${folds}`,
    train: order.filter((_, i) => i % folds !== k),
    evaluate: order.filter((_, i) => i % folds === k),
  }));
}

/**
 * Each folder (easy ham, hard ham, spam) sorted by received time and cut at `trainFraction`; the
 * older parts are learned together in time order, the newer parts evaluated. The cut is per
 * folder rather than one date for all because spam-1 ends earlier than the ham folders: a single
 * cut at 80 % of all mail leaves 17 spam to evaluate (docs/tuning.md).
 */
export function timeOrdered(corpus: readonly CorpusMessage[], trainFraction: number): Experiment {
  const timed = corpus.map((m) => ({ m, t: receivedTime(m.bytes) }));
  const train: typeof timed = [];
  const evaluate: typeof timed = [];
  for (const group of new Set(corpus.map((m) => m.group))) {
    const g = timed.filter((x) => x.m.group === group).sort((a, b) => a.t - b.t || a.m.name.localeCompare(b.m.name));
    const cut = Math.round(g.length * trainFraction);
    train.push(...g.slice(0, cut));
    evaluate.push(...g.slice(cut));
  }
  const byTime = (a: { t: number; m: CorpusMessage }, b: { t: number; m: CorpusMessage }): number => a.t - b.t || a.m.name.localeCompare(b.m.name);
  return {
    label: `time-ordered (older ${Math.round(trainFraction * 100)} % of each folder learned)`,
    train: train.sort(byTime).map((x) => x.m),
    evaluate: evaluate.sort(byTime).map((x) => x.m),
  };
}
