// /errors: the error ring of every process, newest first.

import type { CoreContext } from './core-context.js';
import { dbl, jsonReply } from './json.js';
import type { ControllerRoute } from './types.js';

export function errorsRoutes(ctx: CoreContext): ControllerRoute[] {
  return [
    {
      path: '/errors',
      level: 'enable',
      async handler() {
        const list = await ctx.stats.view.errors();
        return jsonReply(list.map((e) => ({ ts: dbl(e.ts), pid: e.pid, type: e.type, id: e.id, module: e.module, message: e.message })));
      },
    },
  ];
}
