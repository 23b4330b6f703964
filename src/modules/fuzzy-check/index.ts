import { defineModule } from '../../plugin-api/index.js';
import { compileRules } from '../../rule-libs/fuzzy/rule.js';
import { FUZZY_ERROR_SYMBOLS } from '../../rule-libs/fuzzy/score.js';
import { FuzzyCheckConfig } from './config.js';
import { FUZZY_SYMBOLS } from './symbols.js';
import { compileWhitelist, makeFuzzyCheck } from './check.js';
import { registerFuzzyEndpoints } from './endpoints.js';

/** Slack over the rules' own I/O budget before the scheduler gives up on the callback. */
const TIMEOUT_SLACK_SECONDS = 0.5;

/** fuzzy_check: asks fuzzy storages about the message's digests and shingles. */
export const fuzzyCheckModule = defineModule<FuzzyCheckConfig>({
  name: 'fuzzy_check',
  config: FuzzyCheckConfig,
  symbols: FUZZY_SYMBOLS,
  setup(ctx) {
    let all;
    try {
      all = compileRules(ctx.config);
    } catch (err) {
      ctx.log.error(String((err as Error).message));
      registerFuzzyEndpoints(ctx, { error: 'Module disabled' });
      ctx.disable('config');
      return;
    }
    // Learning needs only write servers: the endpoints see every rule, the check the readable ones.
    registerFuzzyEndpoints(ctx, all.length ? { rules: all } : { error: 'Module has no rules' });
    const rules = all.filter((r) => r.readServers.length > 0);
    if (rules.length === 0) {
      ctx.disable('config');
      return;
    }
    const inserts = new Set<string>(Object.values(FUZZY_ERROR_SYMBOLS));
    for (const r of rules) {
      inserts.add(r.symbol);
      for (const m of r.mappings.values()) inserts.add(m.symbol);
    }
    const budget = Math.max(...rules.map((r) => (r.timeoutMs / 1000) * (r.retransmits + 1)));
    ctx.symbol({
      name: 'FUZZY_CALLBACK',
      stage: 'filters',
      flags: ['coro', 'fine'],
      inserts: [...inserts],
      timeout: budget + TIMEOUT_SLACK_SECONDS,
      check: makeFuzzyCheck(rules, compileWhitelist(ctx.config.whitelist), ctx.log),
    });
  },
});
