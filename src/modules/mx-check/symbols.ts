import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4 mx_check.lua: scores, group and descriptions. */
export const MX_CHECK_SYMBOLS: Record<string, SymbolDef> = {
  MX_INVALID: { score: 0.5, group: 'MX', description: 'Domain has no working MX', oneShot: true },
  MX_MISSING: { score: 3.5, group: 'MX', description: 'Domain has no resolvable MX', oneShot: true },
  MX_GOOD: { score: -0.01, group: 'MX', description: 'Domain has working MX', oneShot: true },
  MX_WHITE: { score: 0.0, group: 'MX', description: 'Domain is whitelisted from MX check', oneShot: true },
};
