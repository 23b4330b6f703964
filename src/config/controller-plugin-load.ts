// Loading the plugin endpoint table: the default files in
// `<confdir>/controller/*.{js,mjs,ts}` (in name order), then `local.d/controller.{js,mjs,ts}`.
// A plugin defined again replaces the earlier definition whole; endpoints are never merged.
// A file that fails to load or a malformed definition is logged and skipped: the controller
// still starts, with what loaded.

import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { importPluginFile } from './plugin-import.js';
import type { Logger } from '../plugin-api/index.js';
import type { ControllerPluginApi, PluginEndpointDef, PluginFileExport, PluginTable } from './controller-plugin-types.js';

const PLUGIN_FILE_EXT = /\.(js|mjs|ts)$/;
/** Plugin and endpoint names become URL path segments. */
const NAME_RE = /^[A-Za-z0-9_.-]+$/;

/** One file's table, and whether it is the local layer (local.d) of the override rule. */
export interface PluginFileTable {
  file: string;
  local: boolean;
  table: PluginTable;
}

export interface LoadedPlugins {
  table: PluginTable;
  /** Which file each plugin came from (for logs and /plugins debugging). */
  origin: Record<string, string>;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then((s) => s.isFile(), () => false);
}

async function defaultFiles(confDir: string): Promise<string[]> {
  const dir = join(confDir, 'controller');
  try {
    return (await readdir(dir)).filter((f) => PLUGIN_FILE_EXT.test(f) && !f.endsWith('.d.ts')).sort().map((f) => join(dir, f));
  } catch {
    return [];
  }
}

async function localFiles(confDir: string): Promise<string[]> {
  const out: string[] = [];
  for (const ext of ['js', 'mjs', 'ts']) {
    const p = join(confDir, 'local.d', `controller.${ext}`);
    if (await exists(p)) out.push(p);
  }
  return out;
}

function validEndpoint(v: unknown): v is PluginEndpointDef {
  return typeof v === 'object' && v !== null && typeof (v as PluginEndpointDef).handler === 'function';
}

/** Keeps the well-formed part of a file's table; logs the rest. */
function checkTable(raw: unknown, file: string, log: Logger): PluginTable {
  const out: PluginTable = {};
  if (typeof raw !== 'object' || raw === null) {
    log.error('controller plugin file: `plugins` is not an object', { file });
    return out;
  }
  for (const [plugin, endpoints] of Object.entries(raw as Record<string, unknown>)) {
    if (!NAME_RE.test(plugin) || typeof endpoints !== 'object' || endpoints === null) {
      log.error('controller plugin skipped: bad name or not a table of endpoints', { file, plugin });
      continue;
    }
    const eps: Record<string, PluginEndpointDef> = {};
    for (const [name, def] of Object.entries(endpoints as Record<string, unknown>)) {
      if (!NAME_RE.test(name) || !validEndpoint(def)) {
        log.error('controller plugin endpoint skipped: bad name or no handler function', { file, plugin, endpoint: name });
        continue;
      }
      eps[name] = def;
    }
    out[plugin] = eps;
  }
  return out;
}

async function loadFile(file: string, api: ControllerPluginApi, log: Logger): Promise<PluginTable> {
  let mod: { plugins?: PluginFileExport };
  try {
    mod = (await importPluginFile(file)) as { plugins?: PluginFileExport };
  } catch (err) {
    log.error('cannot load controller plugin file', { file, error: (err as Error)?.message ?? String(err) });
    return {};
  }
  if (mod.plugins === undefined) {
    log.error('controller plugin file exports no `plugins`', { file });
    return {};
  }
  try {
    const raw = typeof mod.plugins === 'function' ? await mod.plugins(api) : mod.plugins;
    return checkTable(raw, file, log);
  } catch (err) {
    log.error('controller plugin file failed to build its table', { file, error: (err as Error).message });
    return {};
  }
}

/** Every plugin file's table in load order: defaults (name order), then local.d. */
export async function loadPluginFiles(confDir: string, api: ControllerPluginApi, log: Logger): Promise<PluginFileTable[]> {
  const out: PluginFileTable[] = [];
  for (const file of await defaultFiles(confDir)) out.push({ file, local: false, table: await loadFile(file, api, log) });
  for (const file of await localFiles(confDir)) out.push({ file, local: true, table: await loadFile(file, api, log) });
  return out;
}

export async function loadPluginTable(confDir: string, api: ControllerPluginApi, log: Logger): Promise<LoadedPlugins> {
  const table: PluginTable = {};
  const origin: Record<string, string> = {};
  for (const { file, table: fileTable } of await loadPluginFiles(confDir, api, log)) {
    for (const [plugin, eps] of Object.entries(fileTable)) {
      if (table[plugin]) log.info('controller plugin replaced', { plugin, by: basename(file), was: origin[plugin] });
      table[plugin] = eps;
      origin[plugin] = basename(file);
    }
  }
  return { table, origin };
}
