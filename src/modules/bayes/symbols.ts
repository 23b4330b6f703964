import type { SymbolDef } from '../../plugin-api/index.js';

/** Default scores as in Rspamd's statistics_group.conf; the inserted weight scales them by confidence. */
export function bayesSymbols(spamSymbol = 'BAYES_SPAM', hamSymbol = 'BAYES_HAM'): Record<string, SymbolDef> {
  return {
    [spamSymbol]: { score: 5.1, group: 'statistics', description: 'Message probably spam, probability: ' },
    [hamSymbol]: { score: -3.0, group: 'statistics', description: 'Message probably ham, probability: ' },
  };
}

export const BAYES_SYMBOLS: Record<string, SymbolDef> = bayesSymbols();
