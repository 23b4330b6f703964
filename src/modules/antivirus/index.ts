import { defineModule, type KvStore, type MapHandle } from '../../plugin-api/index.js';
import { outageLog } from '../../module-helpers/outage-log.js';
import { AntivirusConfig } from './config.js';
import { makeCheck } from './check.js';
import { compileRule, ruleSymbols, RuleError, type CompiledRule } from './rule.js';
import { ANTIVIRUS_SYMBOLS, VIRUS_SCORE } from './symbols.js';

/** Slack over a rule's own I/O budget before the scheduler gives up on the callback. */
const TIMEOUT_SLACK_SECONDS = 0.5;

/** antivirus: sends attachments (or whole messages) to ClamAV or an external scanner. */
export const antivirusModule = defineModule<AntivirusConfig>({
  name: 'antivirus',
  config: AntivirusConfig,
  symbols: ANTIVIRUS_SYMBOLS,
  async setup(ctx) {
    const kv: KvStore | undefined = ctx.stores?.kv;
    const rules: CompiledRule[] = [];
    for (const [name, opts] of Object.entries(ctx.config.rules)) {
      try {
        rules.push(compileRule(name, opts, kv !== undefined));
      } catch (e) {
        if (!(e instanceof RuleError)) throw e;
        ctx.log.error(`antivirus: ${e.message}; rule skipped`, { rule: name });
      }
    }
    if (rules.length === 0) {
      ctx.disable('config');
      return;
    }
    const cacheOutage = outageLog(ctx.log, 'antivirus: verdict cache unavailable, scanning without it');
    const scanOutage = outageLog(ctx.log, 'antivirus: scan failed');
    for (const rule of rules) {
      let whitelist: MapHandle | undefined;
      const list = rule.opts.whitelist;
      if (list !== undefined) {
        const description = `antivirus ${rule.name} whitelist`;
        try {
          whitelist = await ctx.maps.add(typeof list === 'string' ? { url: list, kind: 'set', description } : { url: 'static', data: list, kind: 'set', description });
        } catch (e) {
          // Scanning without the operator's exceptions would report what they asked not to see.
          ctx.log.error('antivirus: cannot load the whitelist; rule skipped', { rule: rule.name, error: (e as Error).message });
          continue;
        }
      }
      for (const sym of ruleSymbols(rule)) {
        if (Object.hasOwn(ANTIVIRUS_SYMBOLS, sym)) continue;
        const fail = sym === rule.symbolFail;
        ctx.declareSymbol(sym, { score: fail ? 0 : VIRUS_SCORE, group: 'antivirus', description: fail ? `${rule.name} could not scan the message` : `${rule.name} found a virus` });
      }
      ctx.symbol({
        // The detection symbol is the callback, as Rspamd registers it; two rules sharing one get their own.
        name: rules.filter((r) => r.symbol === rule.symbol).length > 1 ? `ANTIVIRUS_${rule.name.toUpperCase()}` : rule.symbol,
        stage: 'filters',
        // `fine`: a virus matters even when the score already passed reject.
        flags: ['coro', 'fine', 'nostat'],
        inserts: ruleSymbols(rule),
        timeout: rule.opts.timeout * (rule.opts.retransmits + 1) + TIMEOUT_SLACK_SECONDS,
        check: makeCheck(rule, { ...(kv ? { kv } : {}), ...(whitelist ? { whitelist } : {}), cacheOutage, scanOutage }),
      });
    }
  },
});
