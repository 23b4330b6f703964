import { defineModule } from '../../plugin-api/index.js';
import { kvOrDisable } from '../../module-helpers/policy-setup.js';
import { storeOutageLog } from '../../module-helpers/outage-log.js';
import { ReputationConfig } from './config.js';
import { REPUTATION_SYMBOLS } from './symbols.js';
import { ReputationStore } from './store.js';
import { countVerdict, scoreReputation } from './check.js';

/** Reputation of client addresses, sender domains and link domains, learned from verdicts (Rspamd's reputation plugin). */
export const reputationModule = defineModule<ReputationConfig>({
  name: 'reputation',
  config: ReputationConfig,
  symbols: REPUTATION_SYMBOLS,
  setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enabled) {
      ctx.disable('config');
      return;
    }
    const kv = kvOrDisable(ctx, 'reputation');
    if (!kv) return;
    const deps = { cfg, store: new ReputationStore(kv, cfg.key_prefix, cfg.window_days), outage: storeOutageLog(ctx.log, 'reputation') };
    ctx.symbol({
      name: 'REPUTATION_CHECK',
      stage: 'filters',
      flags: ['coro'],
      // The sender domain counts as the sender's own only after SPF, DKIM or DMARC said so.
      deps: [{ name: 'SPF_CHECK', weak: true }, { name: 'DKIM_CHECK', weak: true }, { name: 'DMARC_CHECK', weak: true }],
      inserts: Object.keys(REPUTATION_SYMBOLS),
      check: (task) => scoreReputation(task, deps),
    });
    ctx.symbol({
      name: 'REPUTATION_UPDATE',
      stage: 'idempotent',
      flags: ['coro', 'nostat'],
      check: (task) => countVerdict(task, deps),
    });
  },
});
