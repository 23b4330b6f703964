import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4's DMARC symbols and scores (group policies). */
export const DMARC_SYMBOLS: Record<string, SymbolDef> = {
  DMARC_POLICY_ALLOW: { score: -0.5, group: 'policies', description: 'DMARC permit policy' },
  DMARC_POLICY_ALLOW_WITH_FAILURES: { score: -0.5, group: 'policies', description: 'DMARC permit policy with DKIM/SPF failure' },
  DMARC_POLICY_REJECT: { score: 2.0, group: 'policies', description: 'DMARC reject policy' },
  DMARC_POLICY_QUARANTINE: { score: 1.5, group: 'policies', description: 'DMARC quarantine policy' },
  DMARC_POLICY_SOFTFAIL: { score: 0.1, group: 'policies', description: 'DMARC failed' },
  DMARC_NA: { score: 0.0, group: 'policies', description: 'No DMARC record' },
  DMARC_BAD_POLICY: { score: 0.5, group: 'policies', description: 'DMARC bad policy' },
  DMARC_DNSFAIL: { score: 0.0, group: 'policies', description: 'DMARC DNS failure' },
};
