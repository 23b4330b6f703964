import type { SymbolDef } from '../../plugin-api/index.js';

export const GTUBE_SYMBOLS: Record<string, SymbolDef> = {
  // Rspamd reports GTUBE with neither description nor group.
  GTUBE: { score: 0 },
};
