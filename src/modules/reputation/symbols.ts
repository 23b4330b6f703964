import type { SymbolDef } from '../../plugin-api/index.js';

/** Scores: see conf/groups.yaml (reputation). */
export const REPUTATION_SYMBOLS: Record<string, SymbolDef> = {
  IP_REPUTATION_SPAM: { score: 2.0, group: 'reputation', description: 'Sending address mostly sent spam here' },
  IP_REPUTATION_HAM: { score: -1.0, group: 'reputation', description: 'Sending address mostly sent ham here' },
  SENDER_REP_SPAM: { score: 2.0, group: 'reputation', description: 'Sender domain mostly sent spam here' },
  SENDER_REP_HAM: { score: -1.0, group: 'reputation', description: 'Sender domain mostly sent ham here' },
  URL_REPUTATION_SPAM: { score: 2.0, group: 'reputation', description: 'Linked domains mostly seen in spam here' },
  URL_REPUTATION_HAM: { score: -0.5, group: 'reputation', description: 'Linked domains mostly seen in ham here' },
  REPUTATION_FAIL: { score: 0, group: 'reputation', description: 'Reputation store unavailable' },
};

/** The scored symbols: a verdict is counted without their share. */
export const REPUTATION_SCORED = Object.keys(REPUTATION_SYMBOLS).filter((n) => n !== 'REPUTATION_FAIL');
