// Autolearn: after the verdict, learn the message as spam or ham when the
// configured rule says so. Off by default. Failures are logged; the scan is never affected.
import type { BayesStore, Task, Verdict } from '../../plugin-api/index.js';
import { learnsOf, type BayesClassifier } from '../../rule-libs/bayes/classifier.js';
import type { AutolearnObject, BayesConfig } from '../../rule-libs/bayes/config.js';
import { BAYES_CACHE_KEY, type BayesTaskState } from './check.js';
import { isStoreError, type StoreOutage } from '../../module-helpers/outage-log.js';

type Decision = 'spam' | 'ham' | undefined;
type VerdictKind = 'passthrough' | 'spam' | 'junk' | 'ham' | 'uncertain';

/** lua_verdict's default verdict of a finished scan. */
export function verdictKind(v: Verdict): VerdictKind {
  if (v.preResult) return 'passthrough';
  let pos = 0;
  let neg = 0;
  for (const s of v.symbols) {
    if (s.score > 0) pos++;
    else if (s.score < 0) neg++;
  }
  if (v.action === 'reject' && pos > 1) return 'spam';
  if ((v.action === 'add header' || v.action === 'rewrite subject') && pos > 2) return 'junk';
  if (v.action === 'no action' && (v.score < 0 || neg > 3)) return 'ham';
  return 'uncertain';
}

function objectRule(rule: AutolearnObject, v: Verdict): Decision {
  const kind = verdictKind(v);
  if (kind === 'passthrough') return undefined;
  if (rule.spam_threshold !== undefined && rule.ham_threshold !== undefined) {
    if (kind === 'spam' && v.score >= rule.spam_threshold) return 'spam';
    if (kind === 'junk' && rule.junk_threshold !== undefined && v.score >= rule.junk_threshold) return 'spam';
    if (kind === 'ham' && v.score <= rule.ham_threshold) return 'ham';
    return undefined;
  }
  if (rule.learn_verdict) {
    if (kind === 'spam' || kind === 'junk') return 'spam';
    if (kind === 'ham') return 'ham';
  }
  return undefined;
}

/** What autolearn would learn for this verdict, before the balance and symbol checks. */
export function autolearnDecision(cfg: BayesConfig['autolearn'], v: Verdict): Decision {
  if (cfg === false) return undefined;
  if (v.preResult) return undefined;
  if (cfg === true) {
    if (v.score > v.requiredScore) return 'spam';
    if (v.score < 0) return 'ham';
    return undefined;
  }
  if (Array.isArray(cfg)) {
    const [ham, spam] = cfg[0] <= cfg[1] ? cfg : [cfg[1], cfg[0]];
    if (v.score >= spam) return 'spam';
    if (v.score <= ham) return 'ham';
    return undefined;
  }
  return objectRule(cfg, v);
}

export function makeAutolearnCheck(classifier: BayesClassifier, store: BayesStore, outage: StoreOutage) {
  const cfg = classifier.config;
  return async (task: Task): Promise<void> => {
    const state = task.cache.get(BAYES_CACHE_KEY) as BayesTaskState | undefined;
    if (!state) return;
    const decision = autolearnDecision(cfg.autolearn, task.verdict());
    if (!decision) return;
    // Already classified into that class: learning it again teaches nothing.
    if (task.hasSymbol(decision === 'spam' ? cfg.spam_symbol : cfg.ham_symbol)) return;
    try {
      if (typeof cfg.autolearn === 'object' && !Array.isArray(cfg.autolearn) && cfg.autolearn.check_balance) {
        const t = await learnsOf(store, state.scope);
        const maxRatio = 1 / cfg.autolearn.min_balance;
        if (decision === 'spam' && t.learnsSpam / (t.learnsHam + 1) > maxRatio) return;
        if (decision === 'ham' && t.learnsHam / (t.learnsSpam + 1) > maxRatio) return;
      }
      await classifier.learn(store, state.tokens, { cls: decision, messageId: task.message.messageId, user: state.scope.user });
      task.setFlag('learn_auto');
      // Debug: the scan's one info line (scan-log.ts) is the operator's record of each message.
      task.log.debug('bayes: autolearned', { class: decision });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (isStoreError(err) || code === 'LEARN_STORE_UNAVAILABLE' || code === 'LEARN_STORE_FAILED') outage(task, `not autolearned as ${decision}`, err);
      else task.log.debug('bayes: autolearn skipped', { class: decision, reason: (err as Error).message });
    }
  };
}
