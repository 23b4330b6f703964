import { defineModule } from '../../plugin-api/index.js';
import { HeaderRegexpsConfig } from './config.js';
import { HEADER_REGEXP_SYMBOLS } from './symbols.js';
import { HEADER_REGEXP_OPTIONS, HEADER_REGEXP_RULES } from './rules.js';

/**
 * Header regexp and forged-MUA rules (Rspamd rules/regexp/headers.lua, upstream_spam_filters.lua
 * and the header rules of compromised_hosts.lua). Each rule
 * is its own symbol, as in Rspamd, so one can be disabled or rescored alone. They judge a parsed
 * header block, so like Rspamd's `mime` regexps they skip raw (`Raw: yes`) input.
 */
export const headerRegexpsModule = defineModule<HeaderRegexpsConfig>({
  name: 'header_regexps',
  config: HeaderRegexpsConfig,
  symbols: HEADER_REGEXP_SYMBOLS,
  setup(ctx) {
    const off = new Set(ctx.config.disabled_rules);
    for (const [name, pred] of Object.entries(HEADER_REGEXP_RULES)) {
      if (off.has(name)) continue;
      const option = HEADER_REGEXP_OPTIONS[name];
      ctx.symbol({
        name,
        stage: 'filters',
        inserts: [name],
        check(task) {
          if (task.meta.raw || !pred(task)) return;
          const found = option?.(task);
          if (found === undefined) task.insert(name);
          else task.insert(name, 1, found);
        },
      });
    }
  },
});
