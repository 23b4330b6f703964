import { defineModule } from '../../plugin-api/index.js';
import type { MapHandle, MapKind, ModuleContext, SymbolDef } from '../../plugin-api/index.js';
import { RblConfig } from './config.js';
import { compileRules, needsLateRun } from './compile.js';
import type { CompiledRule } from './compile.js';
import { makeRblCheck } from './check.js';
import { outageLog } from '../../module-helpers/outage-log.js';
import type { PreparedRule } from './check.js';
import { DEFAULT_RULES, DEFAULT_URL_WHITELIST } from './defaults.js';
import { failSymbolDef, RBL_SYMBOLS } from './symbols.js';

export { luaPatternToRegExp } from './compile.js';
export { hashKey } from './hash.js';
export { reverseIp } from './candidates.js';

/**
 * The lookups get `timeout`, then their `_FAIL` symbols are inserted; the scheduler's budget for
 * the callback adds this much so it does not cut that short. An awaited lookup the resolver is
 * still retrying keeps the callback pending, so this budget is what ends its wait.
 */
const SCHEDULER_GRACE_SECONDS = 0.25;

const SOURCE_RE = /^(?:[a-z_]+;)?(?:\/|\.\/|file:\/\/|https?:\/\/|fallback\+)/i;

/** A list of map sources and/or inline entries, as Rspamd's `whitelist = [...]` takes them. */
async function openMap(ctx: ModuleContext<RblConfig>, items: readonly string[], kind: MapKind, description: string): Promise<MapHandle | undefined> {
  const url = items.filter((s) => SOURCE_RE.test(s));
  const data = items.filter((s) => !SOURCE_RE.test(s));
  try {
    return await ctx.maps.add({ url, ...(data.length > 0 ? { data } : {}), kind, description });
  } catch (e) {
    ctx.log.warn('rbl map could not be opened; working without it', { description, error: (e as Error).message });
    return undefined;
  }
}

const usesUrlWhitelist = (r: CompiledRule): boolean =>
  ['urls', 'content_urls', 'emails', 'dkim', 'replyto'].some((c) => r.checks.has(c as never)) && !r.checks.has('from') && !r.checks.has('received');

/**
 * Whether the late group must wait for the early group's whitelist answers. An element a
 * whitelist list vouched for is left out only for the checks that list ran (a dnswl hit on a
 * received IP whitelists that IP as `received`, never as a URL), so when no early whitelist list
 * shares a check with a late list, waiting would change nothing and would only hold the late
 * lookups (all the URL lists, by default) back by a whole DNS round trip.
 */
function lateNeedsEarlyWhitelist(early: readonly PreparedRule[], late: readonly PreparedRule[]): boolean {
  const lateChecks = new Set(late.flatMap((p) => [...p.rule.checks]));
  return early.some((p) => p.rule.isWhitelist && [...p.rule.checks].some((c) => lateChecks.has(c)));
}

function defaultSymbols(): Record<string, SymbolDef> {
  const out: Record<string, SymbolDef> = { ...RBL_SYMBOLS };
  for (const [key, r] of Object.entries(DEFAULT_RULES)) {
    const sym = r.symbol ?? key.toUpperCase();
    out[`${sym}_FAIL`] = failSymbolDef(sym);
  }
  return out;
}

/** DNS block and allow lists with Rspamd 3.4's default list set. */
export const rblModule = defineModule<RblConfig>({
  name: 'rbl',
  config: RblConfig,
  symbols: defaultSymbols(),
  async setup(ctx) {
    const rules = compileRules(ctx.config);
    if (rules.length === 0) return ctx.disable('config: no lists enabled');
    const localExclude = ctx.config.local_exclude_ip_map !== undefined
      ? await openMap(ctx, ([] as string[]).concat(ctx.config.local_exclude_ip_map), 'radix', 'RBL exclusions map')
      : undefined;
    let urlWhitelist: MapHandle | undefined;
    const prepared: PreparedRule[] = [];
    for (const rule of rules) {
      if (rule.selectorTexts) {
        try {
          rule.selectors = Object.entries(rule.selectorTexts).map(([label, text]) => ({ label, selector: ctx.selector(text) }));
        } catch (e) {
          // The list is dropped, the others still run; configtest lists the error.
          ctx.log.error('rbl: invalid selector; list skipped', { rule: rule.key, error: (e as Error).message });
          continue;
        }
      }
      let whitelist: MapHandle | undefined;
      if (rule.whitelistSources) {
        const ipRule = rule.checks.has('from') || rule.checks.has('received');
        whitelist = await openMap(ctx, rule.whitelistSources, ipRule ? 'radix' : 'set', `RBL whitelist for ${rule.symbol}`);
      } else if (usesUrlWhitelist(rule)) {
        urlWhitelist ??= await openMap(ctx, ctx.config.url_whitelist ?? DEFAULT_URL_WHITELIST, 'set', 'RBL url whitelist');
        whitelist = urlWhitelist;
      }
      prepared.push({ rule, maps: { whitelist, localExclude } });
    }
    const early = prepared.filter((p) => !needsLateRun(p.rule));
    const late = prepared.filter((p) => needsLateRun(p.rule));
    const timeout = ctx.config.timeout;
    // A resolver outage fails every list of every scan: one warning per period, not a line per lookup.
    const failed = outageLog(ctx.log, 'rbl: DNS lookups failing, their lists get _FAIL symbols');
    const inserts = (ps: PreparedRule[]): string[] => [...new Set(ps.flatMap((p) => p.rule.resultSymbols))];
    if (early.length > 0) {
      ctx.symbol({
        name: 'RBL_CALLBACK',
        stage: 'filters',
        // Runs before the late group so that group can wait for the whitelist answers.
        priority: 10,
        flags: ['coro', 'empty'],
        timeout: timeout + SCHEDULER_GRACE_SECONDS,
        inserts: inserts(early),
        check: makeRblCheck(early, timeout, failed, true),
      });
    }
    if (late.length > 0) {
      const deps = new Set(['DKIM_CHECK', ...late.flatMap((p) => p.rule.requireSymbols)]);
      if (late.some((p) => p.rule.checks.has('rdns'))) deps.add('ONCE_RECEIVED_CHECK');
      const waitForEarly = lateNeedsEarlyWhitelist(early, late);
      ctx.symbol({
        name: 'RBL_CALLBACK_LATE',
        stage: 'filters',
        // Weak: without a DKIM (or received) module the lists still check URLs and e-mails.
        deps: [...deps].map((name) => ({ name, weak: true })),
        flags: ['coro'],
        timeout: timeout + SCHEDULER_GRACE_SECONDS,
        inserts: inserts(late),
        check: makeRblCheck(late, timeout, failed, false, waitForEarly),
      });
    }
    ctx.log.debug('rbl lists loaded', { lists: rules.map((r) => r.key) });
  },
});
