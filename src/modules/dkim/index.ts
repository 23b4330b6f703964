import { defineModule } from '../../plugin-api/index.js';
import { DkimConfig } from './config.js';
import { makeDkimCheck } from './check.js';
import { DKIM_SYMBOLS } from './symbols.js';

/** DKIM signatures (RFC 6376, RSA and Ed25519) verified by mailauth on the task's resolver; the parse also feeds ARC. */
export const dkimModule = defineModule<DkimConfig>({
  name: 'dkim',
  config: DkimConfig,
  symbols: DKIM_SYMBOLS,
  setup(ctx) {
    ctx.symbol({
      name: 'DKIM_CHECK',
      stage: 'filters',
      flags: ['coro'],
      inserts: Object.keys(DKIM_SYMBOLS),
      check: makeDkimCheck(ctx.config),
    });
  },
});
