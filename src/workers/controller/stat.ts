// /auth, /stat and /statreset. `read_only` is what the session can do
// (auth.ts); /auth adds a `warning` when the controller needs no password.

import { authConfigOf, openAccessWarning } from './auth.js';
import type { CoreContext } from './core-context.js';
import { jsonReply } from './json.js';
import { statDocument, storeFigures, uptimeOf } from './stat-doc.js';
import type { ControllerRoute } from './types.js';

export function statRoutes(ctx: CoreContext): ControllerRoute[] {
  // An addition to 3.4's document (last, so clients reading 3.4's keys are unaffected): the
  // web UI logs in through /auth, so an open controller says so where its operator looks.
  const warning = openAccessWarning(authConfigOf(ctx.config.workers.controller));
  return [
    {
      path: '/auth',
      level: 'normal',
      async handler(_req, session) {
        const st = (await ctx.stats.view.snapshot()).state;
        const [reject, softReject, rewrite, addHeader, greylist, noAction] = st.actions;
        return jsonReply({
          version: ctx.version,
          auth: 'ok',
          uptime: uptimeOf(ctx),
          clean: noAction ?? 0,
          probable: (addHeader ?? 0) + (rewrite ?? 0),
          greylist: greylist ?? 0,
          reject: reject ?? 0,
          soft_reject: softReject ?? 0,
          scanned: st.scanned,
          learned: st.learned,
          read_only: session.readOnly,
          config_id: ctx.configId,
          ...(warning ? { warning } : {}),
        });
      },
    },
    {
      path: '/stat',
      level: 'normal',
      async handler(_req, session) {
        const [snap, stores] = await Promise.all([ctx.stats.view.snapshot(), storeFigures(ctx)]);
        return jsonReply(statDocument(ctx, snap, session.readOnly, stores));
      },
    },
    {
      path: '/statreset',
      level: 'enable',
      async handler(_req, session) {
        // The document shows the counters as they were just before the reset.
        const stores = await storeFigures(ctx);
        const before = await ctx.stats.view.reset();
        return jsonReply(statDocument(ctx, before, session.readOnly, stores));
      },
    },
  ];
}
