import type { SymbolDef } from '../../plugin-api/index.js';

/**
 * Score of a detection. Rspamd ships none (its example says "add it to metric"); a virus found
 * by a scanner the operator runs is strong evidence, so it reaches `add header` alone, and a
 * rule's `action` (reject, typically) is what turns it into a refusal.
 */
export const VIRUS_SCORE = 8;

/** The symbols of the shipped `clamav` rule; other rules declare theirs from their config. */
export const ANTIVIRUS_SYMBOLS: Record<string, SymbolDef> = {
  CLAM_VIRUS: { score: VIRUS_SCORE, group: 'antivirus', description: 'ClamAV found a virus' },
  CLAM_VIRUS_FAIL: { score: 0, group: 'antivirus', description: 'ClamAV could not scan the message' },
};
