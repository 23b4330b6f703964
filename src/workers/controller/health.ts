// /ping, /healthy, /ready and /neighbours.

import type { Reply } from '../../http/types.js';
import type { CoreContext } from './core-context.js';
import { controllerError, jsonReply, successReply } from './json.js';
import type { ControllerRoute } from './types.js';

const PONG: Reply = { status: 200, contentType: 'text/plain', body: Buffer.from('pong\r\n') };
/** Rspamd's controller port, added to neighbour hosts without one. */
const DEFAULT_CONTROLLER_PORT = 11334;

export const pingRoute: ControllerRoute = { path: '/ping', level: 'none', handler: () => PONG };

/** A /neighbours URL as Rspamd builds it: `http://` unless the host names a scheme, `:11334` unless it has a port, then the path. */
export function neighbourUrl(host: string, path = '/'): string {
  let url = host.includes('://') ? host : `http://${host}`;
  const colon = host.lastIndexOf(':');
  if (!(colon >= 0 && /\d/.test(host.charAt(colon + 1)))) url += `:${DEFAULT_CONTROLLER_PORT}`;
  return url + path;
}

export function healthRoutes(ctx: CoreContext): ControllerRoute[] {
  return [
    pingRoute,
    {
      path: '/healthy',
      level: 'normal',
      async handler() {
        const h = (await ctx.stats.view.snapshot()).health;
        // Rspamd's text, followed by which workers and why, so the probe's log says what to look at.
        const down = h.down ?? [];
        const n = h.down ? down.length : h.scanners - h.alive;
        if (n <= 0) return successReply();
        return controllerError(500, `${n} workers are not responding${down.length ? `: ${down.join('; ')}` : ''}`);
      },
    },
    {
      path: '/ready',
      level: 'normal',
      async handler() {
        const h = (await ctx.stats.view.snapshot()).health;
        return h.alive > 0 ? successReply() : controllerError(500, 'no healthy scanner workers are running');
      },
    },
    {
      path: '/neighbours',
      level: 'normal',
      handler() {
        const out: Record<string, { host: string; url: string }> = {};
        for (const [name, n] of Object.entries(ctx.config.workers.controller.neighbours)) out[name] = { host: n.host, url: neighbourUrl(n.host, n.path) };
        return jsonReply(out);
      },
    },
  ];
}
