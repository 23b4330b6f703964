import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4 scores and descriptions (rules/misc.lua, rules/regexp/misc.lua). */
export const URL_CHECKS_SYMBOLS: Record<string, SymbolDef> = {
  OMOGRAPH_URL: { score: 5.0, group: 'url', description: 'Url contains both latin and non-latin characters' },
  R_SUSPICIOUS_URL: { score: 5.0, group: 'url', description: 'Obfuscated or suspicious URL has been found in a message' },
  URL_IN_SUBJECT: { score: 4.0, group: 'subject', description: 'URL found in Subject' },
  URI_COUNT_ODD: { score: 1.0, group: 'url', description: 'Odd number of URIs in multipart/alternative message' },
  ZERO_WIDTH_SPACE_URL: { score: 7.0, group: 'url', description: 'Zero width space in url' },
  HAS_IPFS_GATEWAY_URL: {
    score: 6.0,
    group: 'url',
    description: 'Message contains InterPlanetary File System (IPFS) gateway URL, likely malicious',
  },
};
