// /plugins and the plugin endpoints (Rspamd's plugin
// endpoints, /plugins/<plugin>/<path>). Endpoints come from the modules (ctx.endpoint), built-in and users' plugins, and
// from the controller plugin files (conf/controller/*, local.d/controller.*). The override rule:
// sources are applied in the order built-in modules, default files, users' plugins, local files,
// and a source defining a plugin name replaces every endpoint an earlier one gave that name.
// Each endpoint is an exact route whose level is its `enable` flag. Parameters come from the
// query string and, for endpoints without need_task, an urlencoded body; a need_task endpoint
// gets the body as its task's message. A handler's last reply wins; a handler that throws or
// never replies is answered without a crash: a coded error (LEARN_*) with its status from the
// one error table, anything else 500 naming the problem.
//
// Differences from 3.4: a throwing handler is a 500 (3.4: 503), as mailsift's
// error table gives 500 for unexpected failures; parameter names arrive lower-cased (the transport
// lower-cases query names).

import { basename } from 'node:path';
import { classifyError } from '../../http/errors.js';
import type { Request, Reply } from '../../http/types.js';
import { DEADLINE_PASSED, endpointPath, setOwn, withDeadline } from '../../plugin-api/index.js';
import { makeEndpointTask } from './endpoint-task.js';
import { controllerError, jsonReply } from './json.js';
import { loadPluginFiles } from '../../config/controller-plugin-load.js';
import { logStoreOutage, storeErrorOf } from './store-outage.js';
import type { ControllerPluginApi, PluginConn, PluginEndpointDef, PluginParams, PluginTable } from '../../config/controller-plugin-types.js';
import { selectorsEndpoints } from './selectors.js';
import type { ControllerContext, ControllerRoute } from './types.js';

/** A handler still running after this is answered with an error (its work may go on). */
export const PLUGIN_HANDLER_TIMEOUT_MS = 30_000;

export function pluginApi(ctx: ControllerContext): ControllerPluginApi {
  return {
    log: ctx.log,
    maps: {
      list: () => ctx.engine.maps().named().map(({ uri, map }) => ({ uri, alias: basename(uri), map })),
    },
  };
}

function makeConn(): { conn: PluginConn; reply(): Reply | undefined } {
  let last: Reply | undefined;
  const sendUcl = (value: unknown): void => {
    last = jsonReply(value === undefined ? null : value);
  };
  const sendString = (text: string): void => {
    last = { status: 200, contentType: 'application/json', body: String(text) };
  };
  const sendError = (status: number, message: string): void => {
    const code = Number.isInteger(status) && status >= 200 && status <= 599 ? status : 500;
    last = controllerError(code, String(message));
  };
  return {
    conn: { send_ucl: sendUcl, send_string: sendString, send_error: sendError, sendUcl, sendString, sendError },
    reply: () => last,
  };
}

function paramsOf(req: Request, needTask: boolean): PluginParams {
  // Parameter names are the client's: own properties even for `__proto__` (records.ts), on an
  // ordinary object because the handler is a user's plugin.
  const params: PluginParams = {};
  const ct = req.headers.first('content-type') ?? '';
  if (!needTask && req.body.length > 0 && ct.toLowerCase().includes('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(req.body.toString('utf8'))) setOwn(params, k, v);
  }
  for (const [k, v] of req.query) setOwn(params, k, v); // the query string wins over the body
  return params;
}

const needsTask = (def: PluginEndpointDef): boolean => def.need_task === true || def.needTask === true;

export async function runEndpoint(def: PluginEndpointDef, req: Request, ctx: ControllerContext, where: string): Promise<Reply> {
  const needTask = needsTask(def);
  if (needTask && req.body.length === 0) return controllerError(400, 'Empty body is not permitted');
  const { conn, reply } = makeConn();
  const task = makeEndpointTask(ctx, req, needTask);
  try {
    const handled = Promise.resolve().then(() => def.handler(task, conn, paramsOf(req, needTask)));
    const result = await withDeadline(handled, PLUGIN_HANDLER_TIMEOUT_MS);
    if (result === DEADLINE_PASSED && !reply()) return controllerError(500, 'Cannot run callback: timed out');
  } catch (err) {
    // A store that is down: 503 naming it, the outage logged once per period (store-outage.ts).
    const store = storeErrorOf(ctx.log, String((err as { store?: unknown })?.store ?? ''), err);
    if (store) return controllerError(store.status, store.message);
    const code = (err as { code?: unknown })?.code;
    if (code === 'LEARN_STORE_UNAVAILABLE' || code === 'LEARN_STORE_FAILED') logStoreOutage(ctx.log, 'statistics', err);
    // A coded refusal (a learn already done, a store down) keeps Rspamd's status for it.
    const shape = classifyError(err);
    if (shape.known) return controllerError(shape.status, shape.message);
    ctx.log.error('controller plugin handler failed', { endpoint: where, error: (err as Error)?.message ?? String(err) });
    return controllerError(500, `Cannot run callback: ${(err as Error)?.message ?? String(err)}`);
  }
  return reply() ?? controllerError(500, 'Plugin endpoint sent no reply');
}

/** One source's endpoints by plugin name, with where they came from (for the log). */
export interface EndpointSource {
  origin: string;
  table: PluginTable;
}

/** Applies the override rule: a later source's plugin replaces an earlier one's whole. */
export function mergeSources(sources: readonly EndpointSource[], ctx: ControllerContext): PluginTable {
  const table: PluginTable = {};
  const origin: Record<string, string> = {};
  for (const src of sources) {
    for (const [plugin, eps] of Object.entries(src.table)) {
      if (table[plugin]) ctx.log.info('plugin endpoints replaced', { plugin, by: src.origin, was: origin[plugin] });
      table[plugin] = eps;
      origin[plugin] = src.origin;
    }
  }
  return table;
}

/** The modules' endpoints as sources: built-in ones first, then users' plugins, in module order. */
function moduleSources(ctx: ControllerContext, local: boolean): EndpointSource[] {
  const byModule = new Map<string, PluginTable>();
  for (const ep of ctx.engine.endpoints()) {
    if (ctx.engine.isLocalModule(ep.module) !== local) continue;
    let t = byModule.get(ep.module);
    if (!t) byModule.set(ep.module, (t = {}));
    (t[ep.plugin] ??= {})[ep.name] = ep.def;
  }
  return [...byModule].map(([module, table]) => ({ origin: `module ${module}`, table }));
}

/** The modules' endpoints alone, merged (what a controller without plugin files serves). */
export function modulesTable(ctx: ControllerContext): PluginTable {
  return mergeSources([...moduleSources(ctx, false), ...moduleSources(ctx, true)], ctx);
}

/** Routes for a merged table, plus /plugins listing it. */
export function routesForTable(ctx: ControllerContext, table: PluginTable): ControllerRoute[] {
  const routes: ControllerRoute[] = [];
  const listing: Record<string, { version: number; paths: string[] }> = {};
  for (const [plugin, endpoints] of Object.entries(table)) {
    const paths: string[] = [];
    let version = 0;
    for (const [name, def] of Object.entries(endpoints)) {
      const path = endpointPath(plugin, name);
      paths.push(path);
      if (typeof def.version === 'number' && Number.isFinite(def.version)) version = Math.max(version, Math.trunc(def.version));
      routes.push({ path: path.toLowerCase(), level: def.enable === true ? 'enable' : 'normal', message: needsTask(def), plugin, handler: (req) => runEndpoint(def, req, ctx, path) });
    }
    listing[plugin] = { version, paths };
  }
  routes.push({ path: '/plugins', level: 'normal', handler: () => jsonReply(listing) });
  return routes;
}

/** The plugin endpoint family: the modules' endpoints and the plugin files, loaded once. */
export async function pluginsRoutes(ctx: ControllerContext): Promise<ControllerRoute[]> {
  const files = await loadPluginFiles(ctx.config.dir, pluginApi(ctx), ctx.log);
  const fileSources = (local: boolean) => files.filter((f) => f.local === local).map((f) => ({ origin: basename(f.file), table: f.table }));
  const table = mergeSources([{ origin: 'built-in selectors plugin', table: { selectors: selectorsEndpoints(ctx) } }, ...moduleSources(ctx, false), ...fileSources(false), ...moduleSources(ctx, true), ...fileSources(true)], ctx);
  return routesForTable(ctx, table);
}
