// The Bayes classifier proper: per-token spam probabilities from the two
// statfiles' counts, weighted by the OSB distance, combined with Robinson/Fisher chi-square into
// one spam probability, and that probability turned into BAYES_SPAM / BAYES_HAM weight and option.
import type { TokenList } from './tokenize.js';

export interface ClassifyParams {
  /** Each class needs this many learned messages before anything is classified. */
  minLearns: number;
  /** A token is used only when seen this many times in both classes together. */
  minTokenHits: number;
  /** Tokens whose probability is within this of 0.5 carry no information and are skipped. */
  minProbStrength: number;
  /** Fewer tokens: the message is not classified (and cannot be learned). */
  minTokens: number;
}

/** Rspamd's defaults except minTokenHits (1, not 2: config.ts says why). */
export const DEFAULT_CLASSIFY_PARAMS: ClassifyParams = { minLearns: 200, minTokenHits: 1, minProbStrength: 0.05, minTokens: 11 };

/** Feature weight by OSB distance (5^5, 4^4, 3^3, 1^1): close pairs say more than far ones. */
const FEATURE_WEIGHTS = [0, 3125, 256, 27, 1, 0, 0, 0] as const;
/** Below this log-likelihood the chi-square series underflows; use the logistic form instead. */
const CHI_UNDERFLOW = -300;

export interface Classification {
  /** Spam probability of the message. */
  prob: number;
  /** Tokens that contributed. */
  used: number;
  /** Of those, tokens that were not metatokens. */
  usedText: number;
}

/** Upper tail of the chi-square distribution with 2n degrees of freedom at -2x, capped at 1. */
export function invChiSquare(x: number, n: number): number {
  const m = -x;
  let term = Math.exp(x);
  let sum = term;
  for (let i = 1; i < n; i++) {
    term *= m / i;
    sum += term;
  }
  return Math.min(1, sum);
}

/**
 * Combine the counts of a message's tokens. `spam[i]`/`ham[i]` are the counts of token i;
 * returns undefined when the classifier has nothing to say (too few learns or useful tokens).
 */
export function classifyTokens(
  tokens: TokenList,
  spam: ArrayLike<number>,
  ham: ArrayLike<number>,
  learnsSpam: number,
  learnsHam: number,
  params: ClassifyParams = DEFAULT_CLASSIFY_PARAMS,
): Classification | undefined {
  if (learnsSpam < params.minLearns || learnsHam < params.minLearns) return undefined;
  if (tokens.textCount === 0) return undefined;
  // Metatokens are ignored when Rspamd's own outnumber the words (a near-empty body is all
  // structure). mailsift's header tokens do not count here: a short message is where the
  // sender and relay facts matter most.
  const metaCount = tokens.length - tokens.textCount - (tokens.extensionCount ?? 0);
  const skipMeta = tokens.textCount <= metaCount;
  const ls = Math.max(1, learnsSpam);
  const lh = Math.max(1, learnsHam);
  let sumS = 0;
  let sumH = 0;
  let used = 0;
  let usedText = 0;
  for (let i = 0; i < tokens.length; i++) {
    const isMeta = tokens.meta[i] === 1;
    if (isMeta && skipMeta) continue;
    const s = spam[i]!;
    const h = ham[i]!;
    const n = s + h;
    if (n < params.minTokenHits) continue;
    const fs = s / ls;
    const fh = h / lh;
    const ps = fs / (fs + fh);
    const ph = fh / (fs + fh);
    const win = tokens.window[i]!;
    const fw = win === 0 ? 1 : FEATURE_WEIGHTS[win] ?? 0;
    const w = (fw * n) / (1 + fw * n);
    const bs = (w * 0.5 + n * ps) / (w + n);
    if (bs !== 0.5 && Math.abs(bs - 0.5) < params.minProbStrength) continue;
    const bh = (w * 0.5 + n * ph) / (w + n);
    sumS += Math.log(bs);
    sumH += Math.log(bh);
    used++;
    if (!isMeta) usedText++;
  }
  if (used === 0 || usedText < Math.floor(params.minTokens * 0.1)) return undefined;
  return { prob: combine(sumS, sumH, used), used, usedText };
}

/** Fisher/Robinson combination of the summed log probabilities into one spam probability. */
export function combine(ls: number, lh: number, n: number): number {
  let h: number;
  let s: number;
  if (ls > CHI_UNDERFLOW && lh > CHI_UNDERFLOW) {
    h = 1 - invChiSquare(ls, n);
    s = 1 - invChiSquare(lh, n);
  } else if (ls < lh) {
    const e = Math.exp(ls - lh);
    h = (1 - e) / (1 + e);
    s = 1 - h;
  } else {
    const e = Math.exp(lh - ls);
    s = (1 - e) / (1 + e);
    h = 1 - s;
  }
  if (!Number.isFinite(s) || !Number.isFinite(h)) {
    if (Number.isFinite(h)) return 1;
    if (Number.isFinite(s)) return 0;
    return 0.5;
  }
  return (s + 1 - h) / 2;
}

export interface BayesVerdict {
  symbol: 'spam' | 'ham';
  /** Insertion weight in (0, 1]; the symbol's score is multiplied by it. */
  weight: number;
  /** Option text, e.g. "98.20%". */
  option: string;
}

/** `rspamd`: Rspamd's ((q − 0.5)·2)^power (Rspamd's power is 8). `log_odds`: log10(q / (1 − q)) / fullOdds, capped at 1. */
export type ScalingMode = 'log_odds' | 'rspamd';

/**
 * How a probability scales the statfile symbol's score, per verdict. Rspamd's power 8 all but
 * ignores verdicts below 90 % (0.17 of the score at 90 %, 0.004 at 75 %); the log-odds weight
 * counts a verdict in proportion to its evidence (the score is a sum, and summed log-odds is
 * what a naive-Bayes verdict is), reaching the full score at odds of 10^fullOdds : 1.
 *
 * The default is asymmetric because the errors are: a spam verdict adds points only when it is
 * strong (Rspamd's power), a ham verdict takes them off in proportion to its evidence, so the
 * newsletters and list mail that rules push up are pulled back even when Bayes is only fairly
 * sure. On the accuracy bench the three choices differ by a message or two (docs/tuning.md): the
 * choice rests on the asymmetry of the errors more than on the bench.
 *
 * The power is Rspamd's 8 (0.85 of the score at 99 %, 0.43 at 95 %). It was 16 while every scan
 * of the accuracy bench carried a constant HFILTER_HOSTNAME_UNKNOWN (2.5), and the verdicts
 * between 75 % and 98 % that power 8 counts pushed commercial newsletters of hard ham over the
 * line; with the client read from Received (round 6) power 8 catches 3 more of 500 spam on the
 * shuffled folds with no false positive on either split (docs/tuning.md).
 */
export interface ScoreScaling {
  spam: ScalingMode;
  ham: ScalingMode;
  fullOdds: number;
  /** Exponent of the `rspamd` mode. */
  power: number;
}

export const DEFAULT_SCORE_SCALING: ScoreScaling = { spam: 'rspamd', ham: 'log_odds', fullOdds: 3, power: 8 };

/** Which statfile symbol a probability earns, if any, and its weight. */
export function verdictOf(prob: number, scaling: ScoreScaling = DEFAULT_SCORE_SCALING): BayesVerdict | undefined {
  if (Math.abs(prob - 0.5) <= 0.05) return undefined;
  const spam = prob > 0.5;
  const q = spam ? prob : 1 - prob;
  const mode = spam ? scaling.spam : scaling.ham;
  const weight = mode === 'rspamd' ? ((q - 0.5) * 2) ** scaling.power : Math.min(1, Math.log10(q / (1 - q)) / scaling.fullOdds);
  return { symbol: spam ? 'spam' : 'ham', weight, option: `${((q - 0.5) * 200).toFixed(2)}%` };
}
