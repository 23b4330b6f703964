import { defineModule } from '../../plugin-api/index.js';
import { ForceActionsConfig } from './config.js';
import { compileRule, MODULE, runRule } from './check.js';
import { compileMessage } from './message.js';

/**
 * Rspamd's postfilter priority `high`: before the other postfilters, so a forced action is
 * known to them (and, as in Rspamd, a non-`least` one skips those without ignore_passthrough).
 */
export const FORCE_ACTIONS_PRIORITY = 9;

/**
 * force_actions: rules that force an action when a symbol expression holds (Rspamd's
 * force_actions.lua, `rules` form). Every rule runs as a postfilter, after the filters and the
 * composites: Rspamd runs rules without honor_action/require_action as filters depending on
 * their atoms, where an expression naming a composite can never hold; here it can, and the
 * action decided is the same.
 */
export const forceActionsModule = defineModule<ForceActionsConfig>({
  name: MODULE,
  config: ForceActionsConfig,
  setup(ctx) {
    const rules = Object.entries(ctx.config.rules);
    if (rules.length === 0) {
      ctx.disable('config');
      return;
    }
    for (const [name, cfg] of rules) {
      const message = cfg.message === undefined ? undefined : compileMessage(cfg.message, (text) => ctx.selector(text));
      const rule = compileRule(name, cfg, ctx.expression(cfg.expression), message);
      ctx.declareSymbol(rule.symbol, { score: 0, group: MODULE, description: `force_actions rule ${name}: ${cfg.action} when ${cfg.expression}` });
      ctx.symbol({
        name: rule.symbol,
        stage: 'postfilters',
        priority: FORCE_ACTIONS_PRIORITY,
        inserts: [rule.symbol],
        // `empty`: rules may hold on an empty message; `ignore_passthrough`: a rule still runs
        // after another one (or GTUBE) forced an action, and honours it through honor_action.
        flags: ['empty', 'ignore_passthrough'],
        check: (task) => runRule(rule, task),
      });
    }
  },
});
