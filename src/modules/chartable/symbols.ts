import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4 conf/scores.d/headers_group.conf; R_MIXED_CHARSET_URL lower (see conf/groups.yaml). */
export const CHARTABLE_SYMBOLS: Record<string, SymbolDef> = {
  R_MIXED_CHARSET: { score: 5.0, group: 'headers', description: 'Mixed characters in a message', oneShot: true },
  R_MIXED_CHARSET_URL: { score: 2.5, group: 'headers', description: 'Mixed characters in a URL inside message', oneShot: true },
};
