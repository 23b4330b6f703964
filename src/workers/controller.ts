// The controller worker. In this issue it serves only /ping; the controller issue extends
// the route table (one file per endpoint family under workers/controller/).

import { MailsiftError } from '../http/errors.js';
import { replyForError } from '../http/reply.js';
import { createTransport, type TransportOptions } from '../http/server.js';
import type { Handler, Reply, Request } from '../http/types.js';
import type { Logger } from '../plugin-api/index.js';
import { listenTransport, type RunningWorker } from './listen.js';

export type { RunningWorker } from './listen.js';

export interface ControllerWorkerOptions {
  host: string;
  port: number;
  log: Logger;
  serverName?: string;
  /** Extra routes (lower-case path with leading slash → handler), added to the built-ins. */
  routes?: ReadonlyMap<string, Handler>;
  transport?: Omit<TransportOptions, 'serverName' | 'onUnknownError'>;
}

const PONG: Reply = { status: 200, contentType: 'text/plain', body: Buffer.from('pong\r\n') };

export function controllerRoutes(extra?: ReadonlyMap<string, Handler>): Map<string, Handler> {
  const routes = new Map<string, Handler>([['/ping', () => PONG]]);
  if (extra) for (const [k, v] of extra) routes.set(k.toLowerCase(), v);
  return routes;
}

export async function startControllerWorker(opts: ControllerWorkerOptions): Promise<RunningWorker> {
  const routes = controllerRoutes(opts.routes);
  const onUnknown = (err: unknown): void => opts.log.error('controller request failed', { err: String((err as Error)?.stack ?? err) });
  const handler = (req: Request): Promise<Reply> | Reply => {
    const h = routes.get(req.path.toLowerCase());
    if (!h) return replyForError(new MailsiftError('ERR_UNKNOWN_COMMAND', 'invalid command'));
    try {
      const r = h(req);
      return r instanceof Promise ? r.catch((err: unknown) => replyForError(err, onUnknown)) : r;
    } catch (err) {
      return replyForError(err, onUnknown);
    }
  };
  const transport = createTransport(handler, {
    ...opts.transport,
    ...(opts.serverName ? { serverName: opts.serverName } : {}),
    onUnknownError: onUnknown,
  });
  return listenTransport(transport, opts.host, opts.port);
}
