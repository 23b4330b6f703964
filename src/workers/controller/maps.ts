// /maps, /getmap, /savemap: the file sources of every declared map,
// their raw content, and atomic replacement. After a save this process reloads the map at
// once and the revision bump makes every other worker re-check its map files on its next poll.

import { readFile } from 'node:fs/promises';
import type { Request, Reply } from '../../http/types.js';
import { bumpRevision } from '../dynamic-config.js';
import { controllerError, jsonReply, successReply } from './json.js';
import type { ControllerContext, ControllerRoute } from './types.js';

/** A map file larger than this is not written: every worker holds the map in memory. */
export const MAX_SAVEMAP_BYTES = 32 * 1024 * 1024;
const MAX_MAP_ID = 0xffffffff;

/** The `Map` header as an id: undefined when absent, NaN when not a decimal u32. */
function mapIdHeader(req: Request): number | undefined {
  const raw = req.headers.first('map');
  if (raw === undefined) return undefined;
  const t = raw.trim();
  if (!/^\d{1,10}$/.test(t)) return NaN;
  const n = Number(t);
  return n <= MAX_MAP_ID ? n : NaN;
}

async function listMaps(ctx: ControllerContext): Promise<Reply> {
  const out: unknown[] = [];
  for (const s of await ctx.engine.maps().sources()) {
    if (s.type !== 'file' || (!s.editable && !s.loaded)) continue;
    out.push({ map: s.id, description: s.description, uri: s.uri, editable: s.editable });
  }
  return jsonReply(out);
}

async function getMap(ctx: ControllerContext, req: Request): Promise<Reply> {
  const id = mapIdHeader(req);
  if (id === undefined) return controllerError(400, 'Id header missing');
  if (Number.isNaN(id)) return controllerError(400, 'Invalid map id');
  const found = ctx.engine.maps().fileById(id);
  if (!found) return controllerError(404, 'Map not found');
  try {
    return { status: 200, contentType: 'text/plain', body: await readFile(found.path) };
  } catch (err) {
    // A map file that does not exist (yet) reads as empty, as in 3.4.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 200, contentType: 'text/plain', body: '' };
    ctx.log.warn('cannot read map file', { path: found.path, error: (err as Error).message });
    return controllerError(500, 'Map read error');
  }
}

async function saveMap(ctx: ControllerContext, req: Request): Promise<Reply> {
  if (req.body.length === 0) return controllerError(400, 'Empty body is not permitted');
  const id = mapIdHeader(req);
  if (id === undefined) return controllerError(400, 'Map id not specified');
  if (Number.isNaN(id)) return controllerError(400, 'Map id is invalid');
  if (req.body.length > MAX_SAVEMAP_BYTES) return controllerError(413, 'Map too large');
  const maps = ctx.engine.maps();
  const found = maps.fileById(id);
  if (!found) return controllerError(404, 'Map id not found');
  const editable = (await maps.sources()).some((s) => s.id === id && s.type === 'file' && s.editable);
  if (!editable) return controllerError(404, 'Cannot open map: Permission denied');
  try {
    await maps.writeFileMap(id, req.body);
  } catch (err) {
    ctx.log.warn('cannot save map', { path: found.path, error: (err as Error).message });
    return controllerError(500, (err as Error).message);
  }
  ctx.log.info('map saved', { path: found.path, bytes: req.body.length });
  try {
    await bumpRevision(ctx.stores.kv);
  } catch (err) {
    // The file is saved; workers still notice it at their next file check, only later.
    ctx.log.warn('map saved but workers could not be told; they will notice at their next file check', { error: (err as Error).message });
  }
  return successReply();
}

export function mapsRoutes(ctx: ControllerContext): ControllerRoute[] {
  return [
    { path: '/maps', level: 'normal', handler: () => listMaps(ctx) },
    { path: '/getmap', level: 'normal', handler: (req) => getMap(ctx, req) },
    { path: '/savemap', level: 'enable', handler: (req) => saveMap(ctx, req) },
  ];
}
