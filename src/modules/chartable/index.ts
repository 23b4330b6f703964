import { defineModule } from '../../plugin-api/index.js';
import { ChartableConfig } from './config.js';
import { CHARTABLE_SYMBOLS } from './symbols.js';
import { makeMixedCharsetCheck, makeMixedCharsetUrlCheck } from './check.js';

/** Mixed scripts in words and host names (Rspamd's chartable plugin). */
export const chartableModule = defineModule<ChartableConfig>({
  name: 'chartable',
  config: ChartableConfig,
  symbols: CHARTABLE_SYMBOLS,
  setup(ctx) {
    const text = makeMixedCharsetCheck(ctx.config);
    const urls = makeMixedCharsetUrlCheck(ctx.config);
    ctx.symbol({ name: 'R_MIXED_CHARSET', stage: 'filters', inserts: ['R_MIXED_CHARSET'], check: (task) => { if (!task.meta.raw) text(task); } });
    ctx.symbol({ name: 'R_MIXED_CHARSET_URL', stage: 'filters', inserts: ['R_MIXED_CHARSET_URL'], check: (task) => { if (!task.meta.raw) urls(task); } });
  },
});
