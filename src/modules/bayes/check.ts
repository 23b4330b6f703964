// Classification during a scan: tokenise once, read every token's counts in
// one store round trip, insert BAYES_SPAM or BAYES_HAM scaled by confidence. The tokens and the
// probability stay in the task cache for autolearn.
import type { BayesScope, BayesStore, Task } from '../../plugin-api/index.js';
import { BayesClassifier, learnsOf, principalUser } from '../../rule-libs/bayes/classifier.js';
import { MAX_TOKENIZED_CHARS, messageHasBadUnicode, type TokenList } from '../../rule-libs/bayes/tokenize.js';
import { isStoreError, type StoreOutage } from '../../module-helpers/outage-log.js';

/** Task cache key of this module's per-task state. */
export const BAYES_CACHE_KEY = 'bayes';

export interface BayesTaskState {
  tokens: TokenList;
  scope: BayesScope;
  /** Spam probability, when the classifier had enough data. */
  prob?: number;
}

/**
 * How long an answer of tooFewLearns stands. Asked on every scan, it was a query or a Redis round
 * trip per message (on Redis four commands, one of them reading every scope's name); learns that
 * cross the minimum either way, possibly made through another process, are seen within this time.
 */
const LEARNS_CHECK_TTL_MS = 1000;

/** Scopes whose answer is remembered; per-user scopes come and go with recipients. */
const LEARNS_CHECK_SCOPES = 10_000;

interface LearnsAnswer {
  few: boolean;
  until: number;
}

/**
 * Whether the store has too few learns in a class to classify anything (classifyTokens would
 * return undefined whatever the tokens). A store error answers false: the normal path then
 * reports it. Each answer is remembered per scope for LEARNS_CHECK_TTL_MS.
 */
async function tooFewLearns(store: BayesStore, scope: BayesScope, minLearns: number, known: Map<string, LearnsAnswer>): Promise<boolean> {
  const key = `${scope.classifier}\0${scope.user}`;
  const now = Date.now();
  const seen = known.get(key);
  if (seen !== undefined) {
    if (seen.until > now) return seen.few;
    known.delete(key);
  }
  try {
    const t = await learnsOf(store, scope);
    const few = t.learnsSpam < minLearns || t.learnsHam < minLearns;
    if (known.size >= LEARNS_CHECK_SCOPES) known.clear();
    known.set(key, { few, until: now + LEARNS_CHECK_TTL_MS });
    return few;
  } catch {
    return false;
  }
}

export function makeClassifyCheck(classifier: BayesClassifier, store: BayesStore, outage: StoreOutage) {
  const cfg = classifier.config;
  // Without autolearn nothing but this check uses the tokens; while the store has too few
  // learns they could not change the result, so tokenising (most of this check's CPU) waits
  // until there are enough. The bad_unicode flag tokenising sets is still computed.
  const tokensOnlyForClassify = cfg.autolearn === false;
  const learnsChecked = new Map<string, LearnsAnswer>();
  return async (task: Task): Promise<void> => {
    const msg = task.message;
    const scope = classifier.scope(principalUser(task.meta.deliverTo, task.meta.rcpt, msg));
    if (tokensOnlyForClassify && (await tooFewLearns(store, scope, classifier.params.minLearns, learnsChecked))) {
      if (messageHasBadUnicode(msg)) task.setFlag('bad_unicode');
      return;
    }
    const tokens = classifier.tokenize(msg);
    if (tokens.badUnicode) task.setFlag('bad_unicode');
    if (tokens.textCut) task.log.info('bayes: text past the tokeniser cap not split into words', { cap: MAX_TOKENIZED_CHARS });
    const state: BayesTaskState = { tokens, scope };
    task.cache.set(BAYES_CACHE_KEY, state);
    let c;
    try {
      c = await classifier.classify(store, tokens, scope);
    } catch (err) {
      // Anything but the store failing is a bug: the scheduler logs it and counts it for /errors.
      if (!isStoreError(err)) throw err;
      // The store is down or not answering in time: the scan goes on without Bayes, as Rspamd's does.
      outage(task, 'message not classified', err);
      return;
    }
    if (!c) return;
    state.prob = c.prob;
    const v = classifier.verdict(c.prob);
    if (!v) return;
    task.insert(v.symbol === 'spam' ? cfg.spam_symbol : cfg.ham_symbol, v.weight, v.option);
  };
}
