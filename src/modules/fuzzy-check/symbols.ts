import type { SymbolDef } from '../../plugin-api/index.js';

/** Scores of Rspamd's shipped rule (scores.d/fuzzy_group.conf); rules may map flags to other names. */
export const FUZZY_SYMBOLS: Record<string, SymbolDef> = {
  FUZZY_DENIED: { score: 12.0, group: 'fuzzy', description: 'Denied fuzzy hash' },
  FUZZY_PROB: { score: 5.0, group: 'fuzzy', description: 'Probable fuzzy hash' },
  FUZZY_WHITE: { score: -2.1, group: 'fuzzy', description: 'Whitelisted fuzzy hash' },
  FUZZY_UNKNOWN: { score: 5.0, group: 'fuzzy', description: 'Generic fuzzy hash match, bl.rspamd.com' },
  FUZZY_FORBIDDEN: { score: 0, group: 'fuzzy', description: 'Fuzzy access denied' },
  FUZZY_RATELIMITED: { score: 0, group: 'fuzzy', description: 'Fuzzy rate limit is reached' },
  FUZZY_ENCRYPTION_REQUIRED: { score: 0, group: 'fuzzy', description: 'Fuzzy encryption is required' },
};
