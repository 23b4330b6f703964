// Classification during a scan (statistics.md §4.1): tokenise once, read every token's counts in
// one store round trip, insert BAYES_SPAM or BAYES_HAM scaled by confidence. The tokens and the
// probability stay in the task cache for autolearn.
import type { BayesScope, BayesStore, Task } from '../../plugin-api/index.js';
import { BayesClassifier, principalUser } from '../../stats/classifier.js';
import { verdictOf } from '../../stats/classify.js';
import type { TokenList } from '../../stats/tokenize.js';

/** Task cache key of this module's per-task state. */
export const BAYES_CACHE_KEY = 'bayes';

export interface BayesTaskState {
  tokens: TokenList;
  scope: BayesScope;
  /** Spam probability, when the classifier had enough data. */
  prob?: number;
}

export function makeClassifyCheck(classifier: BayesClassifier, store: BayesStore) {
  const cfg = classifier.config;
  return async (task: Task): Promise<void> => {
    const msg = task.message;
    const tokens = classifier.tokenize(msg);
    if (tokens.badUnicode) task.setFlag('bad_unicode');
    const scope = classifier.scope(principalUser(task.meta.deliverTo, task.meta.rcpt, msg));
    const state: BayesTaskState = { tokens, scope };
    task.cache.set(BAYES_CACHE_KEY, state);
    let c;
    try {
      c = await classifier.classify(store, tokens, scope);
    } catch (err) {
      // The scheduler logs this and counts it for /errors; the scan goes on without Bayes.
      throw new Error(`bayes: statistics store unavailable, message not classified: ${(err as Error).message}`, { cause: err });
    }
    if (!c) return;
    state.prob = c.prob;
    const v = verdictOf(c.prob);
    if (!v) return;
    task.insert(v.symbol === 'spam' ? cfg.spam_symbol : cfg.ham_symbol, v.weight, v.option);
  };
}
