import { defineModule } from '../../plugin-api/index.js';
import { DmarcConfig } from './config.js';
import { makeDmarcCheck, makeDmarcLookup } from './check.js';
import { DMARC_SYMBOLS } from './symbols.js';

/** DMARC (RFC 7489): the From domain's policy applied to the aligned SPF and DKIM results. */
export const dmarcModule = defineModule<DmarcConfig>({
  name: 'dmarc',
  config: DmarcConfig,
  symbols: DMARC_SYMBOLS,
  setup(ctx) {
    ctx.symbol({
      name: 'DMARC_POLICY_LOOKUP',
      // A prefilter: it inserts nothing, and the lookup is under way before the filters start.
      stage: 'prefilters',
      flags: ['coro'],
      check: makeDmarcLookup(ctx.config),
    });
    ctx.symbol({
      name: 'DMARC_CHECK',
      stage: 'filters',
      flags: ['coro'],
      // Weak: DMARC still runs (as "no aligned pass") when SPF or DKIM is switched off.
      deps: [{ name: 'SPF_CHECK', weak: true }, { name: 'DKIM_CHECK', weak: true }],
      inserts: Object.keys(DMARC_SYMBOLS),
      check: makeDmarcCheck(ctx.config),
    });
  },
});
