import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4's DKIM symbols and scores (group policies). */
export const DKIM_SYMBOLS: Record<string, SymbolDef> = {
  R_DKIM_ALLOW: { score: -0.2, group: 'policies', description: 'DKIM verification succeed' },
  R_DKIM_REJECT: { score: 1.0, group: 'policies', description: 'DKIM verification failed' },
  R_DKIM_TEMPFAIL: { score: 0.0, group: 'policies', description: 'DKIM verification soft-failed' },
  R_DKIM_PERMFAIL: { score: 0.0, group: 'policies', description: 'DKIM verification hard-failed (invalid)' },
  R_DKIM_NA: { score: 0.0, group: 'policies', description: 'Missing DKIM signature' },
  DKIM_TRACE: { score: 0.0, group: 'policies', description: 'DKIM trace symbol' },
  // mailsift's own: Rspamd stops at max_sigs with only a log line.
  DKIM_SIGS_SKIPPED: { score: 0.0, group: 'policies', description: 'DKIM signatures past max_sigs (or of a third body canonicalization) were not verified' },
};
