import { defineModule } from '../../plugin-api/index.js';
import type { SymbolDef } from '../../plugin-api/index.js';
import { WhitelistConfig } from './config.js';
import { compileRule, hasDomains, makeWhitelistCheck } from './check.js';
import type { CompiledRule } from './check.js';

/** Rspamd 3.4's whitelist scores (group whitelist). */
export const WHITELIST_SYMBOLS: Record<string, SymbolDef> = {
  WHITELIST_SPF: { score: -1.0, group: 'whitelist', description: 'Mail comes from the whitelisted domain and has a valid SPF policy' },
  BLACKLIST_SPF: { score: 1.0, group: 'whitelist', description: 'Mail comes from the blacklisted domain without a valid SPF policy' },
  WHITELIST_DKIM: { score: -1.0, group: 'whitelist', description: 'Mail comes from the whitelisted domain and has a valid DKIM signature' },
  BLACKLIST_DKIM: { score: 2.0, group: 'whitelist', description: 'Mail comes from the blacklisted domain without a valid DKIM signature' },
  WHITELIST_SPF_DKIM: { score: -3.0, group: 'whitelist', description: 'Mail comes from the whitelisted domain and has valid SPF and DKIM policies' },
  BLACKLIST_SPF_DKIM: { score: 3.0, group: 'whitelist', description: 'Mail comes from the blacklisted domain without valid SPF and DKIM policies' },
  WHITELIST_DMARC: { score: -7.0, group: 'whitelist', description: 'Mail comes from the whitelisted domain and has valid DMARC and DKIM policies' },
  BLACKLIST_DMARC: { score: 6.0, group: 'whitelist', description: 'Mail comes from the blacklisted domain without a valid DMARC policy' },
};

/** Domain lists checked against what SPF, DKIM and DMARC authenticated. */
export const whitelistModule = defineModule<WhitelistConfig>({
  name: 'whitelist',
  config: WhitelistConfig,
  symbols: WHITELIST_SYMBOLS,
  async setup(ctx) {
    let rules: CompiledRule[];
    try {
      const compiled = await Promise.all(Object.entries(ctx.config.rules).map(([sym, r]) => compileRule(sym, r, ctx.maps)));
      rules = compiled.filter(hasDomains);
    } catch (e) {
      ctx.log.error('whitelist: cannot read a domain list', { error: (e as Error).message });
      ctx.disable('failed');
      return;
    }
    if (rules.length === 0) {
      ctx.disable('config');
      return;
    }
    ctx.symbol({
      name: 'WHITELIST_CHECK',
      stage: 'filters',
      deps: [{ name: 'SPF_CHECK', weak: true }, { name: 'DKIM_CHECK', weak: true }, { name: 'DMARC_CHECK', weak: true }],
      inserts: rules.map((r) => r.symbol),
      check: makeWhitelistCheck(rules),
    });
  },
});
