import { defineModule } from '../../plugin-api/index.js';
import { ArcConfig } from './config.js';
import { makeArcCheck } from './check.js';
import { ARC_SYMBOLS } from './symbols.js';
import { makeArcSeal } from './seal.js';
import { readFileSync } from 'node:fs';

/** ARC (RFC 8617) chain validation by mailauth on the task's resolver. */
export const arcModule = defineModule<ArcConfig>({
  name: 'arc',
  config: ArcConfig,
  symbols: { ...ARC_SYMBOLS, ARC_SIGNED: { score: 0, group: 'policies', description: 'ARC signed' } },
  setup(ctx) {
    ctx.symbol({
      name: 'ARC_CHECK',
      stage: 'filters',
      flags: ['coro'],
      // Weak: reuses the DKIM parse when DKIM ran, parses itself otherwise.
      deps: [{ name: 'DKIM_CHECK', weak: true }],
      inserts: Object.keys(ARC_SYMBOLS),
      check: makeArcCheck(ctx.config),
    });
    const seal = ctx.config.seal;
    if (!seal) return;
    let privateKey: string;
    try {
      privateKey = seal.key ?? readFileSync(seal.path!, 'utf8');
    } catch (e) {
      ctx.log.error('arc: cannot read the sealing key; sealing off', { path: seal.path, error: (e as Error).message });
      return;
    }
    ctx.symbol({
      name: 'ARC_SIGNED',
      // After the filters: the seal's ARC-Authentication-Results carries their results.
      stage: 'postfilters',
      flags: ['ignore_passthrough'],
      deps: [{ name: 'ARC_CHECK', weak: true }],
      check: makeArcSeal({ domain: seal.domain, selector: seal.selector, privateKey }, seal.authserv_id ?? ctx.hostname),
    });
  },
});
