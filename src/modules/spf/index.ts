import { defineModule } from '../../plugin-api/index.js';
import { SpfConfig } from './config.js';
import { makeSpfCheck } from './check.js';
import { SPF_SYMBOLS } from './symbols.js';

/** SPF (RFC 7208) of the MAIL FROM domain, or the HELO name for the null sender, via mailauth on the task's resolver. */
export const spfModule = defineModule<SpfConfig>({
  name: 'spf',
  config: SpfConfig,
  symbols: SPF_SYMBOLS,
  setup(ctx) {
    ctx.symbol({
      name: 'SPF_CHECK',
      stage: 'filters',
      flags: ['coro'],
      inserts: Object.keys(SPF_SYMBOLS),
      check: makeSpfCheck(ctx.config, ctx.hostname),
    });
  },
});
