// The controller worker: method filter and OPTIONS/CORS, path
// normalisation, one case-insensitive exact table composed from the endpoint families, then
// static files, then 404. Authentication runs once here, by each route's `level`; every reply
// gets the controller's framing (Connection: close, Cache-Control, CORS with neighbours, gzip).

import { gzipSync } from 'node:zlib';
import { classifyError } from '../../http/errors.js';
import { PeerNetworks } from '../../http/peer-networks.js';
import { createTransport, DEFAULT_MAX_BODY_BYTES, type TransportOptions } from '../../http/server.js';
import type { Handler, Reply, Request } from '../../http/types.js';
import { createScanObserver } from '../../observability/scan-observer.js';
import { createScanLogger } from '../../observability/scan-log.js';
import { StatsHub } from '../../observability/stats-hub.js';
import { StatsRecorder } from '../../observability/stats-recorder.js';
import type { Logger } from '../../plugin-api/index.js';
import { loadMessageSource, namesMessageSource, type MessageSourcePolicy } from '../../protocol/message-source.js';
import { listenTransport, type ListenOptions, type RunningWorker } from '../listen.js';
import { trackRequests, type ScanBoard } from '../scan-board.js';
import { authConfigOf, Authenticator, openAccessWarning } from './auth.js';
import { configIdOf, VERSION, type CoreContext } from './core-context.js';
import { errorsRoutes } from './errors.js';
import { graphRoutes } from './graph.js';
import { healthRoutes, pingRoute } from './health.js';
import { healthDetailsRoutes } from './health-details.js';
import { historyRoutes } from './history.js';
import { controllerError, isUncompressed } from './json.js';
import { storeErrorOf } from './store-outage.js';
import { metricsRoutes } from './metrics.js';
import { scanRoutes } from './scan.js';
import { statRoutes } from './stat.js';
import { configEditRoutes } from './config-edit.js';
import { mapsRoutes } from './maps.js';
import { pluginsRoutes } from './plugins.js';
import { builtinWebuiDir, serveStatic } from './static.js';
import { whatifRoutes } from './whatif.js';
import type { AuthLevel, ControllerContext, ControllerRoute, ControllerSession } from './types.js';

export type { RunningWorker } from '../listen.js';

/**
 * The endpoint families. To add one: one import line above and one entry here. A family
 * receives the shared context (CoreContext is a ControllerContext with its optional parts set).
 */
const FAMILIES: ReadonlyArray<(ctx: CoreContext) => ControllerRoute[] | Promise<ControllerRoute[]>> = [
  configEditRoutes,
  mapsRoutes,
  statRoutes,
  metricsRoutes,
  errorsRoutes,
  historyRoutes,
  graphRoutes,
  healthRoutes,
  healthDetailsRoutes,
  scanRoutes,
  whatifRoutes,
  // Last: a plugin endpoint on a path the controller serves itself is refused, not the controller's.
  pluginsRoutes,
];

/** Static files (static.ts), tried for paths no route matched. */
type StaticHandler = (req: Request, normalisedPath: string) => Promise<Reply | undefined> | Reply | undefined;
/** `static_dir` when configured (Rspamd's web UI, say), else mailsift's own UI when it is built. */
const staticHandlerFor = (ctx: ControllerContext): StaticHandler | undefined => {
  const dir = ctx.config.workers.controller.staticDir ?? builtinWebuiDir();
  return dir ? (req) => serveStatic(dir, ctx.log, req) : undefined;
};

/** The preflight reply's headers; Rspamd sends Allow-Headers last, after the router-wide ones. */
const OPTIONS_ALLOW_METHODS: [string, string] = ['Access-Control-Allow-Methods', 'POST, GET, OPTIONS'];
const OPTIONS_ALLOW_HEADERS: [string, string] = ['Access-Control-Allow-Headers', 'Content-Type,Password,Map,Weight,Flag'];

/** As Rspamd's controller normalises a path: collapse `//`, drop `.`, `..` pops (never above root); a trailing slash is kept. */
export function normalisePath(raw: string): string {
  if (raw === '') return '';
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // A broken escape is matched as written (and so finds nothing).
  }
  const out: string[] = [];
  const segs = decoded.split('/');
  for (const seg of segs) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  const last = segs[segs.length - 1];
  const trailing = out.length > 0 && (last === '' || last === '.' || last === '..');
  return '/' + out.join('/') + (trailing ? '/' : '');
}

function textReply(status: number, reason: string, body: string): Reply {
  return { status, reason, contentType: 'text/plain', body };
}

/** Anything a handler throws becomes ERR(status, text). */
function errorToReply(err: unknown, log: Logger): Reply {
  const e = err as { code?: unknown; status?: unknown; message?: unknown };
  if (e && e.code === 'ERR_CONTROLLER' && typeof e.status === 'number') return controllerError(e.status, String(e.message));
  // A store error no family turned into its own reply (a plugin handler's, say): still a 503/500
  // that says a store is at fault, logged once per outage period.
  const store = storeErrorOf(log, '', err);
  if (store) return controllerError(store.status, store.message);
  const shape = classifyError(err);
  if (shape.known) return controllerError(shape.status, shape.message);
  log.error(`controller handler failed: ${String((err as Error)?.message ?? err)}`, { err: String((err as Error)?.stack ?? err) });
  return controllerError(500, 'Internal error');
}

function compressible(reply: Reply): boolean {
  const ct = reply.contentType ?? '';
  return (ct.startsWith('application/json') || ct.startsWith('application/openmetrics-text')) && !isUncompressed(reply);
}

/** A route as the table holds it: what authentication it gets (tests enumerate every route). */
export interface RouteInfo {
  path: string;
  level: AuthLevel;
}

export interface ControllerHandler {
  handler: Handler;
  /** Every exact route served, in registration order. */
  routes: readonly RouteInfo[];
  /** The finished context (with stats) — what the families were built with. */
  context?: CoreContext;
  close(): Promise<void>;
}

export interface ControllerHandlerOptions {
  log: Logger;
  /** Full controller: every family. Without it only /ping and `routes` are served. */
  context?: ControllerContext;
  /** Extra routes (lower-case path → handler), served without authentication (tests, legacy). */
  routes?: ReadonlyMap<string, Handler>;
  /** Extra families (tests, or callers composing their own). */
  families?: ReadonlyArray<(ctx: CoreContext) => ControllerRoute[]>;
}

/** Fills the context's optional parts; a process-local stats hub when none was given. */
function completeContext(ctx: ControllerContext): { core: CoreContext; ownHub?: StatsHub } {
  let ownHub: StatsHub | undefined;
  let stats = ctx.stats;
  if (!stats) {
    ownHub = new StatsHub({ kv: ctx.stores.kv, history: ctx.stores.history, errorElts: ctx.config.workers.controller.errorElts, log: ctx.log });
    stats = { view: ownHub, recorder: new StatsRecorder(ownHub) };
  }
  const core: CoreContext = {
    ...ctx,
    stats,
    startedAt: ctx.startedAt ?? Date.now(),
    version: VERSION,
    configId: configIdOf(ctx.config),
    observeScan: createScanObserver({ recorder: stats.recorder, log: ctx.log, scanLine: createScanLogger(ctx.log, ctx.config.logging.format, ctx.config.logging.level) }),
  };
  return { core, ...(ownHub ? { ownHub } : {}) };
}

export async function createControllerHandler(opts: ControllerHandlerOptions): Promise<ControllerHandler> {
  const log = opts.log;
  const table = new Map<string, ControllerRoute>();
  const add = (r: ControllerRoute): void => {
    const key = r.path.toLowerCase();
    if (table.has(key) && r.plugin !== undefined) {
      log.error('plugin endpoint refused: the controller serves this path itself', { plugin: r.plugin, path: key });
      return;
    }
    if (table.has(key)) throw new Error(`controller route ${key} registered twice`);
    table.set(key, r);
  };
  let core: CoreContext | undefined;
  let ownHub: StatsHub | undefined;
  let auth: Authenticator | undefined;
  let staticFiles: StaticHandler | undefined;
  let sources: MessageSourcePolicy | undefined;
  if (opts.context) {
    ({ core, ownHub } = completeContext(opts.context));
    if (ownHub) await ownHub.start();
    const c = opts.context.config.workers.controller;
    const authConfig = authConfigOf(c);
    auth = new Authenticator(authConfig, log);
    const open = openAccessWarning(authConfig);
    if (open) log.warn(open, { host: c.host, port: c.port });
    for (const family of [...FAMILIES, ...(opts.families ?? [])]) for (const r of await family(core)) add(r);
    staticFiles = staticHandlerFor?.(core);
    sources = { peers: new PeerNetworks(c.fileInputPeers), maxMessage: opts.context.config.workers.normal.maxMessage, peersKey: 'workers.controller.file_input_peers' };
  } else {
    add(pingRoute);
  }
  if (opts.routes) for (const [path, h] of opts.routes) add({ path, level: 'none', handler: (req) => h(req) });

  const cors = core !== undefined && Object.keys(core.config.workers.controller.neighbours).length > 0;
  const recorder = core?.stats.recorder;

  const route = async (req: Request): Promise<Reply> => {
    const method = req.method.toUpperCase();
    if (method === 'OPTIONS') return { status: 200, contentType: 'text/plain', body: '', headers: [OPTIONS_ALLOW_METHODS] };
    if (method !== 'GET' && method !== 'POST') return textReply(500, 'Invalid method', '');
    const path = normalisePath(req.path);
    if (path === '') return textReply(404, 'Empty path requested', 'Empty path requested');
    const r = table.get(path.toLowerCase());
    if (!r) {
      const file = staticFiles ? await staticFiles(req, path) : undefined;
      return file ?? textReply(404, 'Not found', 'Not found');
    }
    let session: ControllerSession = { peer: req.peer.address, readOnly: true, via: 'none' };
    if (r.level !== 'none' && auth) {
      const outcome = auth.check(req, r.level);
      if (!outcome.ok) return controllerError(outcome.status, outcome.message);
      session = outcome.session;
    }
    try {
      // A message named by Shm/File replaces the body before the handler sees the request.
      if (r.message && sources && namesMessageSource(req, 'v2')) req = (await loadMessageSource(req, sources))?.req ?? req;
      return await r.handler(req, session);
    } catch (err) {
      return errorToReply(err, log);
    }
  };

  const finish = (req: Request, original: Reply): Reply => {
    // Handlers may return shared constant replies: frame a copy. One request per connection.
    const reply: Reply = { ...original, close: true };
    const headers = reply.headers ? [...reply.headers] : [];
    if (cors) headers.push(['Access-Control-Allow-Origin', '*']);
    headers.push(['Cache-Control', 'no-store']);
    if (req.method.toUpperCase() === 'OPTIONS') headers.push(OPTIONS_ALLOW_HEADERS);
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
    if (body.length > 0 && compressible(original) && (req.headers.first('accept-encoding') ?? '').includes('gzip')) {
      reply.body = gzipSync(body);
      headers.push(['Content-Encoding', 'gzip']);
    }
    reply.headers = headers;
    return reply;
  };

  const handler: Handler = async (req) => {
    let reply: Reply;
    try {
      reply = await route(req);
    } catch (err) {
      reply = errorToReply(err, log);
    }
    recorder?.controlConnection();
    return finish(req, reply);
  };

  return {
    handler,
    routes: [...table.values()].map((r) => ({ path: r.path, level: r.level })),
    ...(core ? { context: core } : {}),
    async close() {
      recorder?.flush();
      if (ownHub) await ownHub.stop();
    },
  };
}

export interface ControllerWorkerOptions {
  host: string;
  port: number;
  log: Logger;
  serverName?: string;
  /** The full controller context; without it only /ping (and `routes`) are served. */
  context?: ControllerContext;
  /** Extra routes (lower-case path with leading slash → handler), served without authentication. */
  routes?: ReadonlyMap<string, Handler>;
  families?: ReadonlyArray<(ctx: CoreContext) => ControllerRoute[]>;
  transport?: Omit<TransportOptions, 'serverName' | 'onUnknownError'>;
  /** HTTPS listener and whether to keep the plain one (src/workers/listen.ts). */
  listen?: ListenOptions;
  /** Requests in flight are written down here for the watchdog (src/workers/scan-board.ts). */
  board?: ScanBoard;
}

export interface RunningController extends RunningWorker {
  routes: readonly RouteInfo[];
}

export async function startControllerWorker(opts: ControllerWorkerOptions): Promise<RunningController> {
  const ch = await createControllerHandler({
    log: opts.log,
    ...(opts.context ? { context: opts.context } : {}),
    ...(opts.routes ? { routes: opts.routes } : {}),
    ...(opts.families ? { families: opts.families } : {}),
  });
  const maxBody = opts.context?.config.workers.normal.maxMessage ?? DEFAULT_MAX_BODY_BYTES;
  const transport = createTransport(opts.board ? trackRequests(ch.handler, opts.board) : ch.handler, {
    maxBodyBytes: maxBody,
    ...opts.transport,
    ...(opts.serverName ? { serverName: opts.serverName } : {}),
    onUnknownError: (err) => opts.log.error('controller request failed', { err: String((err as Error)?.stack ?? err) }),
  });
  const running = await listenTransport(transport, opts.host, opts.port, opts.listen);
  return {
    port: running.port,
    routes: ch.routes,
    ...(running.tlsPort !== undefined ? { tlsPort: running.tlsPort } : {}),
    ...(running.reloadTls ? { reloadTls: running.reloadTls } : {}),
    async close() {
      await running.close();
      await ch.close();
    },
  };
}
