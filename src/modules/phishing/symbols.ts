import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4 scores and descriptions (conf/scores.d/phishing_group.conf). */
export const PHISHING_SYMBOLS: Record<string, SymbolDef> = {
  PHISHING: { score: 4.0, group: 'phishing', description: 'Phished URL' },
  PHISHED_OPENPHISH: { score: 7.0, group: 'phishing', description: 'Phished URL found in openphish.com' },
  PHISHED_PHISHTANK: { score: 7.0, group: 'phishing', description: 'Phished URL found in phishtank.com' },
};
