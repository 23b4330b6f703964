import { defineModule } from '../../plugin-api/index.js';
import { HfilterConfig } from './config.js';
import { HFILTER_SYMBOLS } from './symbols.js';
import { makeHfilterCheck } from './check.js';

/** Per-lookup budget: three rounds (A/AAAA, MX, MX addresses) fit in the task deadline. */
const HFILTER_TIMEOUT_S = 5;

/** HELO / host name / sender / link-only body plausibility (Rspamd hfilter.lua). */
export const hfilterModule = defineModule<HfilterConfig>({
  name: 'hfilter',
  config: HfilterConfig,
  symbols: HFILTER_SYMBOLS,
  setup(ctx) {
    ctx.symbol({
      name: 'HFILTER_CHECK',
      stage: 'filters',
      // Judges the PTR name once_received found when the MTA passed none (weak: ordering only;
      // it waits only while that lookup is under way). Rspamd 3.4 declares no such order: its
      // hfilter usually starts before the answer and reports the name unknown.
      deps: [{ name: 'ONCE_RECEIVED_CHECK', weak: true }],
      flags: ['coro', 'nostat'],
      timeout: HFILTER_TIMEOUT_S,
      inserts: Object.keys(HFILTER_SYMBOLS),
      check: makeHfilterCheck(ctx.config),
    });
  },
});
