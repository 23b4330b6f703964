// Users' plugins (docs/plugins.md): `local.d/plugins/*.{ts,js,mjs}` and the files or
// directories named by `plugins.paths`, loaded at start with the API the built-in modules use.
// A file exports `plugin`: a module definition, or a function of the plugin API returning one
// (or a list), so a plugin needs no import of mailsift at run time. What the loader can check
// of the types (a name, a setup function, a symbols table, a config schema) it checks; a file
// that does not compile, throws at its top level or exports the wrong shape is a failure with
// its reason, and the others load as if it were not there.

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import * as pluginApi from '../plugin-api/index.js';
import type { ModuleDefinition } from '../plugin-api/index.js';
import { importPluginFile } from './plugin-import.js';

/** Plugin files read at most (directory listings are the administrator's, but a glob can match a lot). */
export const MAX_PLUGIN_FILES = 256;
const PLUGIN_FILE = /\.(ts|js|mjs)$/;
/** A module name is a config file name (local.d/<name>.yaml) and a log field. */
const MODULE_NAME_RE = /^[A-Za-z0-9_-]+$/;

/**
 * What a plugin's `plugin` function receives: the runtime values of src/plugin-api, and zod
 * (`z`) for its config schema, since a compiled plugin cannot import packages itself.
 */
const api = Object.freeze({ ...pluginApi, z });
export type PluginApi = typeof api;

export interface PluginFailure {
  file: string;
  reason: string;
}

// Modules carry different config types; the engine validates each with the module's own schema.
export type AnyModule = ModuleDefinition<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- heterogeneous config types

export interface UserPlugins {
  modules: AnyModule[];
  /** Module name → the file it came from. */
  files: Map<string, string>;
  failures: PluginFailure[];
}

async function pluginFilesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => PLUGIN_FILE.test(f) && !f.endsWith('.d.ts')).sort().map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** local.d/plugins/ first, then each configured path (a directory's files in name order). */
export async function pluginFiles(confDir: string, paths: readonly string[]): Promise<{ files: string[]; failures: PluginFailure[] }> {
  const files = await pluginFilesIn(join(confDir, 'local.d', 'plugins'));
  const failures: PluginFailure[] = [];
  for (const p of paths) {
    const st = await stat(p).catch(() => undefined);
    if (st?.isDirectory()) files.push(...(await pluginFilesIn(p)));
    else if (st?.isFile() && PLUGIN_FILE.test(p)) files.push(p);
    else failures.push({ file: p, reason: st ? 'plugins.paths: not a .ts, .js or .mjs file nor a directory' : 'plugins.paths: no such file or directory' });
  }
  const unique = [...new Set(files)];
  if (unique.length > MAX_PLUGIN_FILES) {
    for (const f of unique.slice(MAX_PLUGIN_FILES)) failures.push({ file: f, reason: `more than ${MAX_PLUGIN_FILES} plugin files: not loaded` });
  }
  return { files: unique.slice(0, MAX_PLUGIN_FILES), failures };
}

/** The definition's problems as far as they show at run time; undefined when it looks like a module. */
export function definitionProblem(def: unknown): string | undefined {
  if (typeof def !== 'object' || def === null) return 'the plugin is not an object (expected defineModule({ name, setup, ... }))';
  const d = def as Record<string, unknown>;
  if (typeof d.name !== 'string' || !MODULE_NAME_RE.test(d.name)) return `name: expected letters, digits, "_" or "-", found ${JSON.stringify(d.name)}`;
  if (typeof d.setup !== 'function') return `${d.name}: setup is not a function`;
  if (d.config !== undefined && typeof (d.config as { safeParse?: unknown })?.safeParse !== 'function') return `${d.name}: config is not a schema (a zod type with safeParse)`;
  if (d.symbols !== undefined) {
    if (typeof d.symbols !== 'object' || d.symbols === null || Array.isArray(d.symbols)) return `${d.name}: symbols is not a table of symbol name → { score, group, description }`;
    for (const [sym, sd] of Object.entries(d.symbols)) {
      if (typeof sd !== 'object' || sd === null) return `${d.name}: symbols.${sym} is not an object`;
      const s = sd as Record<string, unknown>;
      if (s.score !== undefined && (typeof s.score !== 'number' || !Number.isFinite(s.score))) return `${d.name}: symbols.${sym}.score is not a number`;
      for (const k of ['group', 'description'] as const) if (s[k] !== undefined && typeof s[k] !== 'string') return `${d.name}: symbols.${sym}.${k} is not a string`;
    }
  }
  return undefined;
}

async function definitionsOf(file: string): Promise<unknown[]> {
  const ns = await importPluginFile(file);
  const exported = ns.plugin;
  if (exported === undefined) throw new Error('the file exports no `plugin` (export const plugin = defineModule({...}), or export function plugin(api) { ... })');
  const value: unknown = typeof exported === 'function' ? await (exported as (a: PluginApi) => unknown)(api) : exported;
  return Array.isArray(value) ? value : [value];
}

/** Loads every plugin file; never throws for a plugin's fault. */
export async function loadUserPlugins(confDir: string, paths: readonly string[]): Promise<UserPlugins> {
  const { files, failures } = await pluginFiles(confDir, paths);
  const out: UserPlugins = { modules: [], files: new Map(), failures };
  for (const file of files) {
    let defs: unknown[];
    try {
      defs = await definitionsOf(file);
    } catch (err) {
      out.failures.push({ file, reason: (err as Error)?.message ?? String(err) });
      continue;
    }
    for (const def of defs) {
      const problem = definitionProblem(def);
      const name = (def as { name?: string })?.name;
      if (problem) out.failures.push({ file, reason: problem });
      else if (out.files.has(name!)) out.failures.push({ file, reason: `plugin ${name} is already defined by ${out.files.get(name!)}` });
      else {
        out.modules.push(def as AnyModule);
        out.files.set(name!, file);
      }
    }
  }
  return out;
}

/**
 * The modules a server runs: the built-ins, a user's plugin of the same name in the built-in's
 * place (it replaces the whole module), new names after them in load order.
 */
export function composeModules(builtins: readonly AnyModule[], user: readonly AnyModule[]): AnyModule[] {
  const byName = new Map(user.map((m) => [m.name, m]));
  const out = builtins.map((m) => byName.get(m.name) ?? m);
  const builtinNames = new Set(builtins.map((m) => m.name));
  for (const m of user) if (!builtinNames.has(m.name)) out.push(m);
  return out;
}
