import type { SymbolDef } from '../../plugin-api/index.js';

/**
 * Full scores of the statfile symbols; the inserted weight scales them by the verdict's strength
 * (src/rule-libs/bayes/classify.ts: Rspamd's power for spam, log-odds for ham). Rspamd ships 5.1 and −3.0.
 * BAYES_HAM was tuned on the accuracy bench (`npm run bench:accuracy`: five-fold cross-validation
 * on the development split, the rules' scores fixed, the same scans rescored): a ham verdict has
 * to outweigh the few points rules put on newsletters and list mail that Bayes knows to be ham.
 * BAYES_HAM −3 → −4 → −7 took false positives from 6 to 5 of 2750 and the ROC-AUC of the whole
 * score from 0.99936 to 0.99945 to 0.99951, at one spam of recall (485 → 484 of 500); beyond −7
 * nothing changed. BAYES_SPAM anywhere from 4 to 8 gave the same false positives and recall and
 * an AUC within 0.00001, so it keeps Rspamd's 5.1. Choosing both inside each training split
 * (nested cross-validation) gave the same totals: 5 false positives, 484 spam.
 */
export function bayesSymbols(spamSymbol = 'BAYES_SPAM', hamSymbol = 'BAYES_HAM'): Record<string, SymbolDef> {
  return {
    [spamSymbol]: { score: 5.1, group: 'statistics', description: 'Message probably spam, probability: ' },
    [hamSymbol]: { score: -7.0, group: 'statistics', description: 'Message probably ham, probability: ' },
  };
}

export const BAYES_SYMBOLS: Record<string, SymbolDef> = bayesSymbols();
