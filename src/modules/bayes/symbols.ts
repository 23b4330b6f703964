import type { SymbolDef } from '../../plugin-api/index.js';

/**
 * Full scores of the statfile symbols; the inserted weight scales them by the verdict's strength
 * (src/rule-libs/bayes/classify.ts: Rspamd's power for spam, log-odds for ham). Rspamd ships 5.1 and −3.0.
 * BAYES_HAM is stronger than Rspamd's because a ham verdict has to outweigh the few points rules
 * put on newsletters and list mail that Bayes knows to be ham. BAYES_SPAM's seed is Rspamd's 5.1;
 * the shipped table (conf/groups.yaml, round 7) raises it to 6, so that spam the classifier is sure
 * of reaches `add header` without any rule. How both were chosen on the accuracy bench is in
 * docs/tuning.md and the notes of conf/groups.yaml.
 */
export function bayesSymbols(spamSymbol = 'BAYES_SPAM', hamSymbol = 'BAYES_HAM'): Record<string, SymbolDef> {
  return {
    [spamSymbol]: { score: 5.1, group: 'statistics', description: 'Message probably spam, probability: ' },
    [hamSymbol]: { score: -7.0, group: 'statistics', description: 'Message probably ham, probability: ' },
  };
}

export const BAYES_SYMBOLS: Record<string, SymbolDef> = bayesSymbols();
