// neural: schema and defaults. `local.d/neural.yaml` holds either `rules:` (one
// network per rule) or one rule's options at the top (Rspamd's legacy form, the `default` rule).
// Without either the module stays off, as Rspamd's does without a `neural` section.
import { z } from 'zod';

export const TrainOptions = z.strictObject({
  /** Vectors per class to collect before training (Rspamd's conf: 1000). */
  max_trains: z.number().int().min(2).max(100_000).default(1000),
  /** Training epochs (KANN max_epoch). */
  max_iterations: z.number().int().min(1).max(1000).default(25),
  learning_rate: z.number().positive().max(1).default(0.01),
  /** Learn from scan verdicts; off: only the `ANN-Train` request header and /plugins/neural/learn. */
  autotrain: z.boolean().default(true),
  /** Chance of keeping one eligible sample at all. */
  train_prob: z.number().min(0).max(1).default(1),
  /** `balanced`: skip the majority class so both fill up alike; `proportional`: the skip probabilities below. */
  learn_mode: z.enum(['balanced', 'proportional']).default('balanced'),
  /** balanced mode: how much imbalance between the classes is tolerated (0: 1:1). */
  classes_bias: z.number().min(0).max(1).default(0),
  spam_skip_prob: z.number().min(0).max(1).default(0),
  ham_skip_prob: z.number().min(0).max(1).default(0),
  /** Learn spam from this score up / ham from this score down, instead of the verdict. */
  spam_score: z.number().optional(),
  ham_score: z.number().optional(),
});
export type TrainOptions = z.infer<typeof TrainOptions>;

export const RuleOptions = z.strictObject({
  train: TrainOptions.prefault({}),
  symbol_spam: z.string().regex(/^[A-Za-z0-9_]+$/).default('NEURAL_SPAM'),
  symbol_ham: z.string().regex(/^[A-Za-z0-9_]+$/).default('NEURAL_HAM'),
  /** Hidden units = floor(inputs × this + 1), capped by max_hidden. */
  hidden_layer_mult: z.number().positive().max(10).default(1.5),
  /**
   * Cap of the hidden layer. Rspamd has none (KANN in C); here training runs in the scanner's own
   * thread, time-sliced, and ~1 000 inputs × 1 500 hidden units would cost seconds of CPU per epoch.
   */
  max_hidden: z.number().int().min(1).max(1024).default(64),
  /** Output needed for NEURAL_SPAM / NEURAL_HAM (0..1); absent: any positive / negative output. */
  spam_score_threshold: z.number().min(0).max(1).optional(),
  ham_score_threshold: z.number().min(0).max(1).optional(),
  /** Insert with weight 1 instead of the output once the threshold is reached. */
  flat_threshold_curve: z.boolean().default(false),
  /** Symbols left out of the input profile. */
  blacklisted_symbols: z.array(z.string()).default([]),
  /** A fixed input profile (symbol names) instead of every symbol the engine knows. */
  profile: z.array(z.string()).max(10_000).optional(),
  /** Seconds a trained network is kept in the store (Rspamd: 2 days). */
  ann_expire: z.number().positive().default(2 * 86400),
  /** Key prefix of this rule (default: the rule name). */
  prefix: z.string().regex(/^[A-Za-z0-9_.-]+$/).optional(),
});
export type RuleOptions = z.infer<typeof RuleOptions>;

const RULE_KEYS = Object.keys(RuleOptions.shape);

/** Rspamd's legacy form: one rule's options at the top level are the `default` rule. */
function legacyToRules(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || 'rules' in raw) return raw;
  const entries = Object.entries(raw);
  const rule = entries.filter(([k]) => RULE_KEYS.includes(k));
  if (rule.length === 0) return raw;
  return { ...Object.fromEntries(entries.filter(([k]) => !RULE_KEYS.includes(k))), rules: { default: Object.fromEntries(rule) } };
}

export const NeuralConfig = z.preprocess(legacyToRules, z.strictObject({
  rules: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), RuleOptions).optional(),
  /** Seconds between checks for a newer network (and for enough vectors to train). */
  watch_interval: z.number().positive().default(60),
  /** Seconds a training lock is held before another scanner may take it over. */
  lock_expire: z.number().positive().default(600),
  /** Also learn from scans made by rspamc (User-Agent: rspamc). */
  allow_local: z.boolean().default(false),
  /** Prefix of every key in the key-value store. */
  key_prefix: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('rn'),
}));
export type NeuralConfig = z.infer<typeof NeuralConfig>;

export interface NeuralRule extends RuleOptions {
  name: string;
  prefix: string;
}

/** The configured rules; empty when the module is not configured. */
export function neuralRules(cfg: NeuralConfig): NeuralRule[] {
  return Object.entries(cfg.rules ?? {}).map(([name, r]) => ({ ...r, name, prefix: r.prefix ?? name }));
}
