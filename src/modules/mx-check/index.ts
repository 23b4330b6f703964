import { defineModule } from '../../plugin-api/index.js';
import { kvOrDisable } from '../../module-helpers/policy-setup.js';
import { outageLog, storeOutageLog } from '../../module-helpers/outage-log.js';
import { MxCheckConfig } from './config.js';
import { MX_CHECK_SYMBOLS } from './symbols.js';
import { checkMx } from './check.js';

/** Whether the sender domain has a working mail exchanger (Rspamd's mx_check). */
export const mxCheckModule = defineModule<MxCheckConfig>({
  name: 'mx_check',
  config: MxCheckConfig,
  symbols: MX_CHECK_SYMBOLS,
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enabled) {
      ctx.disable('config');
      return;
    }
    const kv = kvOrDisable(ctx, 'mx_check');
    if (!kv) return;
    const ex = cfg.exclude_domains;
    const exclude = ex === undefined || (Array.isArray(ex) && ex.length === 0)
      ? undefined
      : await ctx.maps.add(Array.isArray(ex)
        ? { url: 'static', data: ex.map((d) => d.toLowerCase()), kind: 'set', description: 'mx_check exclude_domains' }
        : { url: ex, kind: 'set', description: 'mx_check exclude_domains' });
    const outage = storeOutageLog(ctx.log, 'mx_check');
    const dnsLog = outageLog(ctx.log, 'mx_check: MX lookup failed, domain not judged');
    const deps = { cfg, kv, exclude, outage, dnsFailure: (task: Parameters<typeof dnsLog>[0], domain: string, error: string) => dnsLog(task, { domain, error }) };
    ctx.symbol({
      name: 'MX_CHECK',
      stage: 'filters',
      flags: ['coro'],
      // The MX lookup, then the A lookups and connections side by side.
      timeout: 2 * cfg.timeout + 2,
      inserts: ['MX_INVALID', 'MX_MISSING', 'MX_GOOD', 'MX_WHITE'],
      check: (task) => checkMx(task, deps),
    });
  },
});
