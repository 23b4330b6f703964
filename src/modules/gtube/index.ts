import { defineModule } from '../../plugin-api/index.js';
import { GtubeConfig } from './config.js';
import { GTUBE_SYMBOLS } from './symbols.js';
import { makeGtubeCheck } from './check.js';

/** GTUBE test pattern: a prefilter that forces the verdict for test messages. */
export const gtubeModule = defineModule<GtubeConfig>({
  name: 'gtube',
  config: GtubeConfig,
  symbols: GTUBE_SYMBOLS,
  setup(ctx) {
    if (ctx.config.gtube_patterns === 'disabled') {
      ctx.disable('config');
      return;
    }
    ctx.symbol({
      name: 'GTUBE',
      stage: 'prefilters',
      priority: 10,
      inserts: ['GTUBE'],
      check: makeGtubeCheck(ctx.config),
    });
  },
});
