// /history and /historyreset over the HistoryStore, which every
// worker appends to, so all workers' scans appear in one list, newest first.

import type { CoreContext } from './core-context.js';
import { controllerError, renderJson, successReply } from './json.js';
import { withStore } from './store-outage.js';
import type { ControllerRoute } from './types.js';

/** `from`/`to` as Rspamd's inclusive LRANGE indexes (to = -1: the end); undefined when unparsable. */
function index(v: string | undefined, dflt: number): number | undefined {
  if (v === undefined || v === '') return dflt;
  return /^-?\d+$/.test(v) ? Number(v) : undefined;
}

export function historyRoutes(ctx: CoreContext): ControllerRoute[] {
  const limit = ctx.config.workers.controller.historyRows;
  return [
    {
      path: '/history',
      level: 'normal',
      async handler(req) {
        const from = index(req.query.get('from'), 0);
        const to = index(req.query.get('to'), -1);
        if (from === undefined || to === undefined) return controllerError(400, 'Invalid from/to parameters');
        const start = Math.max(0, from);
        const end = to < 0 ? limit : Math.min(limit, to + 1);
        // A store that is down: 503 (Rspamd 3.4 answers 504 for any Redis error here; 503
        // is what every store-backed endpoint answers, store-outage.ts).
        const rows: unknown[] = end > start ? await withStore(ctx.log, 'history', () => ctx.stores.history.list(start, end)) : [];
        return { status: 200, contentType: 'application/json', body: `{"version":2,"rows":${renderJson(rows)}}` };
      },
    },
    {
      path: '/historyreset',
      level: 'enable',
      async handler() {
        await withStore(ctx.log, 'history', () => ctx.stores.history.reset());
        return successReply();
      },
    },
  ];
}
