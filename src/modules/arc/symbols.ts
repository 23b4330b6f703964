import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4's ARC symbols and scores (group policies). */
export const ARC_SYMBOLS: Record<string, SymbolDef> = {
  ARC_ALLOW: { score: -1.0, group: 'policies', description: 'ARC checks success' },
  ARC_REJECT: { score: 1.0, group: 'policies', description: 'ARC checks failed' },
  ARC_INVALID: { score: 0.5, group: 'policies', description: 'ARC structure invalid' },
  ARC_DNSFAIL: { score: 0.0, group: 'policies', description: 'DNS error' },
  ARC_NA: { score: 0.0, group: 'policies', description: 'ARC signature absent' },
};
