import { defineModule } from '../../plugin-api/index.js';
import { MilterHeadersConfig } from './config.js';
import { makeMilterHeadersCheck, prepare } from './check.js';

/**
 * milter_headers: builds the reply's milter block from the
 * final verdict, and optionally rewrites the message (body footer, Subject). Inserts no symbols.
 */
export const milterHeadersModule = defineModule<MilterHeadersConfig>({
  name: 'milter_headers',
  config: MilterHeadersConfig,
  symbols: {},
  setup(ctx) {
    const prepared = prepare(ctx.config, ctx.log);
    ctx.symbol({
      name: 'MILTER_HEADERS',
      stage: 'idempotent',
      flags: ['empty', 'explicit_disable', 'ignore_passthrough'],
      check: makeMilterHeadersCheck(ctx.config, prepared, ctx.hostname),
    });
  },
});
