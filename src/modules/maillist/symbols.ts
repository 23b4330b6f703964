import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4 conf/scores.d/headers_group.conf: MAILLIST -0.2 in group headers. */
export const MAILLIST_SYMBOLS: Record<string, SymbolDef> = {
  MAILLIST: { score: -0.2, group: 'headers', description: 'Message seems to be from maillist' },
};
