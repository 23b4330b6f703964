// /history and /historyreset (controller.md §4.19 b, §4.20) over the HistoryStore, which every
// worker appends to, so all workers' scans appear in one list, newest first.

import type { CoreContext } from './core-context.js';
import { controllerError, jsonReply, renderJson, successReply } from './json.js';
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
        let rows: unknown[] = [];
        if (end > start) {
          try {
            rows = await ctx.stores.history.list(start, end);
          } catch (err) {
            ctx.log.error('history store read failed', { err: String((err as Error)?.message ?? err) });
            return controllerError(504, 'History store unavailable');
          }
        }
        return { status: 200, contentType: 'application/json', body: `{"version":2,"rows":${renderJson(rows)}}` };
      },
    },
    {
      path: '/historyreset',
      level: 'enable',
      async handler() {
        try {
          await ctx.stores.history.reset();
        } catch (err) {
          ctx.log.error('history store reset failed', { err: String((err as Error)?.message ?? err) });
          return controllerError(504, 'History store unavailable');
        }
        return successReply();
      },
    },
  ];
}
