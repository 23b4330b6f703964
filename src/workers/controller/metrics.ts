// /metrics (OpenMetrics) and /counters (per-symbol figures).

import { OPENMETRICS_CONTENT_TYPE, renderOpenMetrics } from '../../observability/openmetrics.js';
import type { CoreContext } from './core-context.js';
import { dbl, jsonReply } from './json.js';
import { metricsInput, storeFigures } from './stat-doc.js';
import type { ControllerRoute } from './types.js';

/** Rspamd rounds /counters figures down to 3 decimals. */
function floor3(v: number): number {
  return Math.floor(v * 1000) / 1000;
}

export function metricsRoutes(ctx: CoreContext): ControllerRoute[] {
  return [
    {
      path: '/metrics',
      level: 'normal',
      async handler() {
        const [snap, stores] = await Promise.all([ctx.stats.view.snapshot(), storeFigures(ctx)]);
        return { status: 200, contentType: OPENMETRICS_CONTENT_TYPE, body: renderOpenMetrics(metricsInput(ctx, snap, stores), ctx.config.workers.controller.metricsPrefix) };
      },
    },
    {
      path: '/counters',
      level: 'normal',
      async handler() {
        const st = (await ctx.stats.view.snapshot()).state;
        const elapsed = Math.max(1, Date.now() / 1000 - st.symbolsSince);
        // Every registered symbol is listed, hit or not, as Rspamd lists its whole symbol cache.
        const names = new Set<string>(ctx.engine.symbols().map((s) => s.name));
        for (const k of Object.keys(st.symbols)) names.add(k);
        const rows = [...names].map((symbol) => {
          const c = st.symbols[symbol] ?? { hits: 0, weight: 0, time: 0 };
          return {
            symbol,
            weight: dbl(c.hits ? floor3(c.weight / c.hits) : 0),
            frequency: dbl(floor3(c.hits / elapsed)),
            hits: c.hits,
            time: dbl(c.hits ? floor3(c.time / c.hits) : 0),
          };
        });
        return jsonReply(rows);
      },
    },
  ];
}
