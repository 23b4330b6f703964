// The check behind `mailsift configtest` and a reload (SIGHUP, `mailsift reload`): load the
// configuration directory the way the server would, then build an engine with the built-in
// modules against the configured stores and maps, so what a schema cannot see (a module whose
// setup fails on its settings) is found too. A reload applies only a directory that passes.

import { join } from 'node:path';
import { isConfigError, formatIssues, sortIssues, type ConfigIssue } from '../config/errors.js';
import { displayPath, loadConfig, MAIN_FILE, type LoadedConfig } from '../config/load.js';
import { createEngine } from '../engine/index.js';
import { controllerPluginIssues } from '../config/plugin-files.js';
import { loadServerModules } from './server-modules.js';
import { createMapRegistry } from '../maps/index.js';
import type { Logger } from '../plugin-api/index.js';
import { openStores } from '../storage/index.js';

export interface ConfigCheck {
  /** The loaded configuration, when it has no problems. */
  cfg?: LoadedConfig;
  /** Every problem, one per line ('' when none). */
  errors: string;
  /** Modules switched off with their reason, stores not answering: worth saying, not wrong. */
  notes: string[];
}

/** The engine's reason for a module whose setup threw (src/engine/registry.ts). */
const SETUP_FAILED = 'setup failed: ';

/** Longest rendering of one logged field in a note; a map's rejected entries can be many. */
const MAX_NOTE_FIELD_CHARS = 200;

/** A logger whose warnings and errors become configtest notes (a Redis store not answering, map entries skipped). */
function noteLogger(notes: string[], prefix: string): Logger {
  const note = (msg: string, extra: Record<string, unknown> = {}) => {
    const fields: string[] = [];
    for (const [k, v] of Object.entries(extra)) {
      const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
      if (msg.includes(text)) continue; // already said (the Redis summary names its error)
      fields.push(`${k}=${text.length > MAX_NOTE_FIELD_CHARS ? `${text.slice(0, MAX_NOTE_FIELD_CHARS)}…` : text}`);
    }
    const text = `${prefix}: ${msg}${fields.length ? ` (${fields.join(' ')})` : ''}`;
    if (!notes.includes(text)) notes.push(text);
  };
  return { debug() {}, info() {}, warn: note, error: note };
}

/**
 * Loads the config and builds an engine with the built-in modules and the users' plugins.
 * Returns the errors ('' if none) and notes (modules switched off, with the reason each gave;
 * stores not answering).
 */
export async function checkConfig(dir: string): Promise<ConfigCheck> {
  try {
    // The users' plugins are loaded as serve loads them; one that does not load is an error here.
    const set = await loadServerModules(dir);
    const cfg = await loadConfig(dir, { modules: set.modules, runtime: true });
    // Plugin files that do not load are errors, but the engine is still built without them, so
    // a plugin whose setup throws is reported in the same run.
    const pluginIssues: ConfigIssue[] = [
      ...(await controllerPluginIssues(cfg.dir, displayPath)),
      ...set.failures.map((f) => ({ file: displayPath(f.file), path: '', expected: 'a plugin that loads', found: f.reason })),
    ];
    // Building the engine runs every module's setup: what a schema cannot see fails here. It gets
    // the same stores and maps a worker gets, so a module needing them is judged as it will run.
    const notes: string[] = [];
    const setupErrors: Array<{ msg: string; extra: Record<string, unknown> }> = [];
    const engineLog: Logger = { debug() {}, info() {}, warn() {}, error: (msg, extra = {}) => setupErrors.push({ msg, extra }) };
    const stores = await openStores(cfg, noteLogger(notes, 'stores'));
    // Map contents are data, not settings (a file may appear later, a URL may be down now): notes.
    const maps = createMapRegistry({ baseDir: cfg.dir, log: noteLogger(notes, 'maps') });
    let engine;
    try {
      engine = await createEngine(cfg.engine, set.modules, { log: engineLog, stores, maps, localModules: set.local });
    } finally {
      maps.close();
      await stores.close();
    }
    const mainFile = displayPath(join(cfg.dir, MAIN_FILE));
    const pluginFile = (module: string): string | undefined => {
      const f = set.files.get(module);
      return f === undefined ? undefined : displayPath(f);
    };
    const fileOf = (module: unknown): string => (typeof module === 'string' ? (cfg.moduleDocs[module]?.blame ?? pluginFile(module)) : undefined) ?? mainFile;
    // An error a module logs while setting up (a key file it cannot read, a rule it had to drop)
    // is a setting it cannot use: the server would start without that part.
    const issues: ConfigIssue[] = pluginIssues.concat(setupErrors.map(({ msg, extra: { module, ...rest } }) => {
      const detail = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
      return { file: fileOf(module), path: '', expected: `settings module ${String(module ?? '?')} can use`, found: detail ? `${msg} (${detail})` : msg };
    }));
    const logged = new Set(setupErrors.map((e) => e.extra.module));
    for (const [name, reason] of engine.disabledModules()) {
      // A setup that threw is a broken module config; other reasons are deliberate (config, redis).
      if (!reason.startsWith(SETUP_FAILED)) notes.push(`module ${name} is off: ${reason}`);
      else if (!logged.has(name)) issues.push({ file: fileOf(name), path: '', expected: `settings module ${name} can use`, found: reason.slice(SETUP_FAILED.length) });
    }
    const errors = formatIssues(sortIssues(issues));
    return { ...(errors ? {} : { cfg }), errors, notes };
  } catch (err) {
    return { errors: isConfigError(err) ? formatIssues(err.issues) : ((err as Error)?.message ?? String(err)), notes: [] };
  }
}
