// /plugins and /plugins/{plugin}/{endpoint} (controller.md §4.24, §5.1; interface.md "Plugin
// endpoints"). Each endpoint is an exact route whose level is its `enable` flag. Parameters
// come from the query string and, for endpoints without need_task, an urlencoded body; a
// need_task endpoint gets the raw body as its task. A handler's last reply wins; a handler
// that throws or never replies is answered with a 500 naming the problem, never a crash.
//
// Differences from 3.4: a throwing handler is a 500 (3.4: 503), as interface.md "Errors"
// lists 500 for unexpected failures; parameter names arrive lower-cased (the transport
// lower-cases query names).

import { basename } from 'node:path';
import type { Request, Reply, RequestHeaders } from '../../http/types.js';
import { parseMessage } from '../../message/parse-message.js';
import { DEADLINE_PASSED, setOwn, withDeadline } from '../../plugin-api/index.js';
import type { Message } from '../../plugin-api/index.js';
import { controllerError, jsonReply } from './json.js';
import { loadPluginTable } from './plugin-load.js';
import { selectorsEndpoints } from './selectors.js';
import type { ControllerPluginApi, PluginConn, PluginEndpointDef, PluginParams, PluginTable, PluginTask } from './plugin-types.js';
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

function makeTask(body: Buffer, headers: RequestHeaders): PluginTask {
  let parsed: Message | undefined;
  return {
    content: body,
    headers,
    get_content: () => body,
    getContent: () => body,
    message: () => (parsed ??= parseMessage(body)),
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

export async function runEndpoint(def: PluginEndpointDef, req: Request, ctx: ControllerContext, where: string): Promise<Reply> {
  const needTask = def.need_task === true || def.needTask === true;
  if (needTask && req.body.length === 0) return controllerError(400, 'Empty body is not permitted');
  const { conn, reply } = makeConn();
  const task = makeTask(needTask ? req.body : Buffer.alloc(0), req.headers);
  try {
    const handled = Promise.resolve().then(() => def.handler(task, conn, paramsOf(req, needTask)));
    const result = await withDeadline(handled, PLUGIN_HANDLER_TIMEOUT_MS);
    if (result === DEADLINE_PASSED && !reply()) return controllerError(500, 'Cannot run callback: timed out');
  } catch (err) {
    ctx.log.error('controller plugin handler failed', { endpoint: where, error: (err as Error)?.message ?? String(err) });
    return controllerError(500, `Cannot run callback: ${(err as Error)?.message ?? String(err)}`);
  }
  return reply() ?? controllerError(500, 'Plugin endpoint sent no reply');
}

/** Routes for a loaded table, plus /plugins listing it. */
export function routesForTable(ctx: ControllerContext, table: PluginTable): ControllerRoute[] {
  const routes: ControllerRoute[] = [];
  const listing: Record<string, { version: number; paths: string[] }> = {};
  for (const [plugin, endpoints] of Object.entries(table)) {
    const paths: string[] = [];
    let version = 0;
    for (const [name, def] of Object.entries(endpoints)) {
      const path = `/plugins/${plugin}/${name}`;
      paths.push(path);
      if (typeof def.version === 'number' && Number.isFinite(def.version)) version = Math.max(version, Math.trunc(def.version));
      const needTask = def.need_task === true || def.needTask === true;
      routes.push({ path: path.toLowerCase(), level: def.enable === true ? 'enable' : 'normal', message: needTask, handler: (req) => runEndpoint(def, req, ctx, path) });
    }
    listing[plugin] = { version, paths };
  }
  routes.push({ path: '/plugins', level: 'normal', handler: () => jsonReply(listing) });
  return routes;
}

/** The plugin endpoint family: loads conf/controller/* and local.d/controller.* once. */
export async function pluginsRoutes(ctx: ControllerContext): Promise<ControllerRoute[]> {
  const { table } = await loadPluginTable(ctx.config.dir, pluginApi(ctx), ctx.log);
  // Built-in plugins come first; a plugin of the same name from the configuration replaces one whole.
  return routesForTable(ctx, { selectors: selectorsEndpoints(ctx), ...table });
}
