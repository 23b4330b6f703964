import { defineModule } from '../../plugin-api/index.js';
import { PhishingConfig } from './config.js';
import { PHISHING_SYMBOLS } from './symbols.js';
import { makePhishingCheck } from './check.js';

/** Links that show one site and lead to another (Rspamd phishing.lua). */
export const phishingModule = defineModule<PhishingConfig>({
  name: 'phishing',
  config: PhishingConfig,
  symbols: PHISHING_SYMBOLS,
  setup(ctx) {
    ctx.symbol({
      name: 'PHISHING_CHECK',
      stage: 'filters',
      inserts: [ctx.config.symbol],
      check: makePhishingCheck(ctx.config),
    });
  },
});
