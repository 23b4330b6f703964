import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4's SPF symbols and scores (group policies). */
export const SPF_SYMBOLS: Record<string, SymbolDef> = {
  R_SPF_ALLOW: { score: -0.2, group: 'policies', description: 'SPF verification allows sending' },
  R_SPF_FAIL: { score: 1.0, group: 'policies', description: 'SPF verification failed' },
  R_SPF_SOFTFAIL: { score: 0.0, group: 'policies', description: 'SPF verification soft-failed' },
  R_SPF_NEUTRAL: { score: 0.0, group: 'policies', description: 'SPF policy is neutral' },
  R_SPF_DNSFAIL: { score: 0.0, group: 'policies', description: 'SPF DNS failure' },
  R_SPF_PERMFAIL: { score: 0.0, group: 'policies', description: 'SPF record is malformed or persistent DNS error' },
  R_SPF_NA: { score: 0.0, group: 'policies', description: 'Missing SPF record' },
};

export const SPF_RESULT_SYMBOL: Record<string, string> = {
  pass: 'R_SPF_ALLOW',
  fail: 'R_SPF_FAIL',
  softfail: 'R_SPF_SOFTFAIL',
  neutral: 'R_SPF_NEUTRAL',
  temperror: 'R_SPF_DNSFAIL',
  permerror: 'R_SPF_PERMFAIL',
  none: 'R_SPF_NA',
};
